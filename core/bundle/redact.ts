import { DOCTOR_ENV_VARIABLES } from '../doctor/environment-rules';

/**
 * What a bundle hides by default before it leaves the machine: the user's name, the host's name, home
 * folders (→ ~), GPU UUIDs and serial numbers (→ stable placeholders, GPU-0, GPU-1, … in order of first
 * appearance, so two mentions of one GPU still read as one). Pure: the host supplies the names.
 */

/** Variables a bundle carries (an allow-list: nothing else from the environment goes in). */
export const BUNDLE_ENV_VARIABLES: readonly string[] = [
  ...DOCTOR_ENV_VARIABLES,
  'PATH',
  'CUDA_HOME',
  'CUDA_PATH',
  'NVIDIA_VISIBLE_DEVICES',
  'NVIDIA_DRIVER_CAPABILITIES',
  'CUDA_CACHE_DISABLE',
  'CUDA_CACHE_MAXSIZE',
  'CUDA_FORCE_PTX_JIT',
  'CUDA_DISABLE_PTX_JIT',
];

export interface RedactionFacts {
  /** The user's login names (USER, LOGNAME, os.userInfo()). */
  userNames: readonly string[];
  /** The host's names (os.hostname(), HOSTNAME); the short name before the first dot is hidden too. */
  hostNames: readonly string[];
  /** Home folders (HOME, os.homedir()). */
  homeDirs: readonly string[];
  /** GPU serial numbers known to the host (NVML), hidden wherever they appear. */
  gpuSerials?: readonly string[];
}

export interface Redactor {
  readonly enabled: boolean;
  text(value: string): string;
  /**
   * Source code: paths (home folders, other people's), GPU UUIDs and serials only. A user or host name is a
   * word like any other in code — a variable called `root` is not the root user — so code keeps its words.
   */
  code(value: string): string;
  /** A JSON-able value with every string redacted; a key named like a serial or UUID gets its placeholder. */
  json<T>(value: T): T;
  /** A plan: every string as `code` redacts it — identifiers (a buffer named `root`) are words of code, not names of people. */
  codeJson<T>(value: T): T;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const GPU_UUID = /\b(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;
/**
 * Where a path begins: at the start, after a blank, a quote, a bracket or punctuation, after `//` (file:///…), after a
 * one-letter flag (-I/…, -L/…), after an escape written out (\\n) or a terminal colour. Not after a letter or a folder:
 * `/scratch/root` holds no home folder /root.
 */
const PATH_BEGINS = String.raw`(?<=^|[\s"'=:,;()[\]{}<>\u0060]|//|(?:^|[\s"'=,(:])-[A-Za-z]|\\[ntr]|\x1b\[[\d;]*m)`;
/** Where a folder's name ends: not inside a longer name (/home/alice2, /home/alice.bak); a sentence's full stop may follow. */
const NAME_ENDS = String.raw`(?![\w-]|\.\w)`;
/** Other people's home folders: the name in them is a user name too. */
const OTHER_HOME = new RegExp(`${PATH_BEGINS}(/home|/Users)/[^/\\s:"'\u0060\\])}>]+`, 'g');

export const NO_REDACTION: Redactor = { enabled: false, text: (v) => v, code: (v) => v, json: (v) => v, codeJson: (v) => v };

export function makeRedactor(facts: RedactionFacts): Redactor {
  const uuids = new Map<string, string>();
  const serials = new Map<string, string>();
  const uuidPlaceholder = (uuid: string) => {
    const key = uuid.toLowerCase();
    if (!uuids.has(key)) uuids.set(key, `${uuid.startsWith('MIG') ? 'MIG' : 'GPU'}-${uuids.size}`);
    return uuids.get(key)!;
  };
  const serialPlaceholder = (serial: string) => {
    if (!serials.has(serial)) serials.set(serial, `SERIAL-${serials.size}`);
    return serials.get(serial)!;
  };
  const homes = [...new Set(facts.homeDirs.map((h) => h.replace(/\/+$/, '')).filter((h) => h.length > 1))].sort((a, b) => b.length - a.length);
  const hosts = [...new Set(facts.hostNames.flatMap((h) => [h, h.split('.')[0]!]).filter((h) => h.length >= 2 && h !== 'localhost'))].sort(
    (a, b) => b.length - a.length,
  );
  // A one-letter name would blank every such letter: names shorter than 2 are left alone (said in the preview).
  const users = [...new Set(facts.userNames.filter((u) => u.length >= 2))].sort((a, b) => b.length - a.length);
  const knownSerials = [...new Set((facts.gpuSerials ?? []).filter((s) => s.length >= 4))];

  const homeRule = homes.length ? new RegExp(`${PATH_BEGINS}(?:${homes.map(escape).join('|')})${NAME_ENDS}`, 'g') : null;
  const word = (names: string[]) => (names.length ? new RegExp(`(?<![A-Za-z0-9_-])(?:${names.map(escape).join('|')})(?![A-Za-z0-9_-])`, 'gi') : null);
  const hostRule = word(hosts);
  const userRule = word(users);
  const serialRule = knownSerials.length ? new RegExp(knownSerials.map(escape).join('|'), 'g') : null;

  const code = (value: string): string => {
    let out = value.replace(GPU_UUID, uuidPlaceholder);
    if (serialRule) out = out.replace(serialRule, serialPlaceholder);
    if (homeRule) out = out.replace(homeRule, '~');
    return out.replace(OTHER_HOME, (_m, root: string) => `${root}/<user>`);
  };
  const text = (value: string): string => {
    let out = code(value);
    if (hostRule) out = out.replace(hostRule, '<host>');
    if (userRule) out = out.replace(userRule, '<user>');
    return out;
  };
  const walker =
    (strings: (s: string) => string) =>
    <T>(value: T): T => {
      const walk = (v: unknown, key: string | null): unknown => {
        if (typeof v === 'string') {
          if (key && /serial/i.test(key) && v.trim() !== '') return serialPlaceholder(v);
          return strings(v);
        }
        if (Array.isArray(v)) return v.map((x) => walk(x, null));
        if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
        return v;
      };
      return walk(value, null) as T;
    };
  return { enabled: true, text, code, json: walker(text), codeJson: walker(code) };
}

/** The allow-listed variables that are set, redacted: exactly what a bundle's environment.json holds. */
export function bundleEnvironment(env: Record<string, string | undefined>, redactor: Redactor): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of BUNDLE_ENV_VARIABLES) {
    const value = env[name];
    if (value !== undefined) out[name] = redactor.text(value);
  }
  return out;
}
