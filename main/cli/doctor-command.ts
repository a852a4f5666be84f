/**
 * `gpu-workbench doctor [--json] [--facts-out FILE] [--facts FILE] [--timeout S]`: gathers what the machine says
 * (libraries, the driver, NVML, /proc, the toolkits installed), each part under a time limit, and judges it with
 * the rules of core/doctor/. --facts-out keeps the facts (to record a GPU machine's as a fixture); --facts judges
 * facts recorded elsewhere (a colleague's, a bundle's doctor.json) without gathering anything here.
 */
import { resolve } from 'node:path';

import { InvalidArgumentError, type Command } from 'commander';

import { BUNDLE_JSON_LIMITS } from '../../core/bundle/bundle-limits';
import { JsonRefusedError, parseJsonWithin } from '../../core/json-limits';
import { DOCTOR_AREAS, type DoctorCheck } from '../../core/discovery';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import { AREA_TITLES, summarizeChecks } from '../../core/doctor/report-text';
import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { DEFAULT_COLLECTOR_LIMIT_MS, gatherDoctorFacts } from '../doctor/gather';
import { PlanFileError, readTextFile, writeJsonFile } from '../services/plan-files';
import { EXIT } from './exit-codes';

class DoctorInputError extends Error {}

const ICON: Record<DoctorCheck['status'], string> = { ok: '✓', warn: '!', fail: '✗', 'not-run': '–' };

export function renderDoctor(checks: readonly DoctorCheck[], origin: string | null): string {
  const lines: string[] = origin ? [origin, ''] : [];
  for (const area of DOCTOR_AREAS) {
    const here = checks.filter((c) => (c.area ?? 'environment') === area);
    if (!here.length) continue;
    lines.push(AREA_TITLES[area]);
    for (const c of here) {
      lines.push(`  ${ICON[c.status]} ${c.title}: ${c.detail}`);
      if (c.remedy) lines.push(`      → ${c.remedy}`);
      for (const s of c.searched ?? []) lines.push(`        searched ${s}`);
    }
  }
  lines.push('', `${summarizeChecks(checks)} (✓ passed, ! warning, ✗ problem, – could not be checked)`);
  return lines.join('\n');
}

/** Facts from a file: a facts file (`--facts-out`), or a doctor report that holds them (`doctor --json`, a bundle's doctor.json). */
async function readFacts(path: string): Promise<DoctorFacts> {
  let value: unknown;
  try {
    value = parseJsonWithin(Buffer.from(await readTextFile(resolve(path), 'Doctor facts', BUNDLE_JSON_LIMITS.doctor.bytes)), BUNDLE_JSON_LIMITS.doctor, path);
  } catch (error) {
    if (error instanceof PlanFileError || error instanceof JsonRefusedError) throw new DoctorInputError(error.message);
    throw error;
  }
  if (value && typeof value === 'object' && !('schema' in value) && 'facts' in value) value = (value as { facts: unknown }).facts;
  const parsed = parseDoctorFacts(value);
  if (!parsed.ok)
    throw new DoctorInputError(
      `${path} does not hold doctor facts (\`gpu-workbench doctor --facts-out FILE\` writes them; a report from before they were kept has none):\n  ${parsed.problems.join('\n  ')}`,
    );
  return parsed.facts;
}

interface DoctorOptions {
  json?: boolean;
  facts?: string;
  factsOut?: string;
  timeout: number;
}

async function doctor(opts: DoctorOptions): Promise<number> {
  if (opts.facts && opts.factsOut) throw new DoctorInputError('--facts reads recorded facts and --facts-out records this machine’s: give one.');
  const facts = opts.facts ? await readFacts(opts.facts) : await gatherDoctorFacts({ limitMs: opts.timeout * 1000 });
  const checks = evaluateDoctor(facts);
  if (opts.factsOut) await writeJsonFile(resolve(opts.factsOut), facts);
  const origin = opts.facts ? `Facts recorded ${facts.gatheredAt}${facts.note ? ` — ${facts.note}` : ''} (${opts.facts}), not this machine's:` : null;
  console.log(opts.json ? JSON.stringify({ checks, discovery: facts.discovery, facts }, null, 2) : renderDoctor(checks, origin));
  if (opts.factsOut && !opts.json) console.error(`Facts written to ${resolve(opts.factsOut)}.`);
  if (!checks.some((c) => c.status === 'fail')) return EXIT.ok;
  return facts.discovery.cuda.loaded ? EXIT.failed : EXIT.unavailable;
}

const seconds = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0.1 || n > 600) throw new InvalidArgumentError('--timeout is seconds, from 0.1 to 600.');
  return n;
};

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('Check the driver, compilers, environment, GPU state (modes, memory errors, clocks) and the processes on the GPU, and say what to fix.')
    .option('--json', 'machine-readable output: the checks and the facts they were judged on')
    .option('--facts-out <file>', "also write the facts gathered here (JSON) — to record a machine's state")
    .option('--facts <file>', 'judge facts recorded elsewhere (a --facts-out file, or a doctor.json) instead of this machine')
    .option(
      '--timeout <seconds>',
      'how long each driver or NVML query may take before it is reported as not answering',
      seconds,
      DEFAULT_COLLECTOR_LIMIT_MS / 1000,
    )
    .action(async (opts: DoctorOptions) => {
      try {
        process.exitCode = await doctor(opts);
      } catch (error) {
        if (error instanceof DoctorInputError || error instanceof PlanFileError) {
          console.error(`✗ ${error.message}`);
          process.exitCode = EXIT.usage;
          return;
        }
        throw error;
      }
    });
}
