import { z } from 'zod';

import { compileOptionsSchema } from '../compile/compile-options';
import type { CompileResult } from '../compile/compile-result';
import type { DeviceInfo, DeviceMemory } from '../devices';
import type { DeviceProfile } from '../validate/device-limits';
import { MAX_SOURCE_BYTES } from '../limits';
import { draftSchema, type Draft } from './drafts';
import type { DiscoveryReport, DoctorCheck, Problem } from '../discovery';

/**
 * Every renderer -> host call, declared once (ARCHITECTURE.md §4). The host validates each request
 * with its schema whichever transport carried it (Electron IPC or the serve WebSocket).
 */
const response = <T>() => undefined as unknown as T;

export type DevicesResult =
  | { ok: true; devices: DeviceInfo[]; memory: DeviceMemory[] | null; driverVersion: string | null; memoryProblem: string | null }
  | { ok: false; problem: Problem };

export interface AppInfo {
  name: string;
  version: string;
  transport: 'electron' | 'serve';
  node: string;
  platform: string;
}

export interface RunnerPoolStatus {
  runners: { pid: number; ordinal: number; role: 'active' | 'spare'; contextReady: boolean; busy: boolean }[];
  recentExits: { pid: number; kind: string; summary: string; at: string }[];
}

export const channels = {
  'app.info': { request: z.object({}).strict(), response: response<AppInfo>() },
  'discovery.get': { request: z.object({}).strict(), response: response<DiscoveryReport>() },
  'devices.list': { request: z.object({}).strict(), response: response<DevicesResult>() },
  'doctor.get': { request: z.object({}).strict(), response: response<{ checks: DoctorCheck[] }>() },
  'runners.status': { request: z.object({}).strict(), response: response<RunnerPoolStatus>() },
  /** Compiles for the editor; `arch` defaults to the first device's, or sm_90 without a GPU. */
  'compile.run': {
    request: z
      .object({
        source: z.string().max(MAX_SOURCE_BYTES),
        sourceName: z.string().min(1).max(256),
        options: compileOptionsSchema.partial({ arch: true }),
        backend: z.enum(['auto', 'nvrtc', 'nvcc']).default('auto'),
      })
      .strict(),
    response: response<CompileResult>(),
  },
  'compile.sass': { request: z.object({ key: z.string().regex(/^[0-9a-f]{64}$/) }).strict(), response: response<{ sass: string | null }>() },
  'compile.cancel': { request: z.object({}).strict(), response: response<{ cancelled: boolean }>() },
  'files.read': { request: z.object({ path: z.string().min(1).max(4096) }).strict(), response: response<{ path: string; text: string; mtimeMs: number }>() },
  'files.write': {
    request: z.object({ path: z.string().min(1).max(4096), text: z.string().max(MAX_SOURCE_BYTES), expectedMtimeMs: z.number().nullable() }).strict(),
    response: response<{ path: string; mtimeMs: number }>(),
  },
  'files.list': {
    request: z.object({ dir: z.string().max(4096).nullable() }).strict(),
    response: response<{ dir: string; parent: string | null; entries: { name: string; kind: 'file' | 'dir'; size: number }[] }>(),
  },
  /** Devices to validate launches against: this machine's, the shipped profiles, the user's own. */
  'profiles.list': {
    request: z.object({}).strict(),
    response: response<{ id: string; label: string; source: 'device' | 'shipped' | 'user'; profile: DeviceProfile }[]>(),
  },
  'samples.list': { request: z.object({}).strict(), response: response<{ name: string; path: string }[]>() },
  'drafts.list': { request: z.object({}).strict(), response: response<Draft[]>() },
  'drafts.save': { request: draftSchema, response: response<{ saved: true }>() },
  'drafts.discard': { request: z.object({ id: draftSchema.shape.id }).strict(), response: response<{ discarded: true }>() },
} as const;

export type Channels = typeof channels;
export type ChannelName = keyof Channels;
export type ChannelRequest<C extends ChannelName> = z.input<Channels[C]['request']>;
export type ChannelResponse<C extends ChannelName> = Channels[C]['response'];

/** What every transport answers: the handler's value, or a user-facing error. Never a stack trace. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: { message: string; code: string } };

/** The one interface the renderer depends on. */
export interface WorkbenchApi {
  invoke<C extends ChannelName>(channel: C, request: ChannelRequest<C>): Promise<ChannelResponse<C>>;
}

export const isChannelName = (name: unknown): name is ChannelName => typeof name === 'string' && Object.hasOwn(channels, name);

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
