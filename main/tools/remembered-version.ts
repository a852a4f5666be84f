import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

import { readRegularFile } from '../services/safe-fs';

/**
 * A toolkit program's version, remembered on disk by the file that runs (its path, device, inode, size and time of
 * change), so a new CLI process does not ask it again. Each `diagnose` or `sanitize` asked compute-sanitizer's
 * `--version` beside its first run under the tool: a second start of the tool at the same moment, every time. A new
 * toolkit in the same place is a new file, so a new key, and is asked again.
 *
 * The file is the user's own cache, but read as data all the same: opened non-blocking and bounded in size, a regular
 * file only, every entry a version's shape (digits and dots, shown, never run), anything else ignored; a file that
 * cannot be read or written costs only the question. The key follows links to the file that runs, not what a wrapper
 * script may pick at run time: a wrapper that switches toolkits without changing is shown its first answer.
 */
export async function rememberedToolVersion(path: string, ask: () => Promise<string | null>, cacheFile = toolVersionsFile()): Promise<string | null> {
  const key = fileKey(path);
  if (!key) return ask();
  const versions = await readVersions(cacheFile);
  if (versions[key]) return versions[key];
  const version = await ask();
  if (version && VERSION.test(version)) remember(cacheFile, versions, key, version);
  return version;
}

/**
 * The versions file: GPU_WORKBENCH_TOOL_VERSIONS when it names an absolute path (the test suites keep theirs apart),
 * else under XDG_CACHE_HOME when it names an absolute folder (as the XDG spec says), else under ~/.cache.
 */
export const toolVersionsFile = (): string => {
  const own = process.env['GPU_WORKBENCH_TOOL_VERSIONS'];
  if (own && isAbsolute(own)) return own;
  const home = process.env['XDG_CACHE_HOME'];
  return join(home && isAbsolute(home) ? home : join(homedir(), '.cache'), 'gpu-workbench', 'tool-versions.json');
};

/** "2025.3.0.0", "13.0.1": digits and dots, short. */
const VERSION = /^\d[\d.]{0,31}$/;
const MAX_FILE_BYTES = 64 * 1024;
/** Entries kept, the newest last: toolkits side by side are a handful. */
const MAX_ENTRIES = 32;

/** The program's file as it is now; null when it is not a regular file. */
function fileKey(path: string): string | null {
  try {
    const s = statSync(path);
    return s.isFile() ? `${path}\0${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}` : null;
  } catch {
    return null;
  }
}

async function readVersions(cacheFile: string): Promise<Record<string, string>> {
  try {
    const { bytes } = await readRegularFile(cacheFile, MAX_FILE_BYTES);
    const data: unknown = JSON.parse(bytes.toString('utf8'));
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return {};
    return Object.fromEntries(Object.entries(data).filter(([k, v]) => k.length <= 4096 && typeof v === 'string' && VERSION.test(v)));
  } catch {
    return {};
  }
}

/** The versions read before asking, with this one added last; the oldest beyond MAX_ENTRIES dropped. */
function remember(cacheFile: string, known: Record<string, string>, key: string, version: string): void {
  const entries = [...Object.entries(known), [key, version] as const].slice(-MAX_ENTRIES);
  const temp = `${cacheFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
    // 'wx': a name that exists (a link someone left) is never written through.
    writeFileSync(temp, JSON.stringify(Object.fromEntries(entries)), { mode: 0o600, flag: 'wx' });
    renameSync(temp, cacheFile);
  } catch {
    // not remembered: the next process asks again
    try {
      unlinkSync(temp);
    } catch {
      // never made
    }
  }
}
