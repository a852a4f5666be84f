import { isSticky } from '../../core/cuda/error-catalog';
import { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES } from '../../core/cuda/function-attributes';
import { driverMissingProblem } from '../../core/discovery';
import { describeIssues } from '../../core/plan/plan-schema';
import { LastParse } from '../../core/api/last-parse';
import {
  requestIdSchema,
  runnerRequestSchema,
  STICKY_EXIT_CODE,
  type RunnerProtocol,
  type RunnerRequest,
  type RunnerResults,
  type RunnerStatus,
} from '../../core/runner/protocol';
import type { CudaErrorInfo } from '../../core/runner/run-result';
import { tieLifetimeToHost } from '../process/child-lifetime';
import { childPort, postAndExit, replies } from '../process/child-port';
import { discoverLibraries } from '../services/discovery-service';
import { toCudaError } from './cuda-error';
import { ModuleCache } from './module-cache';
import { executePlan, type ExecutedPlan } from './plan-executor';
import { NO_WARM_UP, warmUpModule, warmUpPlan } from './warm-up';
import { answerTestRequest, testRunnerRequestSchema } from './runner-test-hooks';
import { readPage } from '../../core/plan/buffer-data';
import { elementSize } from '../../core/plan/element-types';

/**
 * A runner: owns one CUDA context for one device for its whole life (ARCHITECTURE.md §1). It opens
 * the context at start so that a warm spare is really warm, answers requests one at a time, and exits
 * after a sticky error, which no later call in this process could recover from.
 */
const started = performance.now();
const ordinal = Number(process.argv[2] ?? '0');
const port = childPort();
const reply = replies<RunnerProtocol, RunnerStatus>(port);
// The driver only: a runner never compiles (NVRTC is a large library to map) nor reads NVML.
const libraries = discoverLibraries(undefined, 'driver');
const addon = libraries.addon.loaded ? require(libraries.addon.path) : null;
const librariesAt = performance.now();
tieLifetimeToHost(addon);
// This process exists to make CUDA calls: each on this thread, with no thread-pool round trip (native/src/async.h).
addon?.setInline(true);

let modules: ModuleCache | null = null;
let runs = 0;
let lastRun: { runId: string; downloads: ExecutedPlan['downloads'] } | null = null;
const status: RunnerStatus = { pid: process.pid, ordinal, contextReady: false, deviceName: null, error: null, startupMs: 0 };

async function start(): Promise<void> {
  if (!addon) {
    status.error = {
      library: 'workbench',
      api: 'require',
      code: -1,
      name: 'WORKBENCH_ADDON_NOT_LOADED',
      message: libraries.addon.error ?? 'native addon not loaded',
    };
  } else if (!libraries.cuda.loaded) {
    const problem = driverMissingProblem(libraries);
    status.error = { library: 'cuda', api: 'dlopen', code: -1, name: 'WORKBENCH_DRIVER_NOT_LOADED', message: `${problem.title}. ${problem.remedy}` };
  } else {
    const contextFrom = performance.now();
    try {
      await addon.openContext(ordinal);
      const devices = (await addon.listDevices([])) as { ordinal: number; name: string }[];
      status.deviceName = devices.find((d) => d.ordinal === ordinal)?.name ?? null;
      status.contextReady = true;
    } catch (error) {
      status.error = toCudaError(error, 'openContext');
    }
    const warmUpFrom = performance.now();
    const warmUpProblem = status.contextReady ? await warmUp() : null;
    status.startupPhases = {
      bootMs: started,
      librariesMs: librariesAt - started,
      contextMs: warmUpFrom - contextFrom,
      warmUpMs: performance.now() - warmUpFrom,
      warmUpProblem,
    };
  }
  status.startupMs = performance.now() - started;
  reply.ready(status);
}

/**
 * One run of the warm-up plan before this runner says it is ready (main/runner/warm-up.ts); answers what went wrong
 * in it, in words, or null. A failure that leaves the context usable is said in the runner's status and goes no
 * further (the user's run meets whatever it was, with its own plan). A sticky one leaves a context no run could use:
 * the runner exits as after any sticky error, before it is ready, and the pool starts another in its place.
 */
async function warmUp(): Promise<string | null> {
  if (process.argv.includes(NO_WARM_UP) || process.env['GPU_WORKBENCH_RUNNER_WARM_UP'] === '0') return null;
  const cache = (modules ??= new ModuleCache(addon));
  try {
    const { result } = await executePlan(
      addon,
      warmUpPlan(ordinal),
      [warmUpModule()],
      { ordinal, name: status.deviceName ?? '' },
      (m) => cache.function(m),
      'warm-up',
    );
    if (result.failure?.sticky) process.exit(STICKY_EXIT_CODE);
    return result.failure ? `${result.failure.error.name}: ${result.failure.error.message}` : null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    addon.captureOutputStop();
  }
}

const replyError = (id: number | null, error: CudaErrorInfo, sticky = false) => reply.error(id, error, sticky);

function notReady(): CudaErrorInfo {
  return status.error ?? { library: 'workbench', api: 'runner', code: -1, name: 'WORKBENCH_NO_CONTEXT', message: 'This runner has no CUDA context' };
}

