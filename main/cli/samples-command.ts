import type { Command } from 'commander';

import type { ExpectedDiagnosis } from '../../core/samples/sample-manifest';
import { listGallery } from '../services/sample-service';
import { fromUserFile, print } from './cli-support';

/** `gpu-workbench samples`: the failure gallery, each sample with the diagnosis it must produce. */
export function registerSamplesCommand(program: Command): void {
  program
    .command('samples')
    .description('List the failure gallery: one sample per failure class, each with a broken and a fixed variant and the diagnosis it must produce.')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const gallery = await fromUserFile(() => listGallery());
      print(
        !!opts.json,
        gallery.map((s) => ({ name: s.name, dir: s.dir, ...s.manifest })),
        () =>
          [
            ...gallery.map((s) => `${s.name.padEnd(26)} ${s.manifest.title}\n${' '.repeat(27)}expect: ${describeExpected(s.manifest.expect.broken)}`),
            '',
            'Run one with: gpu-workbench run --sample NAME   (add --fixed for the corrected variant)',
          ].join('\n'),
      );
    });
}

function describeExpected(e: ExpectedDiagnosis): string {
  return [e.kind, e.error, e.step !== undefined ? `step ${e.step + 1}` : null, e.kernel, e.buffer ? `buffer ${e.buffer}` : null].filter(Boolean).join(', ');
}
