import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

import { commandLineOf, parseProcStat, pidNamespaceOf, realUidOf, userNameOf, type PidNamespace, type ProcStat } from '../../core/memory/process-flags';

/**
 * What the monitor reads from /proc about a process, each read bounded. stat, status and the namespace
 * link are read on the JS thread (the kernel builds them from the task without taking the process's memory
 * lock); cmdline is read off it with a time limit, because the kernel reads it out of the process's own
 * memory, and a process stuck in the driver's teardown can hold that lock for a long time.
 */
const STAT_BYTES = 4096;
const STATUS_BYTES = 16_384;
const CMDLINE_BYTES = 8192;
const PASSWD_BYTES = 1 << 20;
export const CMDLINE_TIMEOUT_MS = 1000;
/** Reads of cmdline still hanging past their limit; past this many, command lines are no longer read. */
const MAX_HUNG_READS = 2;

/** Reused by the reads the monitor makes several times a second (stat, status); the text is copied out of it. */
const scratch = Buffer.alloc(STATUS_BYTES);

/** A bounded read of a small file (a /proc file says its size is 0: read to the end or the bound). */
export function readSmallFileSync(path: string, maxBytes: number): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = maxBytes <= scratch.length ? scratch : Buffer.alloc(maxBytes);
    let read = 0;
    while (read < maxBytes) {
      const n = readSync(fd, buffer, read, maxBytes - read, null);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

export class ProcReader {
  private passwd: string | null | undefined;
  /** Names found in the passwd text read once, by uid (reflagging a process asks at every listing). */
  private readonly userNames = new Map<number, string | null>();
  private hungReads = 0;
  readonly namespace: PidNamespace;

  constructor(private readonly root = '/proc') {
    let link: string | null = null;
    try {
      link = readlinkSync(`${root}/self/ns/pid`);
    } catch {
      link = null;
    }
    this.namespace = pidNamespaceOf(link);
  }

  stat(pid: number): ProcStat | null {
    const text = readSmallFileSync(`${this.root}/${pid}/stat`, STAT_BYTES);
    return text === null ? null : parseProcStat(text);
  }

  parentOf = (pid: number): number | null => this.stat(pid)?.ppid ?? null;

  uid(pid: number): number | null {
    const text = readSmallFileSync(`${this.root}/${pid}/status`, STATUS_BYTES);
    return text === null ? null : realUidOf(text);
  }

  userName(uid: number): string | null {
    if (this.passwd === undefined) this.passwd = readSmallFileSync('/etc/passwd', PASSWD_BYTES);
    if (this.passwd === null) return null;
    let name = this.userNames.get(uid);
    if (name === undefined) this.userNames.set(uid, (name = userNameOf(this.passwd, uid)));
    return name;
  }

  /** Its command line, or null (unreadable, empty, or not read in time). */
  async cmdline(pid: number): Promise<string | null> {
    if (this.hungReads >= MAX_HUNG_READS) return null;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const read = (async () => {
      const handle = await open(`${this.root}/${pid}/cmdline`, 'r');
      try {
        const buffer = Buffer.alloc(CMDLINE_BYTES);
        const { bytesRead } = await handle.read(buffer, 0, CMDLINE_BYTES, 0);
        return commandLineOf(buffer.subarray(0, bytesRead).toString('utf8'));
      } finally {
        await handle.close();
      }
    })().catch(() => null);
    const limit = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        this.hungReads++;
        resolve(null);
      }, CMDLINE_TIMEOUT_MS);
    });
    void read.finally(() => {
      if (timedOut) this.hungReads--;
    });
    try {
      return await Promise.race([read, limit]);
    } finally {
      clearTimeout(timer);
    }
  }
}
