import { basename, resolve } from 'node:path';

import type { Command } from 'commander';

import { BUNDLE_JSON_LIMITS, type JsonRole } from '../../core/bundle/bundle-limits';
import { parseJsonWithin } from '../../core/json-limits';
import { MAX_RAW_SANITIZER_BYTES } from '../../core/bundle/bundle-limits';
import { profilesFromDevicesEntry } from '../../core/bundle/bundle-validation';
import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { formatBytes } from '../../core/format';
import { SANITIZER_TOOLS, type SanitizerTool } from '../../core/sanitizer/findings';
import { streamRegularFile } from '../services/safe-fs';
import { PlanFileError, readPlanFile, readTextFile } from '../services/plan-files';
import { importSanitizerReportInReader, readRunOutcomeInReader } from '../readers/open-in-reader';
import { loadSample } from '../services/sample-service';
import { SanitizerImportError } from '../tools/sanitize-import';
import { BundleInputError, checkSamples, checkSanitizerReport, exportBundle, gatherBundle, previewOf, type BundleRequest } from '../bundle/bundle-service';
import { BundleCancelledError, BundleWriteError } from '../bundle/write-bundle';
import { cliWorkbench } from './cli-support';
import { EXIT } from './exit-codes';

interface ExportOptions {
  result: string;
  plan?: string;
  sample?: string;
  fixed?: boolean;
  sanitizer?: string;
  sanitizerXml?: string;
  sanitizerText?: string;
  sanitizerTool?: string;
  samples?: string;
  devices?: string;
  out?: string;
  sources: boolean;
  redact: boolean;
  ptx: boolean;
  preview?: boolean;
  json?: boolean;
  doctorTimeout: number;
  doctorFacts?: string;
}

class ExportError extends Error {}

/** A JSON file for one of the bundle's roles, held to that role's limits (what the bundle's reader will accept). */
async function readJson(path: string, what: string, role: JsonRole): Promise<unknown> {
  const limits = BUNDLE_JSON_LIMITS[role];
  const text = await readTextFile(resolve(path), what, limits.bytes);
  try {
    return parseJsonWithin(Buffer.from(text), limits, `${what} ${path}`);
  } catch (error) {
    throw new ExportError((error as Error).message);
  }
}

/** A file the sanitizer wrote, as a bundle keeps it: whole when small, else its start and its end. */
export async function readRawSanitizerFile(path: string, max = MAX_RAW_SANITIZER_BYTES): Promise<string> {
  let head = '';
  const { size } = await streamRegularFile(path, Math.floor(max / 2), (t) => (head += t));
  if (size <= Math.floor(max / 2)) return head;
  let tail = '';
  const tailBytes = Math.min(size - Math.floor(max / 2), Math.floor(max / 2));
  await streamRegularFile(path, tailBytes, (t) => (tail += t), { fromEnd: true });
  const left = size - Math.floor(max / 2) - tailBytes;
  return left > 0 ? `${head}\n… ${left} bytes left out by GPU Workbench …\n${tail}` : head + tail;
}

