import { ApiError, channels, isChannelName, type ChannelName, type ChannelRequest, type ChannelResponse, type Envelope } from '../core/api/channels';
import { doctorChecks } from '../core/discovery';
import { describeIssues } from '../core/plan/plan-schema';
import { appVersion } from './paths';
import { listDevices } from './services/device-service';
import { discover } from './services/discovery-service';
import type { Workbench } from './workbench';

type Handlers = { [C in ChannelName]: (request: ChannelRequest<C>) => Promise<ChannelResponse<C>> };

export function createHandlers(workbench: Workbench, transport: 'electron' | 'serve'): Handlers {
  return {
    'app.info': async () => ({
      name: 'GPU Workbench',
      version: appVersion(),
      transport,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    }),
    'discovery.get': () => discover(),
    'devices.list': () => listDevices(),
    'doctor.get': async () => {
      const report = await discover();
      const devices = report.cuda.loaded ? await listDevices() : null;
      const count = devices?.ok ? devices.devices.length : null;
      const error = devices && !devices.ok ? `${devices.problem.title}: ${devices.problem.detail}` : null;
      return { checks: doctorChecks(report, count, error) };
    },
    'runners.status': async () => workbench.pool.status(),
  };
}

/** The host boundary: checks the channel and validates the request before any handler sees it. */
export async function dispatch(handlers: Handlers, channel: unknown, request: unknown): Promise<Envelope<unknown>> {
  if (!isChannelName(channel)) return { ok: false, error: { code: 'UNKNOWN_CHANNEL', message: `There is no API call named ${JSON.stringify(channel)}.` } };
  const parsed = channels[channel].request.safeParse(request ?? {});
  if (!parsed.success) return { ok: false, error: { code: 'BAD_REQUEST', message: `Invalid request for ${channel}: ${describeIssues(parsed.error)}` } };
  try {
    const handler = handlers[channel] as (r: unknown) => Promise<unknown>;
    return { ok: true, value: await handler(parsed.data) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code: error instanceof ApiError ? error.code : 'HOST_ERROR', message } };
  }
}
