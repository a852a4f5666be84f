import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { definesHeader, NVCC_DEFINES_HEADER, nvccCommandArguments, nvrtcArguments } from '../../core/compile/compile-options';
import { hasErrors, kernelFacts, withSharedDiagnostics } from '../../core/compile/compile-result';
import { nvrtcHeaderNotes, parseCompilerLog } from '../../core/compile/diagnostics';
import { parsePtxasInfo } from '../../core/compile/resource-usage';
import { cubinKernelSymbols, ptxEntryNames } from '../../core/cubin';
import { formatCudaVersion } from '../../core/format';
import { describeIssues } from '../../core/plan/plan-schema';
import { BoundedCache } from '../../core/bounded-cache';
import type { NativeAddon, NvrtcOutput } from '../native/addon';
import { tieLifetimeToHost } from '../process/child-lifetime';
import { processRuns } from '../process/process-state';
import { childPort, replies } from '../process/child-port';
import { toCudaError } from '../runner/cuda-error';
import { discoverLibraries } from '../services/discovery-service';
import {
  compileRequestSchema,
  disassembleRequestSchema,
  type CompileOutput,
  type CompileRequest,
  type CompileWorkerProtocol,
  type CompileWorkerStatus,
} from '../../core/compile/worker-protocol';
import { findNvcc } from './nvcc';

/** The compile worker: compilers crash and hang on odd input, so they run here, never in the host. */
const port = childPort();
const reply = replies<CompileWorkerProtocol, CompileWorkerStatus>(port);
const libraries = discoverLibraries();
const addon: NativeAddon | null = libraries.addon.loaded ? require(libraries.addon.path) : null;
tieLifetimeToHost(addon);
// NVRTC on this thread: no thread-pool round trip, and NVRTC runs faster on the main thread (native/src/async.h).
addon?.setInline(true);
let status: CompileWorkerStatus;

/** What the compiler itself cost, and where the kernel facts came from: one per compile, passed along, never shared. */
type CompilerRun = Pick<CompileOutput, 'compilerMs' | 'compilerCpu' | 'factsFrom'>;

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const run = (file: string, args: string[], cwd: string) =>
  new Promise<{ ok: boolean; text: string }>((resolve) => {
    execFile(file, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => resolve({ ok: !error, text: `${stdout}${stderr}` }));
  });

function symbolsOf(cubin: Uint8Array | null, ptx: string | null): string[] {
  try {
    if (cubin) return cubinKernelSymbols(cubin);
  } catch {
    // not an ELF image (PTX): fall through
  }
  return ptx ? ptxEntryNames(ptx) : [];
}

/**
 * SASS from cuobjdump or nvdisasm beside nvcc, where the toolkit has them. On demand only: spawning a
 * disassembler costs hundreds of milliseconds, too much for every keystroke.
 */
