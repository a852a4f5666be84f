import { stat } from 'node:fs/promises';
import { ApiError } from '../../core/api/channels';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { SANITIZER_BUSY } from '../../core/sanitizer/sanitizer-busy';
import { importSanitizerReportInReader } from '../readers/open-in-reader';
import { checkPlans } from '../services/check-service';
import { CheckConfigError, planDataTarget } from '../services/check-targets';
import { sanitizePlan } from '../services/sanitize-plan-service';
import { withoutSpare } from '../services/sanitized-runner';
import { SanitizerBusyError, type SanitizerGate } from '../services/sanitizer-gate';
import type { HeldResults } from '../services/held-results';
import type { PathPolicy } from '../services/workspace-paths';
import { SanitizerImportError } from '../tools/sanitize-import';
import { SanitizerUnavailableError, sanitizeProgram } from '../tools/sanitize-program';
import type { Workbench } from '../workbench';
import { type HandlerGroup, planInWords } from './handler-support';

/**
 * compute-sanitizer: a plan, Check everything (its four tools at once), a program, a report opened. One run under the
 * tool for this host, whichever window asks: a second is refused in words. Each report answered is held (bundle.export names it).
 */
export function sanitizeHandlers(
  workbench: Workbench,
  options: { runsPrograms: boolean; paths: PathPolicy; sanitizer: SanitizerGate; held: HeldResults },
): HandlerGroup<'sanitize.plan' | 'check.plan' | 'sanitize.program' | 'sanitize.open'> {
  return {
    'sanitize.plan': async ({ plan, planPath, tool, timeoutMs }, { signal, emit }) => {
      try {
        const { outcome, report } = await options.sanitizer.exclusive({ tool: tool as SanitizerTool, what: planInWords(plan, planPath ?? null) }, () =>
          sanitizePlan(
            { plan, planPath: planPath ?? null, tool: tool as SanitizerTool, timeoutMs, signal, onEvent: (event) => emit(event) },
            workbench.compiler,
            workbench.sanitizerSpares,
          ),
        );
        return { report: options.held.holdReport(report), run: outcome };
      } catch (error) {
        if (error instanceof SanitizerUnavailableError) throw new ApiError(error.message, 'NO_SANITIZER');
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        throw error;
      }
    },
    'check.plan': async ({ plan, planPath, label, timeoutMs }, { signal, emit }) => {
      try {
        // Its four tools run at once: it is the host's one run under compute-sanitizer while it lasts.
        const what = `${planInWords(plan, planPath ?? null)} (Check everything, with its four tools at once; its Cancel is in the Check tab)`;
        // Its tools need the device: a runner waiting under one tool for the next plan re-run is not kept beside them.
        return await options.sanitizer.exclusive({ tool: 'memcheck', what }, () =>
          withoutSpare(workbench.sanitizerSpares, async () => {
            // The settings beside the plan are read as any file a request reaches: inside serve's workspace only.
            const target = await planDataTarget(plan, planPath ?? null, label ?? null, timeoutMs ?? null, (p) => options.paths.read(p));
            return checkPlans([target], workbench, { signal, onEvent: emit });
          }),
        );
      } catch (error) {
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        if (error instanceof CheckConfigError) throw new ApiError(error.message, 'CHECK_CONFIG');
        throw error;
      }
    },
    'sanitize.program': async ({ command, cwd, env, tool, timeoutMs }, { signal, emit }) => {
      if (!options.runsPrograms)
        throw new ApiError(
          'This workbench does not run programs named from the browser: it was started without --allow-programs. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench sanitize -- <command>` in a terminal on the GPU machine.',
          'PROGRAMS_OFF',
        );
      const folder = await stat(cwd).catch(() => null);
      if (!folder?.isDirectory()) throw new ApiError(`The working folder ${cwd} does not exist (or is not a folder).`, 'FILE');
      try {
        // A program is not a plan: the runner waiting under the tool for the next plan re-run gives it the device.
        const report = await options.sanitizer.exclusive({ tool: tool as SanitizerTool, what: command.join(' ') }, () =>
          withoutSpare(workbench.sanitizerSpares, () =>
            sanitizeProgram({
              tool: tool as SanitizerTool,
              command,
              cwd,
              env: env ?? {},
              timeoutMs,
              signal,
              onFindings: (count) => emit({ kind: 'findings', count }),
            }),
          ),
        );
        return options.held.holdReport(report);
      } catch (error) {
        if (error instanceof SanitizerUnavailableError) throw new ApiError(error.message, 'NO_SANITIZER');
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        throw error;
      }
    },
    'sanitize.open': async ({ xmlPath, textPath, tool }, { signal }) => {
      try {
        return options.held.holdReport(await importSanitizerReportInReader(xmlPath, textPath ?? null, (tool as SanitizerTool | null) ?? null, { signal }));
      } catch (error) {
        if (error instanceof SanitizerImportError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
  };
}
