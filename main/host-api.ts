import {
  ANSWERED_AFTER_CANCEL,
  ApiError,
  channels,
  isChannelName,
  type AppInfo,
  type CallContext,
  type ChannelEvent,
  type ChannelName,
  type ChannelRequest,
  type ChannelResponse,
  type Envelope,
} from '../core/api/channels';
import { describeIssues } from '../core/plan/plan-schema';
import { readdir, stat } from 'node:fs/promises';
import { homedir, totalmem } from 'node:os';
import { isAbsolute, join } from 'node:path';

import { compileOptionsSchema } from '../core/compile/compile-options';
import { CompileStoppedError } from './compile/compile-service';
import { appVersion, projectRoot } from './paths';
import type { WorkspaceSettings } from '../core/api/workspace';
import { listFolder, readTextFile, sniffFile, writeTextFile } from './services/file-service';
import { listProfiles } from './services/profile-service';
import { listDevices } from './services/device-service';
import { completeKernelFacts } from './services/kernel-facts-service';
import { discover } from './services/discovery-service';
import { runDoctor } from './doctor/gather';
import type { Workbench } from './workbench';
import { PlanFileError, readPlanFile, writeJsonFile, writeResultFile } from './services/plan-files';
import { listGallery, loadSample } from './services/sample-service';
import { errorCode } from './process/supervised-process';
import type { SanitizerTool } from '../core/sanitizer/findings';
import { sanitizePlan } from './services/sanitize-plan-service';
import { checkPlans } from './services/check-service';
import { CheckConfigError, planDataTarget } from './services/check-targets';
import { SanitizerBusyError, SanitizerGate } from './services/sanitizer-gate';
import { SANITIZER_BUSY } from '../core/sanitizer/sanitizer-busy';
import { SanitizerUnavailableError, sanitizeProgram } from './tools/sanitize-program';
import { SanitizerImportError } from './tools/sanitize-import';
import { MonitorSessions } from './memory/monitor-sessions';
import { diagnoseHandlers } from './diagnose/diagnose-handlers';
import { kernelProfileHandlers } from './services/kernel-profile-handlers';
import { confinePaths } from './request-paths';
import { openPaths, type PathPolicy } from './services/workspace-paths';
import { fullPathToWrite } from './services/write-path';
import { exportMemory } from './memory/export-memory';
import { openMemoryTimelines, SnapshotImportError } from './memory/snapshot-client';
import { BundleInputError, exportBundle, gatherBundle, previewOf, type BundleRequest } from './bundle/bundle-service';
import { BundleRefusedError } from './bundle/read-bundle';
import { importSanitizerReportInReader, openBundleInReader, readRunOutcomeInReader } from './readers/open-in-reader';
import { BundleCancelledError, BundleWriteError } from './bundle/write-bundle';

/** What a bundle request from the UI asks for, as the bundle service takes it. */
function bundleRequest(r: ChannelRequest<'bundle.preview'>): BundleRequest {
  return {
    plan: r.plan,
    outcome: r.outcome,
    origin: r.origin,
    sanitizer: r.sanitizer ?? null,
    samples: r.samples ?? null,
    profile: r.profile ?? null,
    includeSources: r.includeSources ?? true,
    redact: r.redact ?? true,
    recordedHere: r.recordedHere ?? false,
  };
}

/** A bundle's problems reach the user as their message, with a code the UI can tell apart. */
async function userBundle<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BundleRefusedError) throw new ApiError(error.message, 'BUNDLE_REFUSED');
    if (error instanceof BundleInputError) throw new ApiError(error.message, 'BUNDLE_INPUT');
    if (error instanceof BundleWriteError) throw new ApiError(error.message, 'BUNDLE_WRITE');
    if (error instanceof BundleCancelledError) throw new ApiError(error.message, 'CANCELLED');
    throw error;
  }
}

/** File problems reach the user as their message, not as an internal error. */
async function userFile<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PlanFileError) throw new ApiError(error.message, 'FILE');
    const e = error as NodeJS.ErrnoException;
    if (e.code) throw new ApiError(`${e.message}`, e.code);
    throw error;
  }
}

type Handlers = { [C in ChannelName]: (request: ChannelRequest<C>, context: CallContext<ChannelEvent<C>>) => Promise<ChannelResponse<C>> };