async function disassemble(cubin: Uint8Array): Promise<string | null> {
  const dirs = [...(status.nvccPath ? [dirname(status.nvccPath)] : []), ...(process.env['PATH'] ?? '').split(':').filter(Boolean), '/usr/local/cuda/bin'];
  const tool = ['cuobjdump', 'nvdisasm'].flatMap((t) => dirs.map((d) => join(d, t))).find((p) => existsSync(p));
  if (!tool) return null;
  const dir = await mkdtemp(join(tmpdir(), `gpu-workbench-sass-${process.pid}-`));
  try {
    const file = join(dir, 'image.cubin');
    await writeFile(file, cubin);
    const out = await run(tool, tool.endsWith('cuobjdump') ? ['-sass', file] : ['-c', file], dir);
    return out.ok ? out.text : null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function result(
  request: CompileRequest,
  backend: 'nvrtc' | 'nvcc',
  command: string,
  log: string,
  cubin: Uint8Array | null,
  ptx: string | null,
  started: number,
  compiler: CompilerRun,
): CompileOutput {
  const symbols = symbolsOf(cubin, ptx);
  const kernels = kernelFacts(request.source, parsePtxasInfo(log), symbols);
  const parsed = parseCompilerLog(log, { [request.sourceName]: request.source });
  const fromLog = backend === 'nvrtc' ? [...parsed, ...nvrtcHeaderNotes(parsed)] : parsed;
  // nvcc's ptxas refuses too much static shared memory (in hex, with no line); NVRTC's does not: said once, the same way, either way.
  const diagnostics = withSharedDiagnostics(fromLog, kernels, request.sourceName, request.options.arch);
  const ok = (cubin !== null || ptx !== null) && !hasErrors(diagnostics);
  return {
    ok,
    backend,
    compilerVersion: backend === 'nvrtc' ? `NVRTC ${formatCudaVersion(status.nvrtcVersion ?? 0)}` : (status.nvccVersion ?? 'nvcc'),
    command,
    arch: request.options.arch,
    log,
    diagnostics,
    kernels,
    symbols,
    ptx,
    sass: null,
    ms: performance.now() - started,
    ...compiler,
    workerMs: performance.now() - started,
    image: ok ? (cubin ?? (ptx ? new TextEncoder().encode(ptx) : null)) : null,
  };
}

/**
 * NVRTC (12.9 on) answers a program whose compiled form it has seen before, in any process, from the
 * driver's compute cache (~/.nv/ComputeCache), and then runs no ptxas: the log lacks the ptxas -v lines
 * the kernel facts come from. An edit to a comment is such a program. So the ptxas lines of every real
 * compile are remembered by the PTX they came from; a cached answer takes them from there, or, for PTX
 * this worker has not compiled itself, from one compile with --no-cache.
 */
const ptxasLinesByPtx = new BoundedCache<string, string>(256);
const ptxasLinesOf = (log: string) =>
  log
    .split('\n')
    .filter((line) => line.startsWith('ptxas'))
    .join('\n');

/** One NVRTC call, its time and CPU use added to `compiler` (a --no-cache retry makes two calls in one compile). */
async function timedNvrtc(request: CompileRequest, options: string[], compiler: CompilerRun): Promise<NvrtcOutput> {
  const compileStarted = performance.now();
  const usage = process.resourceUsage();
  const out = await addon!.nvrtcCompile({ source: request.source, name: request.sourceName, options, nameExpressions: [] });
  const after = process.resourceUsage();
  const before = compiler.compilerCpu ?? { userMs: 0, systemMs: 0, minorFaults: 0, involuntarySwitches: 0 };
  compiler.compilerMs = (compiler.compilerMs ?? 0) + performance.now() - compileStarted;
  compiler.compilerCpu = {
    userMs: before.userMs + (after.userCPUTime - usage.userCPUTime) / 1000,
    systemMs: before.systemMs + (after.systemCPUTime - usage.systemCPUTime) / 1000,
    minorFaults: before.minorFaults + after.minorPageFault - usage.minorPageFault,
    involuntarySwitches: before.involuntarySwitches + after.involuntaryContextSwitches - usage.involuntaryContextSwitches,
  };
  return out;
}

async function compileNvrtc(request: CompileRequest): Promise<CompileOutput> {
  const started = performance.now();
  const options = nvrtcArguments(request.options);
  const compiler: CompilerRun = { factsFrom: 'compiler' };
  let out = await timedNvrtc(request, options, compiler);
  if (out.ok && out.ptx && request.options.arch.startsWith('sm_')) {
    const key = createHash('sha256').update(options.join('\0')).update('\0').update(out.ptx).digest('hex');
    const ptxas = ptxasLinesOf(out.log);
    const remembered = ptxas ? null : ptxasLinesByPtx.get(key);
    if (ptxas) {
      ptxasLinesByPtx.set(key, ptxas);
    } else if (remembered) {
      out = { ...out, log: `${out.log}${out.log && !out.log.endsWith('\n') ? '\n' : ''}${remembered}\n` };
      compiler.factsFrom = 'earlier-compile';
    } else {
      const fresh = await timedNvrtc(request, [...options, '--no-cache'], compiler).catch(() => null);
      if (fresh?.ok && ptxasLinesOf(fresh.log)) {
        ptxasLinesByPtx.set(key, ptxasLinesOf(fresh.log));
        out = fresh;
        compiler.factsFrom = 'recompiled';
      } else {
        compiler.factsFrom = 'missing';
      }
    }
  }
  return result(
    request,
    'nvrtc',
    `nvrtcCompileProgram(${quote(request.sourceName)}, ${options.map(quote).join(' ')})`,
    out.log,
    out.ok ? out.cubin : null,
    out.ok ? out.ptx : null,
    started,
    compiler,
  );
}

async function compileNvcc(request: CompileRequest): Promise<CompileOutput> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), `gpu-workbench-nvcc-${process.pid}-`));
  try {
    const name = basename(request.sourceName).replace(/[^\w.-]/g, '_') || 'kernel.cu';
    const file = name.endsWith('.cu') ? name : `${name}.cu`;
    await writeFile(join(dir, file), request.source);
    if (request.options.defines.length) await writeFile(join(dir, NVCC_DEFINES_HEADER), definesHeader(request.options.defines));
    const cubinOnly = request.options.arch.startsWith('sm_');
    const output = cubinOnly ? 'kernel.cubin' : 'kernel.ptx';
    const args = nvccCommandArguments(request.options, { source: file, output, keepDir: 'keep' });
    await mkdir(join(dir, 'keep'));
    const compileStarted = performance.now();
    const out = await run(status.nvccPath!, args, dir);
    // No compilerCpu: nvcc's CPU time is its children's, not this process's.
    const compiler: CompilerRun = { compilerMs: performance.now() - compileStarted, factsFrom: 'compiler' };
    const cubin = out.ok && cubinOnly ? new Uint8Array(await readFile(join(dir, output))) : null;
    let ptx: string | null = null;
    if (out.ok) {
      const kept = (await readdir(join(dir, 'keep'))).find((f) => f.endsWith('.ptx'));
      const ptxPath = cubinOnly ? (kept ? join(dir, 'keep', kept) : null) : join(dir, output);
      ptx = ptxPath ? await readFile(ptxPath, 'utf8').catch(() => null) : null;
    }
    // Messages name the file as the user knows it, not our temporary copy.
    const log = out.text.split(`${dir}/`).join('').split(`./${file}`).join(file).split(file).join(request.sourceName);
    return result(request, 'nvcc', [status.nvccPath!, ...args].map(quote).join(' '), log, cubin, ptx, started, compiler);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function handle(request: CompileRequest): Promise<CompileOutput> {
  const useNvrtc = request.backend === 'nvrtc' || (request.backend === 'auto' && libraries.nvrtc.loaded);
  if (useNvrtc) {
    if (!libraries.nvrtc.loaded)
      throw Object.assign(new Error('NVRTC was asked for but is not available on this machine'), {
        api: 'nvrtcCreateProgram',
        code: -1,
        name: 'WORKBENCH_NVRTC_NOT_LOADED',
        library: 'nvrtc',
      });
    return compileNvrtc(request);
  }
  if (!status.nvccPath) {
    throw Object.assign(
      new Error(
        'No CUDA compiler is available: NVRTC (libnvrtc.so) was not found and neither was nvcc. Install the CUDA toolkit, or the nvidia-cuda-nvrtc Python wheel.',
      ),
      {
        api: 'compile',
        code: -1,
        name: 'WORKBENCH_NO_COMPILER',
        library: 'workbench',
      },
    );
  }
  return compileNvcc(request);
}

// No SIGTERM handler: NVRTC runs on this thread and would hold it; SIGTERM's default action ends the
// process at once, and the host signals the whole group, nvcc and its children with it.

/** Folders of workers that were killed mid-compile (their pid is in the name, and gone): the source in them goes. */
async function removeStaleFolders(): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const m = /^gpu-workbench-(?:nvcc|sass)-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || processRuns(Number(m[1]))) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
  }
}