async function handle(request: RunnerRequest): Promise<void> {
  switch (request.type) {
    case 'status':
      return reply.ok(request.id, request.type, status);
    case 'page': {
      const data = lastRun?.runId === request.runId ? lastRun.downloads.get(request.buffer) : undefined;
      if (!data) {
        return replyError(request.id, {
          library: 'workbench',
          api: 'page',
          code: -1,
          name: 'WORKBENCH_PAGE_GONE',
          message:
            lastRun?.runId === request.runId
              ? `The run did not read back a buffer named "${request.buffer}"`
              : "That run's data is no longer kept (only the latest run's is): run again to page through it",
        });
      }
      const total = Math.floor(data.bytes.byteLength / elementSize(data.type));
      const values = readPage(data.type, data.bytes, request.offset, request.count);
      return reply.ok(request.id, request.type, { runId: request.runId, buffer: request.buffer, offset: request.offset, total, values });
    }
    case 'memInfo':
      if (!status.contextReady) return replyError(request.id, notReady());
      try {
        return reply.ok(request.id, request.type, await addon.memGetInfo());
      } catch (error) {
        return replyError(request.id, toCudaError(error, 'cuMemGetInfo_v2'));
      }
    case 'inspect': {
      if (!status.contextReady) return replyError(request.id, notReady());
      const out: RunnerResults['inspect'] = [];
      for (const module of request.modules) {
        let moduleId: number | null = null;
        try {
          moduleId = await addon.loadModule(module.image);
          const fn = await addon.getFunction(moduleId, module.symbol);
          out.push({ kernel: module.kernel, symbol: module.symbol, attributes: fn.attributes });
        } catch (error) {
          return replyError(request.id, toCudaError(error, 'cuModuleLoadDataEx'));
        } finally {
          if (moduleId !== null) await addon.unloadModule(moduleId).catch(() => undefined);
        }
      }
      return reply.ok(request.id, request.type, out);
    }
    case 'probe': {
      if (!status.contextReady) return replyError(request.id, notReady());
      let moduleId: number | null = null;
      try {
        moduleId = await addon.loadModule(request.module.image);
        let fn = await addon.getFunction(moduleId, request.module.symbol);
        if (request.maxDynamicSharedBytes !== null) {
          await addon.setFunctionAttribute(fn.id, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, request.maxDynamicSharedBytes);
          fn = await addon.getFunction(moduleId, request.module.symbol);
        }
        const result = await addon.probeLaunches({
          functionId: fn.id,
          configs: request.configs,
          args: request.args,
          raiseDynamicShared: request.raiseDynamicShared,
        });
        return reply.ok(request.id, request.type, { attributes: fn.attributes, ...result });
      } catch (error) {
        const e = toCudaError(error, 'cuLaunchKernel');
        const sticky = isSticky(e);
        if (sticky) return postAndExit(port, { type: 'error', id: request.id, error: e, sticky: true }, STICKY_EXIT_CODE);
        return replyError(request.id, e);
      } finally {
        if (moduleId !== null && status.contextReady) await addon.unloadModule(moduleId).catch(() => undefined);
      }
    }
    case 'run': {
      if (!status.contextReady) return replyError(request.id, notReady());
      modules ??= new ModuleCache(addon);
      const cache = modules;
      lastRun = null; // the previous run's pages go now: only the latest is kept
      const runId = `${process.pid}-${++runs}`;
      let executed: ExecutedPlan;
      try {
        executed = await executePlan(
          addon,
          request.plan,
          request.modules,
          { ordinal, name: status.deviceName ?? '' },
          (m) => cache.function(m),
          runId,
          request.timeLimitMs ?? null,
        );
      } finally {
        addon.captureOutputStop(); // already stopped unless the plan threw: this process's own output must not vanish
      }
      const { result, downloads } = executed;
      lastRun = { runId, downloads };
      reply.ok(request.id, request.type, result);
      if (result.failure?.sticky) postAndExit(port, { type: 'error', id: null, error: result.failure.error, sticky: true }, STICKY_EXIT_CODE);
      return;
    }
  }
}

/**
 * What this runner accepts: the protocol's requests, and in the lifecycle tests' build theirs too (runner-test-hooks.ts).
 * A re-run sends a run request it sent before but for its id: that is not walked by the schema again
 * (core/api/last-parse.ts). The last two run requests are remembered (two plans run in turn), and only those: a page
 * or status request between runs costs little to check and evicts nothing. Each holds its module images.
 */
const requests = new LastParse(WORKBENCH_TEST_HOOKS ? testRunnerRequestSchema() : runnerRequestSchema, {
  varying: { field: 'id', schema: requestIdSchema },
  remember: (request) => request.type === 'run',
  capacity: 2,
});

let queue: Promise<void> = Promise.resolve();
/** Requests their callers cancelled while they waited in the queue. */
const dropped = new Set<number>();
port.onMessage((raw) => {
  const parsed = requests.safeParse(raw);
  if (!parsed.success) {
    const id = typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'number' ? (raw as { id: number }).id : null;
    replyError(id, {
      library: 'workbench',
      api: 'runner',
      code: -1,
      name: 'WORKBENCH_BAD_REQUEST',
      message: `The runner refused a malformed request: ${describeIssues(parsed.error)}`,
    });
    return;
  }
  const request = parsed.data;
  if (request.type === 'drop') {
    dropped.add(request.target);
    reply.ok(request.id, request.type, { dropped: true });
    return;
  }
  queue = queue
    // One turn of the event loop first: a drop sent while this request waited is read before it starts.
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(() => {
      // Only the test build parses a 'block' request: in every other the schema refused it above.
      if (!dropped.delete(request.id))
        return WORKBENCH_TEST_HOOKS && request.type === 'block' ? answerTestRequest(port, request) : handle(request as RunnerRequest);
      replyError(request.id, { library: 'workbench', api: request.type, code: -1, name: 'WORKBENCH_CANCELLED', message: 'Cancelled before it started.' });
    })
    .catch((error) => replyError(request.id, toCudaError(error, request.type)));
});

// No SIGTERM handler: a handler runs on the JavaScript thread, which a hung kernel blocks. SIGTERM's
// default action ends the process at once, and the driver releases the context with it.

void start();
