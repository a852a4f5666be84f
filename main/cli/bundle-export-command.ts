import { hostname, homedir, userInfo } from 'node:os';
import { resolve } from 'node:path';

import type { Command } from 'commander';

import { makeRedactor, NO_REDACTION, type Redactor } from '../../core/bundle/redact';
import { shareableFacts } from '../../core/doctor/facts';
import { formatBytes } from '../../core/format';
import { describeIssues, launchPlanSchema } from '../../core/plan/plan-schema';
import { buildBundleEntries, BundleWriteError, writeBundle } from '../bundle/write-bundle';
import { appVersion } from '../paths';
import { runDoctor } from '../doctor/gather';
import { PlanFileError, readPlanFile, readRunOutcome, readTextFile } from '../services/plan-files';
import { loadSample } from '../services/sample-service';
import { EXIT } from './exit-codes';

interface ExportOptions {
  result: string;
  plan?: string;
  sample?: string;
  fixed?: boolean;
  sanitizer?: string;
  devices?: string;
  out?: string;
  sources: boolean;
  redact: boolean;
  preview?: boolean;
  json?: boolean;
  doctorTimeout: number;
}

class ExportError extends Error {}

/**
 * The doctor's report with the facts it judged, or what stopped it: a wedged GPU must not hang an export. Each
 * driver and NVML query has half the limit (main/doctor/time-limit.ts); the whole has the limit, as a backstop.
 * Redacted bundles leave process command lines out (core/doctor/facts.ts, shareableFacts).
 */