void (async () => {
  void removeStaleFolders();
  const nvcc = await findNvcc();
  status = {
    backends: [...(libraries.nvrtc.loaded ? (['nvrtc'] as const) : []), ...(nvcc.found ? (['nvcc'] as const) : [])],
    nvrtcPath: libraries.nvrtc.path,
    nvrtcVersion: libraries.nvrtc.version ?? null,
    nvccPath: nvcc.path,
    nvccVersion: nvcc.version,
  };
  reply.ready(status);
  port.onMessage((raw) => {
    const id = typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'number' ? (raw as { id: number }).id : null;
    const sass = disassembleRequestSchema.safeParse(raw);
    if (sass.success) {
      disassemble(sass.data.image).then(
        (text) => reply.ok(sass.data.id, 'disassemble', text),
        (error) => reply.error(id, toCudaError(error, 'disassemble')),
      );
      return;
    }
    const parsed = compileRequestSchema.safeParse(raw);
    if (!parsed.success) {
      reply.error(id, { library: 'workbench', api: 'compile', code: -1, name: 'WORKBENCH_BAD_REQUEST', message: describeIssues(parsed.error) });
      return;
    }
    handle(parsed.data).then(
      (output) => reply.ok(parsed.data.id, 'compile', output),
      (error) => reply.error(id, toCudaError(error, 'compile')),
    );
  });
})();
