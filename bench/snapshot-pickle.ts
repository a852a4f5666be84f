/**
 * A PyTorch memory snapshot pickle made up for the benches (never committed, never shown as data): a small
 * pickle writer that writes what torch's pickler writes (protocol 4, strings and dict keys memoised, frame
 * dicts and frame lists written once and referred to through the memo, items in batches of 1000) for a
 * training-like workload: allocations of 512 B to 64 MiB on two streams with a bounded working set, frees
 * (free_requested + free_completed), segment allocs and frees, and two OOMs.
 */
export class PickleWriter {
  private chunks: Uint8Array[] = [];
  private buf = new Uint8Array(1 << 20);
  private at = 0;
  private memoNext = 0;
  private strings = new Map<string, number>();
  private readonly enc = new TextEncoder();
  private view = new DataView(this.buf.buffer);

  private room(n: number) {
    if (this.at + n <= this.buf.length) return;
    this.chunks.push(this.buf.slice(0, this.at));
    this.buf = new Uint8Array(Math.max(1 << 20, n));
    this.view = new DataView(this.buf.buffer);
    this.at = 0;
  }
  byte(b: number) {
    this.room(1);
    this.buf[this.at++] = b;
  }
  u32(n: number) {
    this.room(4);
    this.view.setUint32(this.at, n, true);
    this.at += 4;
  }
  raw(bytes: Uint8Array) {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  /** MEMOIZE the value on top of the stack; returns its memo index. */
  memoize(): number {
    this.byte(0x94);
    return this.memoNext++;
  }
  get(index: number) {
    if (index < 256) {
      this.byte(0x68);
      this.byte(index);
    } else {
      this.byte(0x6a);
      this.u32(index);
    }
  }
  str(s: string) {
    const known = this.strings.get(s);
    if (known !== undefined) return this.get(known);
    const b = this.enc.encode(s);
    if (b.length < 256) {
      this.byte(0x8c);
      this.byte(b.length);
    } else {
      this.byte(0x58);
      this.u32(b.length);
    }
    this.raw(b);
    this.strings.set(s, this.memoize());
  }
  int(n: number) {
    if (n >= 0 && n < 256) {
      this.byte(0x4b);
      this.byte(n);
    } else if (n >= -(2 ** 31) && n < 2 ** 31) {
      this.byte(0x4a);
      this.room(4);
      this.view.setInt32(this.at, n, true);
      this.at += 4;
    } else {
      // LONG1: little-endian two's complement, as short as Python writes it
      const bytes: number[] = [];
      let v = BigInt(n);
      do {
        bytes.push(Number(v & 0xffn));
        v >>= 8n;
      } while (v !== 0n && v !== -1n);
      if ((bytes[bytes.length - 1]! & 0x80) !== (n < 0 ? 0x80 : 0)) bytes.push(n < 0 ? 0xff : 0);
      this.byte(0x8a);
      this.byte(bytes.length);
      for (const b of bytes) this.byte(b);
    }
  }
  bool(b: boolean) {
    this.byte(b ? 0x88 : 0x89);
  }
  /** A dict of already-written pairs: EMPTY_DICT MEMOIZE MARK ... SETITEMS. */
  dict(write: () => void) {
    this.byte(0x7d);
    this.memoize();
    this.byte(0x28);
    write();
    this.byte(0x75);
  }
  /** A list, appended in batches of 1000 as CPython's pickler does. */
  list<T>(items: T[], write: (item: T) => void): number {
    this.byte(0x5d);
    const id = this.memoize();
    for (let i = 0; i < items.length; i += 1000) {
      this.byte(0x28);
      for (const item of items.slice(i, i + 1000)) write(item);
      this.byte(0x65);
    }
    return id;
  }
  finish(): Uint8Array {
    this.byte(0x2e);
    this.chunks.push(this.buf.slice(0, this.at));
    const total = this.chunks.reduce((s, c) => s + c.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

interface Entry {
  action: string;
  addr: number;
  size: number;
  stream: number;
  time: number;
  stack: number;
  deviceFree?: number;
}

/**
 * A snapshot pickle of a training-like workload, as torch writes one: `entries` trace entries, or (with
 * `allocations`) as many as it takes to make that many allocations; at most `workingSet` alive at once.
 */
export function generateSnapshotPickle(size: { entries: number } | { allocations: number }, workingSet = 4000): Uint8Array {
  const entries = 'entries' in size ? size.entries : Infinity;
  const allocations = 'allocations' in size ? size.allocations : Infinity;
  let allocs = 0;
  let seed = 42;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  // 600 frame dicts (C++ and Python ones), 200 stacks of 25–35 frames, the innermost user frame varied.
  const frames = Array.from({ length: 600 }, (_, i) =>
    i < 400
      ? { filename: i % 3 ? '??' : 'CUDACachingAllocator.cpp', line: 0, name: `c10::internal_${i}(unsigned long)` }
      : { filename: `/home/user/train/model_${i % 17}.py`, line: 10 + i, name: `forward_${i}` },
  );
  const stacks = Array.from({ length: 200 }, (_, s) => {
    const n = 25 + (s % 11);
    return Array.from({ length: n }, (_, k) => (k === n - 6 ? 400 + ((s * 7) % 200) : (s * 13 + k * 7) % 400));
  });
  const trace: Entry[] = [];
  const live: { addr: number; size: number; stream: number }[] = [];
  let time = 1_795_445_700_000_000;
  let nextAddr = 0x7f00_0000_0000;
  let segmentLeft = 0;
  while (trace.length < entries && allocs < allocations) {
    time += 1 + Math.floor(rand() * 20);
    const stream = rand() < 0.8 ? 0 : 0x5a5a_0000;
    const stack = Math.floor(rand() * stacks.length);
    if (live.length < workingSet && (live.length < workingSet / 8 || rand() < 0.5)) {
      const size = Math.ceil((512 * 2 ** Math.floor(rand() * 18)) / 512) * 512;
      if (segmentLeft < size) {
        const seg = Math.max(size, 20 * 1024 * 1024);
        trace.push({ action: 'segment_alloc', addr: nextAddr, size: seg, stream, time, stack });
        segmentLeft = seg;
      }
      trace.push({ action: 'alloc', addr: nextAddr, size, stream, time, stack });
      allocs++;
      live.push({ addr: nextAddr, size, stream });
      nextAddr += size;
      segmentLeft -= size;
    } else {
      const k = Math.floor(rand() * live.length);
      const b = live[k]!;
      live[k] = live[live.length - 1]!;
      live.pop();
      trace.push({ action: 'free_requested', addr: b.addr, size: b.size, stream: b.stream, time, stack });
      trace.push({ action: 'free_completed', addr: b.addr, size: b.size, stream: b.stream, time: time + 1, stack });
    }
    if (trace.length % 400_000 < 3 && trace.length > 1000) trace.push({ action: 'oom', addr: 0, size: 2 ** 40, stream, time, stack, deviceFree: 3 * 2 ** 30 });
  }

  const w = new PickleWriter();
  w.byte(0x80);
  w.byte(4);
  const frameMemo: number[] = [];
  const stackMemo: number[] = [];
  const writeFrames = (s: number) => {
    if (stackMemo[s] !== undefined) return w.get(stackMemo[s]);
    stackMemo[s] = w.list(stacks[s]!, (f) => {
      if (frameMemo[f] !== undefined) return w.get(frameMemo[f]);
      const fr = frames[f]!;
      w.byte(0x7d);
      frameMemo[f] = w.memoize();
      w.byte(0x28);
      w.str('name');
      w.str(fr.name);
      w.str('filename');
      w.str(fr.filename);
      w.str('line');
      w.int(fr.line);
      w.byte(0x75);
    });
  };
  w.dict(() => {
    w.str('segments');
    w.list([] as number[], () => undefined);
    w.str('device_traces');
    w.list([trace], (list) =>
      w.list(list, (e) =>
        w.dict(() => {
          w.str('action');
          w.str(e.action);
          if (e.action === 'oom') {
            w.str('device_free');
            w.int(e.deviceFree!);
          } else {
            w.str('addr');
            w.int(e.addr);
          }
          w.str('size');
          w.int(e.size);
          w.str('stream');
          w.int(e.stream);
          w.str('time_us');
          w.int(e.time);
          w.str('frames');
          writeFrames(e.stack);
          w.str('compile_context');
          w.str('N/A');
          w.str('user_metadata');
          w.str('');
        }),
      ),
    );
    w.str('allocator_settings');
    w.dict(() => {
      w.str('expandable_segments');
      w.bool(false);
    });
    w.str('external_annotations');
    w.list([] as number[], () => undefined);
  });
  return w.finish();
}
