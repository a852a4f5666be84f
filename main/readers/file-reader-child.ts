/**
 * A reader process: reads one file from outside, as the host asked (core/readers/reader-protocol.ts), and answers in
 * frames on its standard output. It runs under a heap limit, a memory limit and a time limit set by the host
 * (main/readers/reader-process.ts): a file that makes V8 abort ends this process, and the host says so in words.
 *   node file-reader.js '<job as JSON>' [--wait]
 */
import { basename } from 'node:path';

import { stringifyTyped } from '../../core/api/typed-wire';
import { makeRedactor } from '../../core/bundle/redact';
import { PickleRedactionError, redactPickleStrings, snapshotStringRedaction } from '../../core/memory/redact-pickle';
import { BUNDLE_JSON_LIMITS } from '../../core/bundle/bundle-limits';
import { parseDiagnosisReport } from '../../core/diagnose/report-schema';
import { parseJsonWithin } from '../../core/json-limits';
import { NcuCsvError, parseRawPage, parseSourcePage } from '../../core/kernel-profile/ncu-csv';
import { parseProfile } from '../../core/kernel-profile/profile';
import { buildCounters, mainSourceFile, parseDims } from '../../core/kernel-profile/profile-build';
import { FRAME, frameBytes, READER_MEMORY_ENV, READER_WAIT_ARG, type FrameType, type ReaderAnswer, type ReaderJob } from '../../core/readers/reader-protocol';
import { loadAddon } from '../native/addon';
import { BundleRefusedError, openBundleView } from '../bundle/read-bundle';
import { PlanFileError, readRunOutcome } from '../services/plan-files';
import { readRegularFile } from '../services/safe-fs';
import { importSanitizerReport, SanitizerImportError } from '../tools/sanitize-import';
import { readReports } from '../tools/sanitize-program';
import { readMemoryTimelines, readSnapshotColumns } from './memory-reader';

const write = (type: FrameType, value: unknown) => process.stdout.write(frameBytes(type, Buffer.from(JSON.stringify(value), 'utf8')));
/** The answer, its typed arrays as a body frame before it rather than JSON (core/api/typed-wire.ts). */
function writeAnswer(answer: ReaderAnswer): void {
  if (!answer.ok) return void write(FRAME.answer, answer);
  const { text, refs, body } = stringifyTyped(answer.value);
  if (!refs.length) return void process.stdout.write(frameBytes(FRAME.answer, Buffer.from(`{"ok":true,"value":${text}}`, 'utf8')));
  process.stdout.write(frameBytes(FRAME.body, body));
  process.stdout.write(frameBytes(FRAME.answer, Buffer.from(`{"ok":true,"typed":${JSON.stringify(refs)},"value":${text}}`, 'utf8')));
}
/** ncu's CSV pages of one kernel: a source page of a long kernel runs to megabytes, never near this. */
const NCU_PAGE_BYTES = 256 * 2 ** 20;
const refuse = (kind: string, message: string): ReaderAnswer => ({ ok: false, kind, message });
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const pathOf = (job: ReaderJob) => ('path' in job ? job.path : 'dir' in job ? job.dir : 'rawPath' in job ? job.rawPath : (job.xmlPath ?? job.textPath ?? ''));

/**
 * A JSON file the workbench wrote (a diagnosis, a kernel profile): read bounded, parsed within its role's limits,
 * checked against its schema; each failure a refusal that says which file to open instead.
 */
async function workbenchJson(
  path: string,
  maxBytes: number,
  kind: { refusal: string; role: 'diagnosis' | 'profile'; what: string; writer: string },
  check: (value: unknown) => { ok: true; value: unknown } | { ok: false; error: string },
): Promise<ReaderAnswer> {
  let bytes: Buffer;
  try {
    bytes = (await readRegularFile(path, maxBytes)).bytes;
  } catch (error) {
    return refuse('unreadable', `${path} could not be read: ${messageOf(error)}`);
  }
  const hint = `open a file that \`${kind.writer}\` wrote.`;
  let value: unknown;
  try {
    value = parseJsonWithin(bytes, BUNDLE_JSON_LIMITS[kind.role], basename(path));
  } catch (error) {
    return refuse(kind.refusal, `${messageOf(error)}: ${hint}`);
  }
  const parsed = check(value);
  return parsed.ok ? { ok: true, value: parsed.value } : refuse(kind.refusal, `${basename(path)} is not ${kind.what} (${parsed.error}): ${hint}`);
}

