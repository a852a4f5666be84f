import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';

import { ApiError, type CallContext, type ChannelEvent, type ChannelRequest, type ChannelResponse } from '../../core/api/channels';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { BoundedCache } from '../../core/bounded-cache';
import { fullPathToWrite } from '../services/write-path';
import { exportDiagnosisBundle } from '../bundle/diagnosis-bundle';
import { BundleCancelledError, BundleWriteError } from '../bundle/write-bundle';
import { CommandNotFoundError } from '../memory/monitored-command';
import { diagnoseProgram } from './diagnose-service';
import { DiagnosisFileError, openDiagnosisFile, snapshotKeepPath } from './diagnose-files';
import { withoutSpare, type SanitizerSpares } from '../services/sanitized-runner';

type DiagnoseChannel = 'diagnose.program' | 'diagnose.open' | 'diagnose.export';
type Handler<C extends DiagnoseChannel> = (request: ChannelRequest<C>, context: CallContext<ChannelEvent<C>>) => Promise<ChannelResponse<C>>;

/** Reports the host holds for export, by id: the newest, bounded by their size (outputs can be megabytes). */
const HELD_BYTES = 256 * 2 ** 20;

/** What a held report costs, at most: its text twice over (a parsed report takes about what its JSON does, and a string two bytes a character). */
export const heldBytes = (report: DiagnosisReport): number => 2 * JSON.stringify(report).length + 64 * 1024;

const PROGRAMS_OFF =
  'This workbench does not run programs named from the browser: it was started without --allow-programs. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench diagnose -- <command>` in a terminal on the GPU machine.';

/** The diagnosis's channels, registered by feature: the same service the CLI's `diagnose` calls. */
/**
 * `spares`: the host's runner waiting under compute-sanitizer for a plan's re-run, stopped before a program is
 * diagnosed (its context and the tool's memory would count in the program's picture of the device).
 */
export function diagnoseHandlers(runsPrograms: boolean, spares: SanitizerSpares | null = null): { [C in DiagnoseChannel]: Handler<C> } {
  // Each report with whether it ran here: only then does this machine's doctor belong beside it in a bundle.
  // Measured whole, not by its outputs: an opened report's other fields (command lines, findings) are as large as a file
  // from outside makes them, and reports held by their outputs alone once let repeated opens exhaust the host's heap.
  const held = new BoundedCache<string, { report: DiagnosisReport; ranHere: boolean }>(HELD_BYTES, ({ report }) => heldBytes(report));
  const hold = (report: DiagnosisReport, ranHere: boolean): DiagnosisReport => {
    const id = randomUUID();
    held.set(id, { report, ranHere });
    return { ...report, id };
  };
  return {
    'diagnose.program': async ({ command, cwd, env, thorough, budgetMs }, { signal, emit }) => {
      if (!runsPrograms) throw new ApiError(PROGRAMS_OFF, 'PROGRAMS_OFF');
      const folder = await stat(cwd).catch(() => null);
      if (!folder?.isDirectory()) throw new ApiError(`The working folder ${cwd} does not exist (or is not a folder).`, 'FILE');
      try {
        const keepSnapshot = await snapshotKeepPath();
        const report = await withoutSpare(spares, () =>
          diagnoseProgram({
            argv: command,
            cwd,
            env: env ?? {},
            thorough: thorough ?? false,
            budgetMs: budgetMs ?? 600_000,
            signal,
            onEvent: (event) => emit(event),
            keepSnapshot,
          }),
        );
        return hold(report, true);
      } catch (error) {
        if (error instanceof CommandNotFoundError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
    'diagnose.open': async ({ path }) => {
      try {
        return hold(await openDiagnosisFile(path), false);
      } catch (error) {
        if (error instanceof DiagnosisFileError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
    'diagnose.export': async ({ id, path, redact }, { signal }) => {
      const entry = held.get(id);
      if (!entry)
        throw new ApiError('That diagnosis is no longer held by the workbench (it keeps the newest ones): open or run it again, then export.', 'FILE');
      try {
        return await exportDiagnosisBundle(entry.report, fullPathToWrite(path), { redact: redact ?? true, signal, withDoctor: entry.ranHere });
      } catch (error) {
        if (error instanceof BundleWriteError || error instanceof BundleCancelledError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
  };
}
