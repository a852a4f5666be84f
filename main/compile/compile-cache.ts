import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import type { CompileResult } from '../../core/compile/compile-result';
import { BoundedLru } from '../bounded-lru';

export interface CachedCompile {
  result: Omit<CompileResult, 'cached' | 'key' | 'ms'>;
  image: Uint8Array | null;
}

export const defaultCacheDir = (): string =>
  process.env['GPU_WORKBENCH_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'gpu-workbench', 'compile');

/**
 * Compiled kernels on disk, keyed (as CuPy keys its kernel cache) by everything that changes the
 * output: source, options, target architecture, backend and compiler version. Entries are written to a
 * temporary name and renamed, so a crash never leaves a half entry; the folder is kept under a size bound
 * by evicting the least recently used.
 */
export class CompileCache {
  private writes = 0;
  /** Entries being written: answered from memory so that a hit right after a compile is never missed. */
  private readonly writing = new Map<string, CachedCompile>();
  /** The most recent entries, in memory: a re-run of an unchanged kernel reads no file. */
  private readonly recent = new BoundedLru<string, CachedCompile>(32);
  /** Keys on disk, read once: a miss (every edit) then costs no file system call. */
  private index: Promise<Set<string>> | null = null;

  private keys(): Promise<Set<string>> {
    this.index ??= readdir(this.dir)
      .then((files) => new Set(files.filter((f) => f.endsWith('.json') && !f.startsWith('.')).map((f) => f.slice(0, -5))))
      .catch(() => new Set<string>());
    return this.index;
  }

  constructor(
    readonly dir: string = defaultCacheDir(),
    readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  static key(parts: { source: string; sourceName: string; options: unknown; backend: string; compilerVersion: string }): string {
    const hash = createHash('sha256');
    for (const part of [parts.backend, parts.compilerVersion, JSON.stringify(parts.options), parts.sourceName, parts.source]) {
      hash.update(part);
      hash.update('\0');
    }
    return hash.digest('hex');
  }

  async get(key: string): Promise<CachedCompile | null> {
    const pending = this.writing.get(key) ?? this.recent.get(key);
    if (pending) return pending;
    if (!(await this.keys()).has(key)) return null;
    try {
      const json = await readFile(join(this.dir, `${key}.json`), 'utf8');
      const entry = JSON.parse(json) as { result: CachedCompile['result']; hasImage: boolean };
      const image = entry.hasImage ? new Uint8Array(await readFile(join(this.dir, `${key}.bin`))) : null;
      const now = new Date();
      void utimes(join(this.dir, `${key}.json`), now, now).catch(() => undefined);
      this.recent.set(key, { result: entry.result, image });
      return { result: entry.result, image };
    } catch {
      return null;
    }
  }

  async put(key: string, entry: CachedCompile): Promise<void> {
    this.writing.set(key, entry);
    this.recent.set(key, entry);
    try {
      await this.write(key, entry);
    } finally {
      this.writing.delete(key);
    }
  }

  private async write(key: string, entry: CachedCompile): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = `.${key}.${randomBytes(6).toString('hex')}`;
    if (entry.image) {
      await writeFile(join(this.dir, `${tmp}.bin`), entry.image);
      await rename(join(this.dir, `${tmp}.bin`), join(this.dir, `${key}.bin`));
    }
    await writeFile(join(this.dir, `${tmp}.json`), JSON.stringify({ result: entry.result, hasImage: entry.image !== null }));
    await rename(join(this.dir, `${tmp}.json`), join(this.dir, `${key}.json`));
    (await this.keys()).add(key);
    if (++this.writes % 16 === 1) await this.evict();
  }

  /** Removes least recently used entries until the folder is under its bound. */
  async evict(): Promise<void> {
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const entries = await Promise.all(
      files
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .map(async (f) => {
          const key = f.slice(0, -5);
          const [json, bin] = await Promise.all([stat(join(this.dir, f)), stat(join(this.dir, `${key}.bin`)).catch(() => null)]);
          return { key, used: json.mtimeMs, bytes: json.size + (bin?.size ?? 0) };
        }),
    );
    let total = entries.reduce((a, e) => a + e.bytes, 0);
    for (const e of entries.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      (await this.keys()).delete(e.key);
      await rm(join(this.dir, `${e.key}.json`), { force: true });
      await rm(join(this.dir, `${e.key}.bin`), { force: true });
      total -= e.bytes;
    }
  }
}
