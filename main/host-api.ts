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
import { homedir, totalmem } from 'node:os';

import { appVersion } from './paths';
import { listDevices } from './services/device-service';
import { discover } from './services/discovery-service';
import { runDoctor } from './doctor/gather';
import type { Workbench } from './workbench';
import { SanitizerGate } from './services/sanitizer-gate';
import { MonitorSessions } from './memory/monitor-sessions';
import { HeldResults } from './services/held-results';
import { diagnoseHandlers } from './diagnose/diagnose-handlers';
import { bundleHandlers } from './handlers/bundle-handlers';
import { compileHandlers } from './handlers/compile-handlers';
import { fileHandlers } from './handlers/file-handlers';
import { runHandlers } from './handlers/run-handlers';
import { sanitizeHandlers } from './handlers/sanitize-handlers';
import { stateHandlers } from './handlers/state-handlers';
import { kernelProfileHandlers } from './services/kernel-profile-handlers';
import { confinePaths } from './request-paths';
import { openPaths, type PathPolicy } from './services/workspace-paths';

type Handlers = { [C in ChannelName]: (request: ChannelRequest<C>, context: CallContext<ChannelEvent<C>>) => Promise<ChannelResponse<C>> };

const CHECK_ANSWERS = checksAnswers();
const NO_CONTEXT: CallContext = { signal: new AbortController().signal, emit: () => undefined };

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
  // What this host made or read for the UI (outcomes, timelines, a monitor's samples), named by id in save and export calls.
  const held = new HeldResults();
  const monitors = new MonitorSessions(held);
  // One run under compute-sanitizer for this host, whichever window asks: a second is refused in words.
  const sanitizer = new SanitizerGate();
  const handlers: Handlers = {
    'app.info': async () => appInfo(transport, runsPrograms, paths),
    'discovery.get': () => discover(),
    'devices.list': () => listDevices(),
    // Every driver and NVML query in it is time-limited (main/doctor/time-limit.ts): a wedged GPU gives a finding, not a hung view.
    'doctor.get': async () => ({ checks: (await runDoctor()).checks }),
    ...compileHandlers(workbench),
    ...fileHandlers(paths, held),
    ...runHandlers(workbench, monitors, held),
    ...sanitizeHandlers(workbench, { runsPrograms, paths, sanitizer, held }),
    ...kernelProfileHandlers(workbench, held),
    ...diagnoseHandlers(runsPrograms, workbench.sanitizerSpares),
    ...bundleHandlers(workbench, held),
    ...stateHandlers(workbench),
  };
  return confinePaths(handlers, paths);
}

/**
 * Whether dispatch checks each answer against its channel's response schema: in development and tests
 * (NODE_ENV=development, as `npm start` runs, or test, as scripts/run-tests.mjs runs), not for a user's host, where it
 * would cost every call a walk over its answer (a run's event log, a timeline) and turn a schema's oversight into a
 * refused answer. GPU_WORKBENCH_CHECK_RESPONSES=1 or 0 decides it outright.
 */
export function checksAnswers(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const asked = env['GPU_WORKBENCH_CHECK_RESPONSES'];
  if (asked === '1' || asked === '0') return asked === '1';
  return env['NODE_ENV'] === 'development' || env['NODE_ENV'] === 'test';
}

const SHOWN_PROBLEMS = 3;

/** Why a handler's answer is not what its channel declares, naming each field; null when it is. */
function answerProblem(channel: ChannelName, value: unknown): string | null {
  const checked = channels[channel].response.safeParse(value);
  if (checked.success) return null;
  const issues = checked.error.issues;
  const shown = issues.slice(0, SHOWN_PROBLEMS).map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : 'the answer'}: ${issue.message}`);
  const more = issues.length > SHOWN_PROBLEMS ? `; and ${issues.length - SHOWN_PROBLEMS} more` : '';
  return `The host answered ${channel} with something its declaration does not allow (a bug in the host): ${shown.join('; ')}${more}.`;
}

/**
 * The host boundary: checks the channel and validates the request before any handler sees it, and (with `checkAnswers`)
 * the handler's answer before any caller does.
 */
export async function dispatch(
  handlers: Handlers,
  channel: unknown,
  request: unknown,
  context: CallContext = NO_CONTEXT,
  checkAnswers = CHECK_ANSWERS,
): Promise<Envelope<unknown>> {
  if (!isChannelName(channel)) return { ok: false, error: { code: 'UNKNOWN_CHANNEL', message: `There is no API call named ${JSON.stringify(channel)}.` } };
  const parsed = channels[channel].request.safeParse(request ?? {});
  if (!parsed.success) return { ok: false, error: { code: 'BAD_REQUEST', message: `Invalid request for ${channel}: ${describeIssues(parsed.error)}` } };
  const cancelled = (): Envelope<unknown> => ({ ok: false, error: { code: 'CANCELLED', message: `${channel} was cancelled.` } });
  if (context.signal.aborted) return cancelled();
  try {
    const handler = handlers[channel] as (r: unknown, c: CallContext) => Promise<unknown>;
    const value = await handler(parsed.data, context);
    if (context.signal.aborted && !ANSWERED_AFTER_CANCEL.has(channel)) return cancelled();
    const problem = checkAnswers ? answerProblem(channel, value) : null;
    return problem ? { ok: false, error: { code: 'BAD_ANSWER', message: problem } } : { ok: true, value };
  } catch (error) {
    if (context.signal.aborted) return cancelled();
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code: error instanceof ApiError ? error.code : 'HOST_ERROR', message } };
  }
}
