import { stat } from 'node:fs/promises';

import { ApiError, type CallContext, type ChannelEvent, type ChannelRequest, type ChannelResponse } from '../../core/api/channels';
import { CommandNotFoundError } from '../memory/monitored-command';
import { diagnoseProgram } from './diagnose-service';
import { DiagnosisFileError, openDiagnosisFile, snapshotKeepPath } from './diagnose-files';

type Handler<C extends 'diagnose.program' | 'diagnose.open'> = (
  request: ChannelRequest<C>,
  context: CallContext<ChannelEvent<C>>,
) => Promise<ChannelResponse<C>>;

const PROGRAMS_OFF =
  'This workbench does not run programs named from the browser: it was started without --allow-programs. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench diagnose -- <command>` in a terminal on the GPU machine.';

/** The diagnosis's channels, registered by feature: the same service the CLI's `diagnose` calls. */
export function diagnoseHandlers(runsPrograms: boolean): { 'diagnose.program': Handler<'diagnose.program'>; 'diagnose.open': Handler<'diagnose.open'> } {
  return {
    'diagnose.program': async ({ command, cwd, env, thorough, budgetMs }, { signal, emit }) => {
      if (!runsPrograms) throw new ApiError(PROGRAMS_OFF, 'PROGRAMS_OFF');
      const folder = await stat(cwd).catch(() => null);
      if (!folder?.isDirectory()) throw new ApiError(`The working folder ${cwd} does not exist (or is not a folder).`, 'FILE');
      try {
        return await diagnoseProgram({
          argv: command,
          cwd,
          env: env ?? {},
          thorough: thorough ?? false,
          budgetMs: budgetMs ?? 600_000,
          signal,
          onEvent: (event) => emit(event),
          keepSnapshot: await snapshotKeepPath(),
        });
      } catch (error) {
        if (error instanceof CommandNotFoundError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
    'diagnose.open': async ({ path }) => {
      try {
        return await openDiagnosisFile(path);
      } catch (error) {
        if (error instanceof DiagnosisFileError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
  };
}
