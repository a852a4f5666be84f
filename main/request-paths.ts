import type { CallContext, ChannelName } from '../core/api/channels';
import type { PathPolicy } from './services/workspace-paths';

/**
 * What a path-carrying field of a request names: a file read or written, a folder (listed, searched for
 * #include, run in), a launch plan (its file initializers and include folders) or compile options (include folders).
 */
type PathKind = 'read' | 'write' | 'folder' | 'plan' | 'compileOptions';

/**
 * Every request field that names a path on the host, by channel: each is checked by the host's PathPolicy before
 * the handler runs (test/unit/request-paths.test.ts holds this table to the channel map).
 */
export const REQUEST_PATHS: { readonly [C in ChannelName]?: Readonly<Record<string, PathKind>> } = {
  'compile.run': { options: 'compileOptions' },
  'compile.cached': { options: 'compileOptions' },
  'files.read': { path: 'read' },
  'files.sniff': { path: 'read' },
  'files.write': { path: 'write' },
  'files.list': { dir: 'folder' },
  'run.plan': { plan: 'plan', planPath: 'read' },
  'sanitize.plan': { plan: 'plan', planPath: 'read' },
  'profile.run': { plan: 'plan', planPath: 'read' },
  'profile.open': { path: 'read' },
  'check.plan': { plan: 'plan', planPath: 'read' },
  'sanitize.program': { cwd: 'folder' },
  'diagnose.program': { cwd: 'folder' },
  'diagnose.export': { path: 'write' },
  'diagnose.open': { path: 'read' },
  'sanitize.open': { xmlPath: 'read', textPath: 'read' },
  'run.open': { path: 'read' },
  'memory.open': { path: 'read' },
  'memory.export': { path: 'write' },
  'run.save': { path: 'write' },
  'plans.read': { path: 'read' },
  'plans.write': { path: 'write' },
  'bundle.preview': { plan: 'plan' },
  'bundle.export': { plan: 'plan', path: 'write' },
  'bundle.open': { path: 'read' },
};

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

async function checkedIncludes(options: unknown, paths: PathPolicy): Promise<unknown> {
  if (!isObject(options) || !Array.isArray(options['includePaths'])) return options;
  const includePaths = await Promise.all(options['includePaths'].map((p) => (typeof p === 'string' ? paths.folder(p) : p)));
  return { ...options, includePaths };
}

/** Each element of a list in `field` through `check`; an object without such a list is left as it is. */
async function eachOf(value: Json, field: string, check: (item: unknown) => Promise<unknown>): Promise<Json> {
  const list = value[field];
  return Array.isArray(list) ? { ...value, [field]: await Promise.all(list.map(check)) } : value;
}

/** A plan from a request (its schema is checked later): the files its buffers are read from, the folders its kernels include from. */
async function checkedPlan(plan: unknown, paths: PathPolicy): Promise<unknown> {
  if (!isObject(plan)) return plan;
  const withBuffers = await eachOf(plan, 'buffers', async (buffer) => {
    const init = isObject(buffer) ? buffer['init'] : null;
    if (!isObject(init) || init['kind'] !== 'file' || typeof init['path'] !== 'string') return buffer;
    return { ...(buffer as Json), init: { ...init, path: await paths.read(init['path']) } };
  });
  return eachOf(withBuffers, 'kernels', async (kernel) =>
    isObject(kernel) && 'options' in kernel ? { ...kernel, options: await checkedIncludes(kernel['options'], paths) } : kernel,
  );
}

const CHECK: Record<PathKind, (value: unknown, paths: PathPolicy) => Promise<unknown>> = {
  read: (value, paths) => paths.read(value as string),
  write: (value, paths) => paths.write(value as string),
  folder: (value, paths) => paths.folder(value as string | null),
  plan: checkedPlan,
  compileOptions: checkedIncludes,
};

/** The request with each path field checked and given in full; absent and null fields stay as they are, except a folder's. */
async function checkedRequest(channel: ChannelName, request: unknown, paths: PathPolicy): Promise<unknown> {
  const fields = REQUEST_PATHS[channel];
  if (!fields || !isObject(request)) return request;
  const out: Json = { ...request };
  for (const [field, kind] of Object.entries(fields)) {
    const value = request[field];
    if (value === undefined || (value === null && kind !== 'folder')) continue;
    out[field] = await CHECK[kind](value, paths);
  }
  return out;
}

type AnyHandler = (request: unknown, context: CallContext) => Promise<unknown>;

/** The handlers, each path in a request checked by `paths` before its handler sees it. */
export function confinePaths<H extends { [C in ChannelName]: unknown }>(handlers: H, paths: PathPolicy): H {
  if (paths.roots === null) return handlers;
  const out = { ...handlers } as Record<ChannelName, AnyHandler>;
  for (const channel of Object.keys(REQUEST_PATHS) as ChannelName[]) {
    const handler = out[channel];
    out[channel] = async (request, context) => handler(await checkedRequest(channel, request, paths), context);
  }
  return out as unknown as H;
}