const diagnosis = (path: string, maxBytes: number) =>
  workbenchJson(path, maxBytes, { refusal: 'not-a-diagnosis', role: 'diagnosis', what: 'a diagnosis report', writer: 'gpu-workbench diagnose --json' }, (v) => {
    const r = parseDiagnosisReport(v);
    return r.ok ? { ok: true, value: r.report } : r;
  });

const savedProfile = (path: string, maxBytes: number) =>
  workbenchJson(path, maxBytes, { refusal: 'not-a-profile', role: 'profile', what: 'a profile', writer: 'gpu-workbench profile --save' }, (v) => {
    const r = parseProfile(v);
    return r.ok ? { ok: true, value: r.profile } : r;
  });

async function ncuPages(job: Extract<ReaderJob, { kind: 'ncu-pages' }>): Promise<ReaderAnswer> {
  try {
    const [raw, source] = await Promise.all([readRegularFile(job.rawPath, NCU_PAGE_BYTES), readRegularFile(job.sourcePath, NCU_PAGE_BYTES)]);
    const kernels = parseRawPage(raw.bytes.toString('utf8'));
    const kernel = kernels.find((k) => k.kernelName === job.entry || k.kernelName.startsWith(`${job.entry}(`)) ?? kernels[0];
    if (!kernel) return refuse('not-profiled', 'ncu profiled no kernel');
    return { ok: true, value: buildCounters(kernel, parseSourcePage(source.bytes.toString('utf8')), job.sourceFile) };
  } catch (error) {
    if (error instanceof NcuCsvError) return refuse('refused', `ncu's pages could not be read: ${error.message}`);
    throw error;
  }
}

/** A program's launches: each raw row with its own source page, its lines in the file holding most of its samples. */
async function ncuProgramPages(job: Extract<ReaderJob, { kind: 'ncu-program-pages' }>): Promise<ReaderAnswer> {
  try {
    const kernels = parseRawPage((await readRegularFile(job.rawPath, NCU_PAGE_BYTES)).bytes.toString('utf8'));
    const out = [];
    for (const [i, kernel] of kernels.entries()) {
      const sourcePath = job.sourcePaths[i];
      const all = sourcePath ? parseSourcePage((await readRegularFile(sourcePath, NCU_PAGE_BYTES)).bytes.toString('utf8')) : [];
      // The page exported for this launch; should ncu print other launches' too, only this kernel's function is its.
      const own = all.filter((page) => page.functionName === kernel.kernelName);
      const pages = own.length ? own : all;
      const sourceFile = mainSourceFile(pages) ?? '';
      out.push({
        name: kernel.kernelName,
        grid: parseDims(kernel.gridSize),
        block: parseDims(kernel.blockSize),
        counters: buildCounters(kernel, pages, sourceFile),
      });
    }
    return { ok: true, value: out };
  } catch (error) {
    if (error instanceof NcuCsvError) return refuse('refused', `ncu's pages could not be read: ${error.message}`);
    throw error;
  }
}