/** The sanitizer report a bundle gets: `sanitize --json`'s (a plan's run prints { report, run }), or one read from the tool's own files. */
async function sanitizerFor(opts: ExportOptions): Promise<Pick<BundleRequest, 'sanitizer' | 'sanitizerXml'>> {
  const xml = opts.sanitizerXml
    ? [
        {
          name: basename(opts.sanitizerXml),
          text: await readRawSanitizerFile(resolve(opts.sanitizerXml)).catch((error: unknown) => {
            throw new ExportError(`The sanitizer report ${opts.sanitizerXml} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
          }),
        },
      ]
    : [];
  if (opts.sanitizer) {
    const value = (await readJson(opts.sanitizer, 'Sanitizer report', 'sanitizer')) as Record<string, unknown> | null;
    const report = value && typeof value === 'object' && 'report' in value && 'run' in value ? value['report'] : value;
    if (!report || typeof report !== 'object' || !('verdict' in report))
      throw new ExportError(`${opts.sanitizer} is not a sanitizer report (\`gpu-workbench sanitize --json\` writes one)`);
    return { sanitizer: checkSanitizerReport(report), sanitizerXml: xml };
  }
  if (opts.sanitizerXml) {
    const tool = (opts.sanitizerTool ?? null) as SanitizerTool | null;
    const { rawXml: _kept, ...report } = await importSanitizerReportInReader(
      resolve(opts.sanitizerXml),
      opts.sanitizerText ? resolve(opts.sanitizerText) : null,
      tool,
    );
    // A report read in part (cut off, damaged, not the tool's) is bundled with what was read: say what went wrong.
    for (const problem of report.problems) console.error(`⚠ ${opts.sanitizerXml}: ${problem}`);
    // The XML as read above (up to the bundle's bound), not the report's shorter copy.
    return { sanitizer: report, sanitizerXml: xml };
  }
  return {};
}

async function runExport(opts: ExportOptions): Promise<number> {
  if (opts.plan && opts.sample) throw new ExportError('Give one of --plan or --sample.');
  if (opts.fixed && !opts.sample) throw new ExportError('--fixed goes with --sample.');
  if (!opts.plan && !opts.sample) throw new ExportError('Name the plan the run came from: --plan plan.json or --sample NAME [--fixed].');
  if (opts.sanitizerText && !opts.sanitizerXml)
    throw new ExportError('--sanitizer-text goes with --sanitizer-xml (the text the tool printed beside its XML report).');
  if (opts.sanitizerTool && !SANITIZER_TOOLS.includes(opts.sanitizerTool as SanitizerTool))
    throw new ExportError(`--sanitizer-tool is one of ${SANITIZER_TOOLS.join(', ')}.`);
  const outcome = await readRunOutcomeInReader(resolve(opts.result));
  let plan: unknown;
  let origin: string;
  if (opts.plan) {
    plan = (await readPlanFile(resolve(opts.plan))).plan;
    origin = `plan ${opts.plan}`;
  } else {
    const variant = opts.fixed ? 'fixed' : 'broken';
    plan = (await loadSample(opts.sample!, variant)).plan;
    origin = `sample ${opts.sample} (${variant})`;
  }
  let devices: BundleRequest['devices'] = null;
  if (opts.devices) {
    const profiles = profilesFromDevicesEntry(await readJson(opts.devices, 'Devices file', 'devices'));
    if (profiles.length === 0)
      throw new ExportError(`${opts.devices} holds no device profile (\`gpu-workbench devices --save-profile\` or \`devices --json\` writes one).`);
    devices = { profiles, from: `the profile given at export (${basename(opts.devices)})` };
  }
  let doctorFacts: DoctorFacts | undefined;
  if (opts.doctorFacts) {
    const parsed = parseDoctorFacts(await readJson(opts.doctorFacts, 'Doctor facts', 'doctor'));
    if (!parsed.ok)
      throw new ExportError(
        `${opts.doctorFacts} is not the doctor's facts (\`gpu-workbench doctor --facts-out\` writes them): ${parsed.problems.slice(0, 3).join('; ')}`,
      );
    doctorFacts = parsed.facts;
  }
  const samples = opts.samples ? checkSamples(await readJson(opts.samples, 'Samples file', 'samples')) : undefined;
  const request: BundleRequest = {
    plan,
    outcome,
    origin,
    ...(await sanitizerFor(opts)),
    ...(samples !== undefined ? { samples } : {}),
    devices,
    includeSources: opts.sources,
    redact: opts.redact,
    doctorLimitMs: opts.doctorTimeout * 1000,
    ...(doctorFacts ? { doctorFacts } : {}),
  };
  // The PTX is compiled at export, by the same services as every command (none without sources or with --no-ptx).
  const workbench = opts.ptx && opts.sources ? cliWorkbench() : null;
  const services = { compiler: workbench?.compiler ?? null, noCompiler: 'it was left out at export (--no-ptx)' };
  try {
    if (opts.preview) {
      const preview = previewOf(await gatherBundle(request, services), request);
      console.log(
        opts.json
          ? JSON.stringify(preview, null, 2)
          : [
              `A bundle would hold ${preview.files.length} files (nothing written):`,
              ...preview.files.map((f) => `  ${f.name}  ${formatBytes(f.bytes)}`),
              `Environment (${preview.redacted ? 'redacted: user and host names, home paths and GPU serials hidden' : 'NOT redacted'}):`,
              ...(Object.keys(preview.environment).length
                ? Object.entries(preview.environment).map(([k, v]) => `  ${k}=${v}`)
                : ['  (none of the allow-listed variables is set)']),
              ...(opts.sources ? [] : ['Sources left out (--no-sources): the plan keeps its shape, kernels without their text; no PTX, no repro/.']),
              ...(preview.notes.length ? ['It will lack:', ...preview.notes.map((n) => `  - ${n}`)] : []),
            ].join('\n'),
      );
      return EXIT.ok;
    }
    const out = resolve(opts.out ?? `gpu-workbench-bundle-${new Date().toISOString().replace(/[:.]/g, '-')}.zip`);
    const written = await exportBundle(out, request, services);
    console.log(
      opts.json
        ? JSON.stringify({ path: written.path, bytes: written.bytes, files: written.files, notes: written.notes, redacted: opts.redact }, null, 2)
        : [
            `✓ Wrote ${written.path} (${formatBytes(written.bytes)}, ${written.files.length} files${opts.redact ? ', redacted' : ', NOT redacted'}). Open it with \`gpu-workbench bundle inspect\`.`,
            ...written.notes.map((n) => `  note: ${n}`),
          ].join('\n'),
    );
    return EXIT.ok;
  } finally {
    await workbench?.dispose();
  }
}

/** `gpu-workbench bundle export`, added to the `bundle` command. */
export function registerBundleExport(bundle: Command): void {
  bundle
    .command('export')
    .description(
      'Write one zip with a run and what explains it: manifest, plan, result and diagnosis with its event log, sources, compile options and logs, PTX, validator findings, NVML samples, doctor report, environment (redacted), sanitizer report and output, and repro/ (a standalone repro.cu). Written atomically.',
    )
    .requiredOption('--result <run.json>', 'the run result (`gpu-workbench run --json > run.json`)')
    .option('--plan <plan.json>', 'the plan that run came from')
    .option('--sample <name>', 'or the gallery sample it came from')
    .option('--fixed', "with --sample: the sample's fixed variant")
    .option('--sanitizer <report.json>', 'a sanitizer report to include (`gpu-workbench sanitize --json`)')
    .option('--sanitizer-xml <report.xml>', "compute-sanitizer's own XML report (--xml --save): kept, and read for the findings when --sanitizer is not given")
    .option('--sanitizer-text <output.txt>', 'with --sanitizer-xml: the text the tool printed')
    .option('--sanitizer-tool <tool>', `with --sanitizer-xml: which tool wrote it (${SANITIZER_TOOLS.join(', ')})`)
    .option('--samples <samples.json>', 'NVML samples taken while the run ran (default: those its result carries: `run --trace` samples)')
    .option(
      '--devices <devices.json>',
      "a profile of the run's device (`devices --save-profile`, or `devices --json`); default: this machine's, or a profile of it",
    )
    .option('--out <file.zip>', 'where to write it (default: gpu-workbench-bundle-<time>.zip here)')
    .option('--no-sources', 'leave kernel sources (and repro/) out')
    .option('--no-redact', 'keep user and host names, home paths and GPU serials as they are')
    .option('--no-ptx', 'leave the PTX out (no compile at export); the bundle says so')
    .option('--preview', 'print exactly the files and the environment that would go in; write nothing')
    .option('--doctor-facts <facts.json>', "the doctor's facts recorded on the machine that ran it (`doctor --facts-out`), judged instead of this machine's")
    .option('--doctor-timeout <s>', 'seconds the doctor may take', (v: string) => Math.max(1, Math.min(600, Number.parseInt(v, 10) || 10)), 10)
    .option('--json', 'machine-readable output')
    .action(async (opts: ExportOptions) => {
      try {
        process.exitCode = await runExport(opts);
      } catch (error) {
        if (
          error instanceof ExportError ||
          error instanceof PlanFileError ||
          error instanceof BundleWriteError ||
          error instanceof BundleInputError ||
          error instanceof SanitizerImportError ||
          error instanceof BundleCancelledError
        ) {
          console.error(`✗ ${error.message}`);
          process.exitCode = error instanceof BundleWriteError ? EXIT.failed : EXIT.usage;
          return;
        }
        throw error;
      }
    });
}
