import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { cubinKernelSymbols, findKernelSymbol, ptxEntryNames } from '../../core/cubin';
import { describeIssues } from '../../core/plan/plan-schema';
import type { NativeAddon } from '../native/addon';
import { childPort } from '../process/child-port';
import { toCudaError } from '../runner/cuda-error';
import { discoverLibraries } from '../services/discovery-service';
import { compileRequestSchema, type CompileOutput, type CompileRequest, type CompileWorkerStatus } from './compile-protocol';
import { findNvcc } from './nvcc';

/** The compile worker: compilers crash and hang on odd input, so they run here, never in the host. */
const port = childPort();
const libraries = discoverLibraries();
const addon: NativeAddon | null = libraries.addon.loaded ? require(libraries.addon.path) : null;
let nvccPath: string | null = null;

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * Finds each kernel's symbol in the cubin (or the PTX, for a compute_XX target). We do not use NVRTC
 * name expressions: one naming a function that does not exist turns into a compile error, and the user
 * should hear "no kernel named X; these exist" instead.
 */
function resolveSymbols(cubin: Uint8Array | null, ptx: string | null, kernels: string[]) {
  let all: string[] = [];
  try {
    all = cubin ? cubinKernelSymbols(cubin) : ptx ? ptxEntryNames(ptx) : [];
  } catch {
    all = ptx ? ptxEntryNames(ptx) : [];
  }
  const symbols: Record<string, string | null> = {};
  for (const k of kernels) symbols[k] = findKernelSymbol(all, k);
  return { symbols, allSymbols: all };
}

async function compileNvrtc(request: CompileRequest): Promise<CompileOutput> {
  const started = performance.now();
  const options = [`--gpu-architecture=${request.arch}`, '-lineinfo', ...request.options];
  const out = await addon!.nvrtcCompile({ source: request.source, name: request.sourceName, options, nameExpressions: [] });
  const image = out.cubin ?? (out.ptx ? new TextEncoder().encode(out.ptx) : null);
  return {
    ok: out.ok,
    backend: 'nvrtc',
    command: `nvrtcCompileProgram(${quote(request.sourceName)}, ${options.map(quote).join(' ')})`,
    log: out.log,
    image: out.ok ? image : null,
    ptx: out.ptx,
    ...resolveSymbols(out.cubin, out.ptx, request.kernels),
    ms: performance.now() - started,
  };
}

async function compileNvcc(request: CompileRequest): Promise<CompileOutput> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'gpu-workbench-nvcc-'));
  try {
    const name = basename(request.sourceName).replace(/[^\w.-]/g, '_') || 'kernel.cu';
    const source = join(dir, name.endsWith('.cu') ? name : `${name}.cu`);
    const output = join(dir, 'kernel.cubin');
    await writeFile(source, request.source);
    const args = ['-cubin', `-arch=${request.arch}`, '-lineinfo', ...request.options, '-o', output, source];
    const log = await new Promise<{ ok: boolean; text: string }>((resolve) => {
      execFile(nvccPath!, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ ok: !error, text: `${stdout}${stderr}`.split(dir + '/').join('') });
      });
    });
    const image = log.ok ? new Uint8Array(await readFile(output)) : null;
    return {
      ok: log.ok,
      backend: 'nvcc',
      command: [nvccPath!, ...args]
        .map(quote)
        .join(' ')
        .split(dir + '/')
        .join(''),
      log: log.text,
      image,
      ptx: null,
      ...resolveSymbols(image, null, request.kernels),
      ms: performance.now() - started,
    };
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
  if (!nvccPath) {
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

void (async () => {
  const nvcc = await findNvcc();
  nvccPath = nvcc.path;
  const status: CompileWorkerStatus = {
    backends: [...(libraries.nvrtc.loaded ? (['nvrtc'] as const) : []), ...(nvcc.found ? (['nvcc'] as const) : [])],
    nvrtcPath: libraries.nvrtc.path,
    nvccPath,
  };
  port.post({ type: 'ready', status });
  port.onMessage((raw) => {
    const parsed = compileRequestSchema.safeParse(raw);
    const id = typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'number' ? (raw as { id: number }).id : null;
    if (!parsed.success) {
      port.post({
        type: 'error',
        id,
        sticky: false,
        error: { library: 'workbench', api: 'compile', code: -1, name: 'WORKBENCH_BAD_REQUEST', message: describeIssues(parsed.error) },
      });
      return;
    }
    handle(parsed.data).then(
      (result) => port.post({ type: 'ok', id, result }),
      (error) => port.post({ type: 'error', id, sticky: false, error: toCudaError(error, 'compile') }),
    );
  });
})();
