import { resolve } from 'node:path';

import type { Command } from 'commander';

import { formatBytes } from '../../core/format';
import { print } from './cli-support';
import { registerBundleExport } from './bundle-export-command';
import { EXIT } from './exit-codes';

/** `gpu-workbench bundle export|inspect`: diagnostic bundles written, and opened read-only. */
export function registerBundleCommand(program: Command): void {
  const bundle = program.command('bundle').description('Diagnostic bundles: one zip that carries a run, its sources and what was seen.');
  registerBundleExport(bundle);
  bundle
    .command('inspect')
    .description('Open a bundle read-only and print what it holds; nothing in it runs. Exit 64 when it is refused.')
    .argument('<file>', 'the bundle (.zip)')
    .option('--json', 'machine-readable output')
    .action(async (file: string, opts: { json?: boolean }) => {
      const { BundleRefusedError } = await import('../bundle/read-bundle');
      const { openBundleInReader } = await import('../readers/open-in-reader');
      try {
        // Read as the app reads it: every entry for what its role says, so what inspect accepts the app opens.
        const view = await openBundleInReader(resolve(file));
        const { manifest, entries, notes } = view;
        const verdict = view.outcome?.diagnosis.headline ?? view.diagnosis?.verdict.sentence ?? null;
        print(!!opts.json, { manifest, entries, recorded: view.recorded, diagnosis: verdict, notes }, () =>
          [
            `Bundle ${resolve(file)}: schema ${manifest.schema}, made ${manifest.createdAt} by GPU Workbench ${manifest.workbench.version}${manifest.redacted ? ', redacted' : ''}`,
            `  recorded on ${view.recorded.device ?? 'an unknown device'}${verdict ? `: ${verdict}` : ''}`,
            ...(view.diagnosis ? [`  a program's diagnosis: ${view.diagnosis.program.argv.join(' ')}`] : []),
            `  plan: ${manifest.contents.plan ?? '—'}   result: ${manifest.contents.result ?? '—'}   sources: ${manifest.contents.sources.join(', ') || '—'}`,
            ...entries.map((e) => `  ${e.name}  ${formatBytes(e.bytes)}`),
            ...(notes.length ? ['It lacks:', ...notes.map((n) => `  - ${n}`)] : []),
          ].join('\n'),
        );
      } catch (error) {
        if (!(error instanceof BundleRefusedError)) throw error;
        console.error(`✗ ${error.message}`);
        process.exitCode = EXIT.usage;
      }
    });
}
