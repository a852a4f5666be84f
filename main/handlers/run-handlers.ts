import { ApiError } from '../../core/api/channels';
import { exportMemory } from '../memory/export-memory';
import type { MonitorSessions } from '../memory/monitor-sessions';
import { SnapshotImportError, openMemoryTimelines } from '../memory/snapshot-client';
import type { HeldResults } from '../services/held-results';
import type { RunOutcome } from '../services/run-service';
import { prepareSanitizedRerun } from '../services/sanitize-plan-service';
import { fullPathToWrite } from '../services/write-path';
import type { Workbench } from '../workbench';
import { type HandlerGroup, userFile } from './handler-support';

/** Runs and what they leave: a plan's run, its buffers' pages, the runners, monitoring, memory timelines. */
export function runHandlers(
  workbench: Workbench,
  monitors: MonitorSessions,
  held: HeldResults,
): HandlerGroup<'run.plan' | 'run.page' | 'runners.status' | 'monitor.start' | 'monitor.stop' | 'memory.open' | 'memory.export'> {
  // A diagnosis that offers a re-run under a tool (Re-run under compute-sanitizer): that tool's runner starts now.
  const prepare = (plan: unknown, outcome: RunOutcome) => {
    const tool = outcome.diagnosis.sanitizer?.tool;
    if (tool && workbench.sanitizerSpares) void prepareSanitizedRerun(workbench.sanitizerSpares, plan, tool).catch(() => undefined);
  };
  return {
    'run.plan': async ({ plan, timeoutMs, planPath, determinismRuns, sampleIntervalMs }, { signal, emit }) => {
      const outcome = await workbench.runPlan(plan, {
        timeoutMs: timeoutMs ?? 30_000,
        planPath: planPath ?? null,
        ...(determinismRuns !== undefined ? { determinismRuns } : {}),
        ...(sampleIntervalMs !== undefined ? { sampleIntervalMs } : {}),
        // The UI has checked the plan against the chosen device or profile; the host checks it against the device it runs on.
        validate: true,
        signal,
        onPhase: (phase) => emit({ kind: 'phase', phase }),
      });
      prepare(plan, outcome);
      return held.holdOutcome(outcome);
    },
    'run.page': async (request) => {
      try {
        return await workbench.pool.page(request);
      } catch (error) {
        throw new ApiError((error as Error).message, 'PAGE_GONE');
      }
    },
    'runners.status': async () => workbench.pool.status(),
    'monitor.start': (request, context) => monitors.start(request, context),
    'monitor.stop': async ({ id }) => ({ stopped: monitors.stop(id) }),
    'memory.open': async ({ path }, { signal, emit }) => {
      try {
        const opened = await openMemoryTimelines(path, { signal: signal as AbortSignal, onPhase: (phase) => emit({ kind: 'phase', phase }) });
        return { ...opened, timelineIds: held.holdTimelines(opened.timelines) };
      } catch (error) {
        if (error instanceof SnapshotImportError)
          throw new ApiError(
            error.kind === 'refused' ? `${path} was refused: ${error.message}` : error.message,
            `MEMORY_${error.kind.toUpperCase().replace(/-/g, '_')}`,
          );
        throw error;
      }
    },
    'memory.export': ({ path, ...request }) => userFile(() => exportMemory(request, fullPathToWrite(path), held)),
  };
}