const NO_CONTEXT: CallContext = { signal: new AbortController().signal, emit: () => undefined };

async function listSamples(): Promise<{ name: string; path: string }[]> {
  const root = join(projectRoot(), 'samples');
  const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
  const out: { name: string; path: string }[] = [];
  for (const folder of folders.filter((f) => f.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const files = await readdir(join(root, folder.name)).catch(() => [] as string[]);
    for (const f of files.filter((f) => f.endsWith('.cu')).sort()) out.push({ name: `${folder.name}/${f}`, path: join(root, folder.name, f) });
  }
  return out;
}

/** A plan as a refusal names it: its file, else its kernels. */
function planInWords(plan: unknown, planPath: string | null): string {
  if (planPath) return `the plan ${planPath}`;
  const kernels = (plan as { kernels?: unknown } | null)?.kernels;
  const entries = Array.isArray(kernels)
    ? kernels.flatMap((k) => (typeof (k as { entry?: unknown })?.entry === 'string' ? [(k as { entry: string }).entry.slice(0, 64)] : [])).slice(0, 4)
    : [];
  return entries.length ? `a plan (kernel ${entries.join(', ')})` : 'a plan';
}

export interface HostOptions {
  /** Run programs the UI names (sanitize.program). Electron's user is at the machine; serve must be started with --allow-programs. */
  runsPrograms?: boolean;
  /** Which files requests may name: any for Electron; for serve, its workspace (main/serve/serve-command.ts). */
  paths?: PathPolicy;
}

function appInfo(transport: AppInfo['transport'], runsPrograms: boolean, paths: PathPolicy): AppInfo {
  return {
    name: 'GPU Workbench',
    version: appVersion(),
    transport,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    homeDir: homedir(),
    startDir: paths.startDir,
    workDir: paths.workDir,
    roots: paths.roots,
    hostMemBytes: totalmem(),
    runsPrograms,
  };
}

export function createHandlers(workbench: Workbench, transport: 'electron' | 'serve', options: HostOptions = {}): Handlers {
  const runsPrograms = options.runsPrograms ?? transport === 'electron';
  const paths = options.paths ?? openPaths;
  const monitors = new MonitorSessions();
  // One run under compute-sanitizer for this host, whichever window asks: a second is refused in words.
  const sanitizer = new SanitizerGate();
  const handlers: Handlers = {
    'app.info': async () => appInfo(transport, runsPrograms, paths),
    'discovery.get': () => discover(),
    ...diagnoseHandlers(runsPrograms),
    ...kernelProfileHandlers(workbench),
    'devices.list': () => listDevices(),
    // Every driver and NVML query in it is time-limited (main/doctor/time-limit.ts): a wedged GPU gives a finding, not a hung view.
    'doctor.get': async () => ({ checks: (await runDoctor()).checks }),
    'runners.status': async () => workbench.pool.status(),
    'compile.run': async (request, { signal }) => {
      const options = compileOptionsSchema.parse({ ...request.options, arch: request.options.arch ?? (await workbench.defaultArch()) });
      try {
        const compiled = await workbench.compiler.compile(
          { source: request.source, sourceName: request.sourceName, options, backend: request.backend ?? 'auto' },
          undefined,
          request.document ?? null,
          signal,
        );
        const { image: _image, ...result } = await completeKernelFacts(compiled, workbench.pool);
        return result;
      } catch (error) {
        if (error instanceof CompileStoppedError) throw new ApiError(error.reason, /newer edit/.test(error.reason) ? 'COMPILE_SUPERSEDED' : 'COMPILE_STOPPED');
        throw new ApiError(error instanceof Error ? error.message : String(error), errorCode(error) ?? 'COMPILE_FAILED');
      }
    },
    'compile.cached': async (request) => {
      const options = compileOptionsSchema.parse({ ...request.options, arch: request.options.arch ?? (await workbench.defaultArch()) });
      const cached = await workbench.compiler.cached({ source: request.source, sourceName: request.sourceName, options, backend: request.backend ?? 'auto' });
      if (!cached) return null;
      const { image: _image, ...result } = await completeKernelFacts(cached, workbench.pool);
      return result;
    },
    'compile.sass': async ({ key }) => ({ sass: await workbench.compiler.disassemble(key) }),
    'compile.cancel': async () => ({ cancelled: workbench.compiler.cancel() }),
    'files.read': ({ path }) => readTextFile(path),
    'files.sniff': ({ path }) => sniffFile(path),
    'files.write': ({ path, text, expectedMtimeMs }) => writeTextFile(fullPathToWrite(path), text, expectedMtimeMs),
    'files.list': ({ dir }) => listFolder(dir, paths),
    'samples.list': () => listSamples(),
    'profiles.list': () => listProfiles(),
    'run.plan': ({ plan, timeoutMs, planPath, determinismRuns, sampleIntervalMs }, { signal, emit }) =>
      workbench.runPlan(plan, {
        timeoutMs: timeoutMs ?? 30_000,
        planPath: planPath ?? null,
        ...(determinismRuns !== undefined ? { determinismRuns } : {}),
        ...(sampleIntervalMs !== undefined ? { sampleIntervalMs } : {}),
        // The UI has checked the plan against the chosen device or profile; the host checks it against the device it runs on.
        validate: true,
        signal,
        onPhase: (phase) => emit({ kind: 'phase', phase }),
      }),
    'sanitize.plan': async ({ plan, planPath, tool, timeoutMs }, { signal, emit }) => {
      try {
        const { outcome, report } = await sanitizer.exclusive({ tool: tool as SanitizerTool, what: planInWords(plan, planPath ?? null) }, () =>
          sanitizePlan(
            { plan, planPath: planPath ?? null, tool: tool as SanitizerTool, timeoutMs, signal, onEvent: (event) => emit(event) },
            workbench.compiler,
          ),
        );
        return { report, run: outcome };
      } catch (error) {
        if (error instanceof SanitizerUnavailableError) throw new ApiError(error.message, 'NO_SANITIZER');
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        throw error;
      }
    },
    'check.plan': async ({ plan, planPath, label, timeoutMs }, { signal, emit }) => {
      try {
        // Its four tools run at once: it is the host's one run under compute-sanitizer while it lasts.
        const what = `${planInWords(plan, planPath ?? null)} (Check everything, with its four tools at once; its Cancel is in the Check tab)`;
        return await sanitizer.exclusive({ tool: 'memcheck', what }, async () => {
          // The settings beside the plan are read as any file a request reaches: inside serve's workspace only.
          const target = await planDataTarget(plan, planPath ?? null, label ?? null, timeoutMs ?? null, (p) => paths.read(p));
          return checkPlans([target], workbench, { signal, onEvent: emit });
        });
      } catch (error) {
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        if (error instanceof CheckConfigError) throw new ApiError(error.message, 'CHECK_CONFIG');
        throw error;
      }
    },
    'sanitize.program': async ({ command, cwd, env, tool, timeoutMs }, { signal, emit }) => {
      if (!runsPrograms)
        throw new ApiError(
          'This workbench does not run programs named from the browser: it was started without --allow-programs. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench sanitize -- <command>` in a terminal on the GPU machine.',
          'PROGRAMS_OFF',
        );
      const folder = await stat(cwd).catch(() => null);
      if (!folder?.isDirectory()) throw new ApiError(`The working folder ${cwd} does not exist (or is not a folder).`, 'FILE');
      try {
        return await sanitizer.exclusive({ tool: tool as SanitizerTool, what: command.join(' ') }, () =>
          sanitizeProgram({
            tool: tool as SanitizerTool,
            command,
            cwd,
            env: env ?? {},
            timeoutMs,
            signal,
            onFindings: (count) => emit({ kind: 'findings', count }),
          }),
        );
      } catch (error) {
        if (error instanceof SanitizerUnavailableError) throw new ApiError(error.message, 'NO_SANITIZER');
        if (error instanceof SanitizerBusyError) throw new ApiError(error.message, SANITIZER_BUSY);
        throw error;
      }
    },
    'sanitize.open': async ({ xmlPath, textPath, tool }) => {
      try {
        return await importSanitizerReportInReader(xmlPath, textPath ?? null, (tool as SanitizerTool | null) ?? null);
      } catch (error) {
        if (error instanceof SanitizerImportError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
    'run.page': async (request) => {
      try {
        return await workbench.pool.page(request);
      } catch (error) {
        throw new ApiError((error as Error).message, 'PAGE_GONE');
      }
    },
    'monitor.start': (request, context) => monitors.start(request, context),
    'monitor.stop': async ({ id }) => ({ stopped: monitors.stop(id) }),
    'run.open': ({ path }) => userFile(() => readRunOutcomeInReader(path)),
    'memory.open': async ({ path }, { signal, emit }) => {
      try {
        return await openMemoryTimelines(path, { signal: signal as AbortSignal, onPhase: (phase) => emit({ kind: 'phase', phase }) });
      } catch (error) {
        if (error instanceof SnapshotImportError)
          throw new ApiError(
            error.kind === 'refused' ? `${path} was refused: ${error.message}` : error.message,
            `MEMORY_${error.kind.toUpperCase().replace(/-/g, '_')}`,
          );
        throw error;
      }
    },
    'memory.export': (request) => userFile(() => exportMemory(request, fullPathToWrite(request.path))),
    'run.save': ({ path, outcome }) => userFile(() => writeResultFile(fullPathToWrite(path), outcome)),
    'plans.read': ({ path }) => userFile(async () => ({ plan: (await readPlanFile(path, {}, paths)).plan, path })),
    'plans.write': ({ path, plan }) => userFile(() => writeJsonFile(fullPathToWrite(path), plan)),
    'bundle.preview': (request, { signal }) =>
      userBundle(async () => previewOf(await gatherBundle(bundleRequest(request), { compiler: workbench.compiler }, { signal }), bundleRequest(request))),
    'bundle.export': (request, { signal, emit }) =>
      userBundle(() => exportBundle(fullPathToWrite(request.path), bundleRequest(request), { compiler: workbench.compiler }, { signal, onEvent: emit })),
    // Read into memory within the bundle limits; nothing is written, compiled or run.
    'bundle.open': ({ path }) => {
      if (!isAbsolute(path))
        throw new ApiError(
          `Give the bundle's full path (starting with /): "${path}" is relative to the folder the workbench host was started in (${process.cwd()}).`,
          'RELATIVE_PATH',
        );
      return userBundle(() => openBundleInReader(path));
    },
    'gallery.list': () => userFile(async () => (await listGallery()).map((s) => ({ name: s.name, ...s.manifest }))),
    'gallery.load': ({ name, variant }) =>
      userFile(async () => {
        const s = await loadSample(name, variant);
        return { plan: s.plan, planPath: s.planPath, sourcePath: s.sourcePath };
      }),
    'drafts.list': () => workbench.drafts.list(),
    'drafts.save': async (draft) => {
      await workbench.drafts.save(draft);
      return { saved: true as const };
    },
    'drafts.discard': async ({ id }) => {
      await workbench.drafts.discard(id);
      return { discarded: true as const };
    },
    'workspace.get': () => workbench.workspace.get(),
    // The schema has checked it (recentFiles entry by entry, so its declared input is unknown).
    'workspace.set': (change) => workbench.workspace.set(change as Partial<WorkspaceSettings>),
  };
  return confinePaths(handlers, paths);
}

/** The host boundary: checks the channel and validates the request before any handler sees it. */
export async function dispatch(handlers: Handlers, channel: unknown, request: unknown, context: CallContext = NO_CONTEXT): Promise<Envelope<unknown>> {
  if (!isChannelName(channel)) return { ok: false, error: { code: 'UNKNOWN_CHANNEL', message: `There is no API call named ${JSON.stringify(channel)}.` } };
  const parsed = channels[channel].request.safeParse(request ?? {});
  if (!parsed.success) return { ok: false, error: { code: 'BAD_REQUEST', message: `Invalid request for ${channel}: ${describeIssues(parsed.error)}` } };
  const cancelled = (): Envelope<unknown> => ({ ok: false, error: { code: 'CANCELLED', message: `${channel} was cancelled.` } });
  if (context.signal.aborted) return cancelled();
  try {
    const handler = handlers[channel] as (r: unknown, c: CallContext) => Promise<unknown>;
    const value = await handler(parsed.data, context);
    return context.signal.aborted && !ANSWERED_AFTER_CANCEL.has(channel) ? cancelled() : { ok: true, value };
  } catch (error) {
    if (context.signal.aborted) return cancelled();
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code: error instanceof ApiError ? error.code : 'HOST_ERROR', message } };
  }
}
