/**
 * One reader's mutation fuzz, in a process of its own (started by test/integration/reader-fuzz.test.ts under a heap
 * and a memory limit, so a fatal V8 error fails the test instead of ending the runner):
 *   node dist/test/fuzz/fuzz-child.js <bundle|pickle|xml|result> <seed> <cases> <work folder> [first case]
 * Prints its report as one line of JSON. A case's input is made from (seed, reader, index) alone; an unexpected
 * error's input is kept in the work folder as <reader>-<index>.bin, to read again with the reader.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { bundleTarget } from './bundle-target';
import { caseRng } from './mutate';
import { pickleTarget } from './pickle-target';
import { resultTarget } from './result-target';
import type { FuzzTarget } from './target';
import { xmlTarget } from './xml-target';

const TARGETS: Record<string, () => FuzzTarget> = { bundle: bundleTarget, pickle: pickleTarget, xml: xmlTarget, result: resultTarget };

export interface FuzzReport {
  reader: string;
  seed: number;
  cases: number;
  /** Cases by what came of them: 'accepted', 'refused: <kind>', … */
  outcomes: Record<string, number>;
  unexpected: { case: number; error: string; bytes: number; input: string }[];
  unexpectedCount: number;
  maxCaseMs: number;
  slowestCase: number;
  totalMs: number;
  /** This process's peak resident memory (VmHWM), in bytes. */
  peakRss: number;
}

const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const described = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}\n${error.stack?.split('\n').slice(1, 6).join('\n') ?? ''}` : String(error);

async function main(): Promise<void> {
  const [reader = '', seedText = '25', casesText = '10000', work = '.', firstText = '0'] = process.argv.slice(2);
  const make = TARGETS[reader];
  if (!make) throw new Error(`usage: fuzz-child <${Object.keys(TARGETS).join('|')}> <seed> <cases> <work folder> [first case]`);
  const target = make();
  await target.load();
  const seed = Number(seedText);
  const first = Number(firstText);
  const report: FuzzReport = {
    reader,
    seed,
    cases: 0,
    outcomes: {},
    unexpected: [],
    unexpectedCount: 0,
    maxCaseMs: 0,
    slowestCase: -1,
    totalMs: 0,
    peakRss: 0,
  };
  let current = -1;
  let currentBytes: Uint8Array = new Uint8Array();
  const unexpected = (error: unknown) => {
    report.unexpectedCount++;
    if (report.unexpected.length >= 20) return;
    const input = join(work, `${reader}-${current}.bin`);
    writeFileSync(input, currentBytes);
    report.unexpected.push({ case: current, error: described(error).slice(0, 2000), bytes: currentBytes.length, input });
  };
  // A stray error after a case's answer (an 'error' event nobody listens to) would end a reader: counted against its case.
  process.on('uncaughtException', unexpected);
  process.on('unhandledRejection', unexpected);
  const path = join(work, target.file);
  const started = performance.now();
  for (let i = first; i < first + Number(casesText); i++) {
    const rng = caseRng(seed, reader, i);
    current = i;
    currentBytes = target.mutant(rng);
    writeFileSync(path, currentBytes);
    const caseStarted = performance.now();
    try {
      const outcome = await target.read(path, currentBytes, rng);
      report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
    } catch (error) {
      unexpected(error);
    }
    const ms = performance.now() - caseStarted;
    if (ms > report.maxCaseMs) [report.maxCaseMs, report.slowestCase] = [ms, i];
    report.cases++;
    if (report.cases % 1000 === 0) process.stderr.write(`${reader}: ${report.cases} cases, ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  report.totalMs = performance.now() - started;
  report.peakRss = peakRss();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${described(error)}\n`);
  process.exit(1);
});