/** Each job's reading; an error the reader knows becomes a refusal of its kind, anything else a crash in words. */
const JOBS: { [K in ReaderJob['kind']]: (job: Extract<ReaderJob, { kind: K }>) => Promise<ReaderAnswer> } = {
  diagnosis: (job) => diagnosis(job.path, job.maxBytes),
  'snapshot-model': async (job) => {
    const read = await readSnapshotColumns(job.path, job.maxBytes);
    if (!read.ok) return read;
    process.stdout.write(frameBytes(FRAME.body, read.body));
    return { ok: true, value: { header: read.header, timings: read.timings } };
  },
  'memory-timelines': async (job) => {
    const read = await readMemoryTimelines(job, (phase) => write(FRAME.progress, { phase }));
    return read.ok ? { ok: true, value: read.result } : read;
  },
  'bundle-view': async (job) => {
    try {
      return { ok: true, value: await openBundleView(job.path) };
    } catch (error) {
      if (error instanceof BundleRefusedError) return refuse('refused', error.message);
      throw error;
    }
  },
  'sanitizer-report': async (job) => {
    try {
      return { ok: true, value: await importSanitizerReport(job.xmlPath, job.textPath, job.tool) };
    } catch (error) {
      if (error instanceof SanitizerImportError) return refuse('refused', error.message);
      throw error;
    }
  },
  'sanitizer-reports': async (job) => ({ ok: true, value: await readReports(job.dir, job.tool) }),
  'ncu-pages': ncuPages,
  'ncu-program-pages': ncuProgramPages,
  profile: (job) => savedProfile(job.path, job.maxBytes),
  'redacted-snapshot': async (job) => {
    let bytes: Buffer;
    try {
      bytes = (await readRegularFile(job.path, job.maxBytes)).bytes;
    } catch (error) {
      return refuse('unreadable', `${job.path} could not be read: ${messageOf(error)}`);
    }
    try {
      return { ok: true, value: { bytes: redactPickleStrings(bytes, snapshotStringRedaction(makeRedactor(job.facts).text)) } };
    } catch (error) {
      if (error instanceof PickleRedactionError) return refuse('refused', `${basename(job.path)} could not be redacted: ${error.message}`);
      throw error;
    }
  },
  'run-outcome': async (job) => {
    try {
      return { ok: true, value: await readRunOutcome(job.path) };
    } catch (error) {
      if (error instanceof PlanFileError) return refuse('refused', error.message);
      throw error;
    }
  },
};

/**
 * A reader started as a utility process (the desktop app) had no `ulimit` before it: it caps its own writable memory,
 * leads a group and dies with the host here, before it reads anything; without the addon it does not read at all.
 */
function limitSelf(): string | null {
  const memoryMb = Number(process.env[READER_MEMORY_ENV]);
  if (!memoryMb) return null;
  const { addon } = loadAddon();
  if (!addon?.limitWritableMemory(memoryMb * 2 ** 20))
    return 'its reader could not limit its own memory (the native addon did not load), so it did not read it';
  addon.dieWithParent();
  addon.leadProcessGroup();
  return null;
}

/** A reader started before its files were whole waits for the host's word: its standard input closing, or a message. */
function toldToGo(): Promise<void> {
  const port = (process as { parentPort?: { once(event: 'message', listener: () => void): void } }).parentPort;
  return new Promise((go) => {
    if (port) return port.once('message', () => go());
    process.stdin.on('data', () => undefined);
    process.stdin.once('end', () => go());
    process.stdin.once('error', () => go());
  });
}

async function main(): Promise<void> {
  let job: ReaderJob;
  try {
    job = JSON.parse(process.argv[2] ?? '') as ReaderJob;
    if (!job || typeof job !== 'object' || !(job.kind in JOBS)) throw new Error('unknown job');
  } catch {
    write(FRAME.answer, refuse('crashed', 'usage: file-reader <job as JSON>'));
    return;
  }
  const unlimited = limitSelf();
  if (unlimited) return void write(FRAME.answer, refuse('crashed', `${pathOf(job)} was not opened: ${unlimited}.`));
  if (process.argv[3] === READER_WAIT_ARG) await toldToGo();
  let answer: ReaderAnswer;
  try {
    answer = await (JOBS[job.kind] as (j: ReaderJob) => Promise<ReaderAnswer>)(job);
  } catch (error) {
    const memory = error instanceof RangeError && /allocation failed|Invalid array length|Invalid string length/i.test(error.message);
    answer = memory
      ? refuse('out-of-memory', `${pathOf(job)} was not opened: reading it needed more memory than a reader may take (${error.message}).`)
      : refuse('crashed', `${pathOf(job)} was not opened: its reader failed (${messageOf(error)}).`);
  }
  try {
    writeAnswer(answer);
  } catch (error) {
    // An answer that cannot be framed (a value the wire does not carry, a string past V8's length) is said, not lost.
    write(FRAME.answer, refuse('crashed', `${pathOf(job)} was not opened: its reader could not write its answer (${messageOf(error)}).`));
  }
}

void main();
