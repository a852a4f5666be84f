import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import type { CompileResult } from '../../core/compile/compile-result';
import { BoundedCache } from '../../core/bounded-cache';
import { readRegularFile } from '../services/safe-fs';

export interface CachedCompile {
  result: Omit<CompileResult, 'cached' | 'key' | 'ms'>;
  image: Uint8Array | null;
}

export const defaultCacheDir = (): string =>
  process.env['GPU_WORKBENCH_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'gpu-workbench', 'compile');

interface IndexEntry {
  bytes: number;
  usedMs: number;
}

/**
 * Compiled kernels on disk, keyed (as CuPy keys its kernel cache) by everything that changes the
 * output: source, options, target architecture, backend and compiler version. Entries are written to a
 * temporary name and renamed, so a crash never leaves a half entry; the folder is kept under a size bound
 * by evicting the least recently used. The folder is scanned once; after that the index in memory keeps
 * sizes and last use, so a write costs no scan however many entries the folder holds.
 */
export class CompileCache {
  /** Entries being written: answered from memory so that a hit right after a compile is never missed. */
  private readonly writing = new Map<string, CachedCompile>();
  /** The most recent entries, in memory: a re-run of an unchanged kernel reads no file. */
  private readonly recent = new BoundedCache<string, CachedCompile>(32);
  /** Entries on disk with their size and last use, read once: a miss (every edit) then costs no file system call. */
  private index: Promise<Map<string, IndexEntry>> | null = null;
  /** The same index once it is read, for the synchronous paths. */
  private indexRead: Map<string, IndexEntry> | null = null;
  private totalBytes = 0;

  constructor(
    readonly dir: string = defaultCacheDir(),
    readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  private entries(): Promise<Map<string, IndexEntry>> {
    this.index ??= this.scan();
    return this.index;
  }

  private async scan(): Promise<Map<string, IndexEntry>> {
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const found = await Promise.all(
      files
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .map(async (f) => {
          const key = f.slice(0, -5);
          const [json, bin] = await Promise.all([stat(join(this.dir, f)).catch(() => null), stat(join(this.dir, `${key}.bin`)).catch(() => null)]);
          return json ? ([key, { bytes: json.size + (bin?.size ?? 0), usedMs: json.mtimeMs }] as const) : null;
        }),
    );
    const index = new Map(found.filter((e) => e !== null));
    for (const e of index.values()) this.totalBytes += e.bytes;
    this.indexRead = index;
    return index;
  }

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
    if (pending) {
      const indexed = this.indexRead?.get(key);
      if (indexed) indexed.usedMs = Date.now();
      return pending;
    }
    const indexed = (await this.entries()).get(key);
    if (!indexed) return null;
    try {
      // An entry larger than the whole cache is never written: the bound only refuses what others put there.
      const json = (await readRegularFile(join(this.dir, `${key}.json`), this.maxBytes)).bytes.toString('utf8');
      const entry = JSON.parse(json) as { result: CachedCompile['result']; hasImage: boolean };
      const image = entry.hasImage ? new Uint8Array((await readRegularFile(join(this.dir, `${key}.bin`), this.maxBytes)).bytes) : null;
      const now = new Date();
      indexed.usedMs = now.getTime();
      // The file's time is the last use another session sees when it scans the folder.
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
    const json = JSON.stringify({ result: entry.result, hasImage: entry.image !== null });
    if (entry.image) {
      await writeFile(join(this.dir, `${tmp}.bin`), entry.image);
      await rename(join(this.dir, `${tmp}.bin`), join(this.dir, `${key}.bin`));
    }
    await writeFile(join(this.dir, `${tmp}.json`), json);
    await rename(join(this.dir, `${tmp}.json`), join(this.dir, `${key}.json`));
    const index = await this.entries();
    const bytes = Buffer.byteLength(json) + (entry.image?.byteLength ?? 0);
    this.totalBytes += bytes - (index.get(key)?.bytes ?? 0);
    index.set(key, { bytes, usedMs: Date.now() });
    if (this.totalBytes > this.maxBytes) await this.evict(index);
  }

  /** Removes least recently used entries until the folder is under its bound. */
  private async evict(index: Map<string, IndexEntry>): Promise<void> {
    const oldestFirst = [...index].sort((a, b) => a[1].usedMs - b[1].usedMs);
    for (const [key, e] of oldestFirst) {
      if (this.totalBytes <= this.maxBytes) break;
      index.delete(key);
      this.recent.delete(key);
      this.totalBytes -= e.bytes;
      await rm(join(this.dir, `${key}.json`), { force: true });
      await rm(join(this.dir, `${key}.bin`), { force: true });
    }
  }

  /** Bytes the folder's entries take, as the index counts them. */
  async size(): Promise<{ entries: number; bytes: number }> {
    const index = await this.entries();
    return { entries: index.size, bytes: this.totalBytes };
  }
}
