import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import { findKernelSymbol } from '../cubin';
import { ELEMENT_TYPE_NAMES } from '../plan/element-types';
import { formatBytes, plural } from '../format';
import { diagnosticsSchema, type Diagnostic } from './diagnostics';
import { registerLimitedThreads } from './compile-options';
import { findKernels, type KernelParam, type KernelSignature } from './kernel-signature';
import type { ElementType } from '../plan/element-types';
import type { ResourceUsage } from './resource-usage';
import { sharedLimits, sharedLimitsClause, STATIC_SHARED_LIMIT, type SharedLimits } from '../validate/shared-limits';

/** What one __global__ function costs and takes, as the kernel-facts panel and the launch form show it. */
export interface KernelFacts {
  name: string;
  display: string;
  /** The lowered (mangled) name in the image; null for a template never instantiated. */
  symbol: string | null;
  line: number;
  column: number;
  params: KernelParam[];
  launchBounds: KernelSignature['launchBounds'];
  registers: number | null;
  sharedBytes: number | null;
  constantBytes: number | null;
  /** Stack frame per thread: local memory, spills included. */
  localBytes: number | null;
  spillStoreBytes: number | null;
  spillLoadBytes: number | null;
  maxThreadsPerBlock: number | null;
  maxThreadsSource: 'launch-bounds' | 'registers' | 'driver' | null;
}

export interface CompileResult {
  ok: boolean;
  backend: 'nvrtc' | 'nvcc';
  compilerVersion: string;
  /** The exact invocation, to reproduce by hand. */
  command: string;
  arch: string;
  log: string;
  diagnostics: Diagnostic[];
  kernels: KernelFacts[];
  /** Every kernel symbol in the image, whether or not the source parser saw it. */
  symbols: string[];
  ptx: string | null;
  sass: string | null;
  ms: number;
  /** Time inside the compiler itself, and in the worker in all (parsing included), for the benchmark. */
  compilerMs?: number;
  workerMs?: number;
  /**
   * Where the ptxas facts (registers, spills, shared) came from: this compile; the identical program's
   * earlier compile (NVRTC answered from the driver's compute cache, which runs no ptxas); a second
   * compile with --no-cache for the same reason; or nowhere.
   */
  factsFrom?: 'compiler' | 'earlier-compile' | 'recompiled' | 'missing';
  /** The compile worker's own CPU use during the compiler call: tells computing from waiting for a CPU. */
  compilerCpu?: { userMs: number; systemMs: number; minorFaults: number; involuntarySwitches: number };
  cached: boolean;
  key: string;
}

const bytesOrNull = z.number().min(0).nullable();
const kernelFactsSchema = schemaFor<KernelFacts>()(
  z.object({
    name: z.string(),
    display: z.string(),
    symbol: z.string().nullable(),
    line: z.number().int(),
    column: z.number().int(),
    params: z.array(
      z.object({
        type: z.string(),
        name: z.string(),
        pointer: z.boolean(),
        elementType: z.enum(ELEMENT_TYPE_NAMES as [ElementType, ...ElementType[]]).nullable(),
      }),
    ),
    launchBounds: z.object({ maxThreads: z.number().nullable(), minBlocks: z.number().nullable() }).nullable(),
    registers: bytesOrNull,
    sharedBytes: bytesOrNull,
    constantBytes: bytesOrNull,
    localBytes: bytesOrNull,
    spillStoreBytes: bytesOrNull,
    spillLoadBytes: bytesOrNull,
    maxThreadsPerBlock: bytesOrNull,
    maxThreadsSource: z.enum(['launch-bounds', 'registers', 'driver']).nullable(),
  }),
);

/** What compile.run and compile.cached answer. */
export const compileResultSchema = schemaFor<CompileResult>()(
  z.object({
    ok: z.boolean(),
    backend: z.enum(['nvrtc', 'nvcc']),
    compilerVersion: z.string(),
    command: z.string(),
    arch: z.string(),
    log: z.string(),
    diagnostics: diagnosticsSchema,
    kernels: z.array(kernelFactsSchema),
    symbols: z.array(z.string()),
    ptx: z.string().nullable(),
    sass: z.string().nullable(),
    ms: z.number().min(0),
    compilerMs: z.number().min(0).optional(),
    workerMs: z.number().min(0).optional(),
    factsFrom: z.enum(['compiler', 'earlier-compile', 'recompiled', 'missing']).optional(),
    compilerCpu: z.object({ userMs: z.number(), systemMs: z.number(), minorFaults: z.number(), involuntarySwitches: z.number() }).optional(),
    cached: z.boolean(),
    key: z.string(),
  }),
);