export async function doctorReport(limitMs: number, redacted = true): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<unknown>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true, limitMs, detail: `the doctor did not finish in ${limitMs} ms (a wedged GPU or driver?)` }), limitMs);
    timer.unref();
  });
  const report = runDoctor({ limitMs: Math.max(100, limitMs / 2) })
    .then(({ checks, facts }) => {
      const kept = redacted ? shareableFacts(facts) : facts;
      return { checks, discovery: kept.discovery, facts: kept };
    })
    .catch((error: unknown) => ({ failed: true, detail: error instanceof Error ? error.message : String(error) }));
  try {
    return await Promise.race([report, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** The names this machine would leak: the user's, the host's, the home folder. */
export function hostRedactor(env: Record<string, string | undefined> = process.env): Redactor {
  const user = (() => {
    try {
      return userInfo().username;
    } catch {
      return '';
    }
  })();
  return makeRedactor({
    userNames: [env['USER'], env['LOGNAME'], user].filter((v): v is string => !!v),
    hostNames: [env['HOSTNAME'], hostname()].filter((v): v is string => !!v),
    homeDirs: [env['HOME'], homedir()].filter((v): v is string => !!v),
  });
}

async function readJson(path: string, what: string): Promise<unknown> {
  const text = await readTextFile(resolve(path), what);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ExportError(`${what} ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

async function exportBundle(opts: ExportOptions): Promise<number> {
  if (opts.plan && opts.sample) throw new ExportError('Give one of --plan or --sample.');
  if (opts.fixed && !opts.sample) throw new ExportError('--fixed goes with --sample.');
  if (!opts.plan && !opts.sample) throw new ExportError('Name the plan the run came from: --plan plan.json or --sample NAME [--fixed].');
  const outcome = await readRunOutcome(resolve(opts.result));
  let rawPlan: unknown;
  let origin: string;
  if (opts.plan) {
    rawPlan = (await readPlanFile(resolve(opts.plan))).plan;
    origin = `plan ${opts.plan}`;
  } else {
    const variant = opts.fixed ? 'fixed' : 'broken';
    rawPlan = (await loadSample(opts.sample!, variant)).plan;
    origin = `sample ${opts.sample} (${variant})`;
  }
  const parsed = launchPlanSchema.safeParse(rawPlan);
  if (!parsed.success) throw new ExportError(`The plan is not valid:\n${describeIssues(parsed.error)}`);
  const sanitizer = opts.sanitizer ? await readJson(opts.sanitizer, 'Sanitizer report') : undefined;
  if (sanitizer !== undefined && (typeof sanitizer !== 'object' || sanitizer === null || !('verdict' in sanitizer)))
    throw new ExportError(`${opts.sanitizer} is not a sanitizer report (\`gpu-workbench sanitize --json\` writes one)`);
  const devices = opts.devices ? await readJson(opts.devices, 'Devices file') : undefined;
  const redactor = opts.redact ? hostRedactor() : NO_REDACTION;
  const built = buildBundleEntries({
    plan: parsed.data,
    outcome,
    origin,
    workbenchVersion: appVersion(),
    createdAt: new Date().toISOString(),
    includeSources: opts.sources,
    redactor,
    env: process.env,
    doctor: await doctorReport(opts.doctorTimeout * 1000, opts.redact),
    ...(devices !== undefined ? { devices } : {}),
    ...(sanitizer !== undefined ? { sanitizer } : {}),
  });
  const files = [...built.entries].map(([name, bytes]) => ({ name, bytes: bytes.byteLength }));
  if (opts.preview) {
    const preview = { files, environment: built.environment, redacted: redactor.enabled, sources: opts.sources };
    console.log(
      opts.json
        ? JSON.stringify(preview, null, 2)
        : [
            `A bundle would hold ${files.length} files (nothing written):`,
            ...files.map((f) => `  ${f.name}  ${formatBytes(f.bytes)}`),
            `Environment (${redactor.enabled ? 'redacted: user and host names, home paths and GPU serials hidden' : 'NOT redacted'}):`,
            ...(Object.keys(built.environment).length
              ? Object.entries(built.environment).map(([k, v]) => `  ${k}=${v}`)
              : ['  (none of the allow-listed variables is set)']),
            ...(opts.sources ? [] : ['Sources left out (--no-sources): the plan keeps its shape, kernels without their text; no repro/.']),
          ].join('\n'),
    );
    return EXIT.ok;
  }
  const out = resolve(opts.out ?? `gpu-workbench-bundle-${new Date().toISOString().replace(/[:.]/g, '-')}.zip`);
  const written = await writeBundle(out, built.entries);
  console.log(
    opts.json
      ? JSON.stringify({ path: written.path, bytes: written.bytes, manifest: built.manifest, files }, null, 2)
      : `✓ Wrote ${written.path} (${formatBytes(written.bytes)}, ${files.length} files${redactor.enabled ? ', redacted' : ', NOT redacted'}). Open it with \`gpu-workbench bundle inspect\`.`,
  );
  return EXIT.ok;
}

/** `gpu-workbench bundle export`, added to the `bundle` command (kept out of cli.ts so merges stay easy). */
export function registerBundleExport(bundle: Command): void {
  bundle
    .command('export')
    .description(
      'Write one zip with a run and what explains it: manifest, plan, result and diagnosis, sources, doctor report, environment (redacted), sanitizer report, and repro/ (a standalone repro.cu). Written atomically.',
    )
    .requiredOption('--result <run.json>', 'the run result (`gpu-workbench run --json > run.json`)')
    .option('--plan <plan.json>', 'the plan that run came from')
    .option('--sample <name>', 'or the gallery sample it came from')
    .option('--fixed', "with --sample: the sample's fixed variant")
    .option('--sanitizer <report.json>', 'a sanitizer report to include (`gpu-workbench sanitize --json`)')
    .option('--devices <devices.json>', 'a device profile or devices JSON to include')
    .option('--out <file.zip>', 'where to write it (default: gpu-workbench-bundle-<time>.zip here)')
    .option('--no-sources', 'leave kernel sources (and repro/) out')
    .option('--no-redact', 'keep user and host names, home paths and GPU serials as they are')
    .option('--preview', 'print exactly the files and the environment that would go in; write nothing')
    .option('--doctor-timeout <s>', 'seconds the doctor may take', (v: string) => Math.max(1, Math.min(600, Number.parseInt(v, 10) || 10)), 10)
    .option('--json', 'machine-readable output')
    .action(async (opts: ExportOptions) => {
      try {
        process.exitCode = await exportBundle(opts);
      } catch (error) {
        if (error instanceof ExportError || error instanceof PlanFileError || error instanceof BundleWriteError) {
          console.error(`✗ ${error.message}`);
          process.exitCode = error instanceof BundleWriteError ? EXIT.failed : EXIT.usage;
          return;
        }
        throw error;
      }
    });
}
