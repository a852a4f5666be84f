import * as z from 'zod';

import { compileOptionsSchema, type CompileOptions } from '../compile/compile-options';
import { kernelFacts, type CompileResult } from '../compile/compile-result';

import { parsePtxasInfo } from '../compile/resource-usage';
import type { LaunchPlan } from '../plan/plan-schema';
import type { CompileRecord, RunOutcome } from '../runner/run-outcome';

/**
 * compile.json: how each kernel of the plan was compiled for the run — the options as compiled (architecture
 * included), the command, the compiler's log and diagnostics — and where its PTX is in the bundle, or why it
 * is not. The run's own compile records carry all but the PTX, which the exporting host takes from its
 * compile cache (the run's own compile) or compiles again; that is said per kernel (`ptxFrom`).
 */
export interface BundleKernelCompile {
  /** The plan's kernel id. */
  kernel: string;
  entry: string;
  sourceName: string;
  /** The sources/ entry that holds its text; null when sources were left out. */
  source: string | null;
  /** The options it was compiled with, or would have been (when the run stopped before compiling it). */
  options: CompileOptions;
  /** Null when the run never compiled this kernel (it stopped before: an invalid plan, no device). */
  record: Omit<CompileRecord, 'kernel'> | null;
  /** The ptx/ entry, or null (then `ptxMissing` says why). */
  ptx: string | null;
  /** Where the PTX came from, in words ("taken from the compile cache (…)", "compiled again at export with …"); ptxOrigin says it. */
  ptxFrom: string | null;
  ptxMissing: string | null;
}

export interface BundleCompile {
  kernels: BundleKernelCompile[];
}

/**
 * Where a kernel's PTX came from, as a clause that follows "PTX (1.2 KiB), ": what the bundle says, which already
 * reads as one ("taken from the compile cache (…)", "compiled again at export with …"); bundles written before it
 * did say "the compile cache: …".
 */
export function ptxOrigin(from: string | null): string {
  if (from === null) return 'as the bundle holds it';
  const older = /^the compile cache: (.*)$/s.exec(from);
  return older ? `taken from the compile cache (${older[1]})` : from;
}

/** What the exporting host found for a kernel's PTX: its text and where it came from, or why there is none. */
export type PtxLookup = { text: string; from: string } | { missing: string };

/** The architecture the run compiled for, read from its compile command (sm_90), or null. */
export function runArch(outcome: Pick<RunOutcome, 'compile'>): string | null {
  for (const c of outcome.compile) {
    const m = /(?:gpu-architecture=|-arch[= ])((?:sm|compute)_\d{2,3}[af]?)/.exec(c.command);
    if (m) return m[1]!.replace(/^compute_/, 'sm_');
  }
  return null;
}

/** The compile request of a plan's kernel as the run made it: its options with the run's architecture. */
export function kernelCompileOptions(kernel: LaunchPlan['kernels'][number], arch: string): CompileOptions {
  return compileOptionsSchema.parse({ ...kernel.options, arch });
}

export const ptxEntryName = (kernelId: string) => `ptx/${kernelId}.ptx`;

/**
 * compile.json and the ptx/ entries for a plan and its run. `sourceEntry` names the sources/ entry of a
 * kernel's text (null without sources); `ptx` answers per kernel id. Kernels that share one compile (the same
 * source and options) still get an entry each: the plan names them separately.
 */
export function bundleCompile(
  plan: LaunchPlan,
  outcome: Pick<RunOutcome, 'compile'>,
  arch: string,
  sourceEntry: (kernel: LaunchPlan['kernels'][number]) => string | null,
  ptx: ReadonlyMap<string, PtxLookup>,
): { compile: BundleCompile; ptxEntries: Map<string, string> } {
  const ptxEntries = new Map<string, string>();
  const kernels = plan.kernels.map((k): BundleKernelCompile => {
    const r = outcome.compile.find((c) => c.kernel === k.id) ?? null;
    const found = ptx.get(k.id) ?? { missing: 'the exporting host was not asked for it' };
    const name = 'text' in found ? ptxEntryName(k.id) : null;
    if ('text' in found) ptxEntries.set(name!, found.text);
    return {
      kernel: k.id,
      entry: k.entry,
      sourceName: k.sourceName,
      source: sourceEntry(k),
      options: kernelCompileOptions(k, arch),
      record: r && { ok: r.ok, backend: r.backend, command: r.command, log: r.log, diagnostics: r.diagnostics, ms: r.ms, cached: r.cached, symbol: r.symbol },
      ptx: name,
      ptxFrom: 'text' in found ? found.from : null,
      ptxMissing: 'missing' in found ? found.missing : null,
    };
  });
  return { compile: { kernels }, ptxEntries };
}

const text = (max: number) => z.string().max(max);
const diagnosticSchema = z.object({
  file: text(4096),
  line: z.number().int().min(0),
  column: z.number().int().min(0),
  severity: z.enum(['error', 'warning', 'info']),
  message: text(16_384),
  code: text(64).nullable(),
  source: z.enum(['frontend', 'preprocessor', 'ptxas', 'compiler']),
});

/** compile.json as read from a bundle someone sent: every string and list bounded. */
export const bundleCompileSchema = z.object({
  kernels: z
    .array(
      z.object({
        kernel: text(64),
        entry: text(1024),
        sourceName: text(4096),
        source: text(1024).nullable(),
        // Read as data, not as a compile request: a redacted include path (~/include) is not one the compiler takes.
        options: z
          .object({ arch: text(32) })
          .catchall(z.unknown())
          .transform((o) => o as unknown as CompileOptions),
        record: z
          .object({
            ok: z.boolean(),
            backend: text(64),
            command: text(65_536),
            log: text(4 * 1024 ** 2),
            diagnostics: z.array(diagnosticSchema).max(10_000),
            ms: z.number().min(0),
            cached: z.boolean(),
            symbol: text(4096).nullable(),
          })
          .nullable(),
        ptx: text(1024).nullable(),
        ptxFrom: text(1024).nullable(),
        ptxMissing: text(4096).nullable(),
      }),
    )
    .max(64),
});

/**
 * What the editor's panels read for a kernel of a bundle (kernel facts, diagnostics, PTX, the log), made from
 * the bundle's own record: registers, spills and shared memory from the recorded ptxas log, never from a compile
 * on this machine. Null when the run never compiled the kernel.
 */
export function compileResultFromBundle(k: BundleKernelCompile, sourceText: string, ptx: string | null): CompileResult | null {
  const r = k.record;
  if (!r) return null;
  const usage = parsePtxasInfo(r.log);
  const symbols = r.symbol ? [r.symbol] : usage.map((u) => u.symbol);
  return {
    ok: r.ok,
    backend: r.backend === 'nvcc' ? 'nvcc' : 'nvrtc',
    compilerVersion: `${r.backend} (recorded in the bundle)`,
    command: r.command,
    arch: k.options.arch,
    log: r.log,
    diagnostics: r.diagnostics,
    kernels: kernelFacts(sourceText, usage, symbols),
    symbols,
    ptx,
    sass: null,
    ms: r.ms,
    factsFrom: usage.length ? 'compiler' : 'missing',
    cached: r.cached,
    key: '',
  };
}