export function kernelFacts(source: string, usage: ResourceUsage[], symbols: string[]): KernelFacts[] {
  const kernels = findKernels(source);
  return kernels.map((k) => {
    const symbol = findKernelSymbol(symbols, k.name) ?? (usage.length === 1 && kernels.length === 1 ? usage[0]!.symbol : null);
    const u = symbol ? usage.find((x) => x.symbol === symbol) : undefined;
    const bound = k.launchBounds?.maxThreads ?? null;
    const fromRegisters = u ? registerLimitedThreads(u.registers) : null;
    const maxThreads = bound !== null && fromRegisters !== null ? Math.min(bound, fromRegisters) : (bound ?? fromRegisters);
    return {
      name: k.name,
      display: k.display,
      symbol,
      line: k.line,
      column: k.column,
      params: k.params,
      launchBounds: k.launchBounds,
      registers: u?.registers ?? null,
      sharedBytes: u?.sharedBytes ?? null,
      constantBytes: u ? Object.values(u.constantBytes).reduce((a, b) => a + b, 0) : null,
      localBytes: u?.stackFrameBytes ?? null,
      spillStoreBytes: u?.spillStoreBytes ?? null,
      spillLoadBytes: u?.spillLoadBytes ?? null,
      maxThreadsPerBlock: maxThreads,
      maxThreadsSource: bound !== null && (fromRegisters === null || bound <= fromRegisters) ? 'launch-bounds' : fromRegisters !== null ? 'registers' : null,
    };
  });
}

export const hasErrors = (diagnostics: Diagnostic[]) => diagnostics.some((d) => d.severity === 'error');

/** Too much static shared memory in one kernel, with which limit applies to what (core/validate/shared-limits.ts). */
function staticSharedDiagnostic(k: KernelFacts, sourceName: string, limits: SharedLimits, ptxas: string | null): Diagnostic {
  const bytes = k.sharedBytes!;
  const beyond =
    limits.optInPerBlock !== null && bytes > limits.optInPerBlock
      ? ` ${formatBytes(bytes)} is more than even that: tile the data so each block holds less.`
      : ' Move the array to dynamic shared memory, or tile the data so each block holds less.';
  return {
    file: sourceName,
    line: k.line,
    column: k.column,
    severity: 'error',
    message: `${k.name} uses ${formatBytes(bytes)} (${plural(bytes, 'byte')}) of static shared memory, so it can never launch: ${sharedLimitsClause(limits)}.${beyond}${ptxas ? ` (ptxas: ${ptxas})` : ''}`,
    code: 'static-shared',
    source: 'compiler',
  };
}

/**
 * The compile's diagnostics with too much static shared memory said once, the same way for nvcc and NVRTC: ptxas'
 * own refusal ("uses too much shared data (0x61a80 bytes, 0xc000 max)", no line) gives way to the workbench's,
 * which quotes it. What the compiler should have said but may not is said too: NVRTC (CUDA 13.0) emits a cubin
 * that can never launch, without a word; the workbench says it on the kernel's line.
 */
export function withSharedDiagnostics(fromLog: Diagnostic[], kernels: KernelFacts[], sourceName: string, arch?: string | null): Diagnostic[] {
  const limits = sharedLimits({ arch });
  const refusals = fromLog.filter((d) => d.source === 'ptxas' && /too much shared data/.test(d.message));
  const quoted = new Set<Diagnostic>();
  const ours = kernels
    .filter((k) => (k.sharedBytes ?? 0) > STATIC_SHARED_LIMIT)
    .map((k, _i, all) => {
      const theirs =
        refusals.find((r) => k.symbol !== null && r.message.includes(`'${k.symbol}'`)) ?? (refusals.length === 1 && all.length === 1 ? refusals[0] : undefined);
      if (theirs) quoted.add(theirs);
      return staticSharedDiagnostic(k, sourceName, limits, theirs?.message ?? null);
    });
  return [...fromLog.filter((d) => !quoted.has(d)), ...ours];
}
