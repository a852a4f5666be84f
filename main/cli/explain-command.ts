import { readFileSync } from 'node:fs';

import type { Command } from 'commander';

import { explainPaste } from '../../core/explain/explain-paste';
import { print, UsageError } from './cli-support';
import { EXIT } from './exit-codes';
import { renderExplanation } from './render-explanation';

/** `gpu-workbench explain`: a pasted CUDA error explained. */
export function registerExplainCommand(program: Command): void {
  program
    .command('explain')
    .description('Explain a pasted CUDA error: driver or runtime API, PyTorch or CuPy, or compute-sanitizer output.')
    .argument('<text>', 'the error text, or - to read it from standard input')
    .option('--json', 'machine-readable output')
    .action(async (text: string, opts: { json?: boolean }) => {
      const input = text === '-' ? readFileSync(0, 'utf8') : text;
      if (!input.trim()) throw new UsageError('Nothing to explain: give the error text, or - and pipe it in.');
      const explanation = explainPaste(input);
      print(!!opts.json, explanation, () => renderExplanation(explanation));
      process.exitCode = explanation.recognized ? EXIT.ok : EXIT.failed;
    });
}
