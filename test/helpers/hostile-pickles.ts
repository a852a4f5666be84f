/**
 * The hostile pickles of issue 25's attack review, made at test time by small code (never committed as files):
 * each is the shape the review found, at the review's size unless said otherwise.
 */
import { PickleWriter } from '../../bench/snapshot-pickle';

const PROTO_4 = [0x80, 0x04];
const STOP = 0x2e;
const MARK = 0x28;

/** Opcodes and runs of bytes, one after another. */
export function pickle(...parts: (number | ArrayLike<number>)[]): Uint8Array {
  const runs = parts.map((p) => (typeof p === 'number' ? [p] : p));
  const out = new Uint8Array(runs.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of runs) {
    out.set(r, at);
    at += r.length;
  }
  return out;
}

/** `pattern` n times over. */
export function times(n: number, ...pattern: number[]): Uint8Array {
  const out = new Uint8Array(n * pattern.length);
  if (!n) return out;
  out.set(pattern);
  for (let filled = pattern.length; filled < out.length; filled *= 2) out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
  return out;
}

export const u32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
export const u64 = (n: bigint): number[] => Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));

/** NONE n times: the review's was 210 MB (V8 died on the unpickler's stack); the stack cap refuses it at its first megabyte. */
export const noneFlood = (n = 2_000_000): Uint8Array => pickle(PROTO_4, times(n, 0x4e), STOP);

/** A list of one string of `bytes` bytes, referred to `refs` times in all through the memo: 1 MiB × 5,000 is a 1 MB pickle. */
export const sharedString = (refs = 5000, bytes = 2 ** 20): Uint8Array =>
  pickle(PROTO_4, 0x5d, MARK, 0x58, u32(bytes), times(bytes, 0x61), 0x94, times(refs - 1, 0x68, 0), 0x65, STOP);

/** Billion laughs: level 0 is a string, level i a list of level i - 1 twice, each level written once (8 bytes). */
export function laughs(levels = 45): Uint8Array {
  const level = (i: number) => [MARK, 0x68, i - 1, 0x68, i - 1, 0x6c, 0x94, 0x30];
  return pickle(
    PROTO_4,
    0x8c,
    3,
    ...'lol'.split('').map((c) => c.charCodeAt(0)),
    0x94,
    0x30,
    ...Array.from({ length: levels }, (_, i) => level(i + 1)).flat(),
    0x68,
    levels,
    STOP,
  );
}

/** One integer of n bytes: LONG4 (the review's 256 KB took 19.8 s to decode) or LONG1 (at most 255). */
export const long4 = (n = 2 ** 20): Uint8Array => pickle(PROTO_4, 0x8b, u32(n), times(n, 0x7f), STOP);
export const long1 = (n = 255): Uint8Array => pickle(PROTO_4, 0x8a, n, times(n, 0x7f), STOP);

/** NONE wrapped n times in TUPLE1 (no MARK): the review's 10,000,000 deep was accepted. */
export const tuple1Nest = (n = 10_000_000): Uint8Array => pickle(PROTO_4, 0x4e, times(n, 0x85), STOP);
/** The same through TUPLE2 and TUPLE3: each wraps what came before with NONEs beside it. */
export const tuple2Nest = (n = 1_000_000): Uint8Array => pickle(PROTO_4, 0x4e, times(n, 0x4e, 0x86), STOP);
export const tuple3Nest = (n = 1_000_000): Uint8Array => pickle(PROTO_4, 0x4e, times(n, 0x4e, 0x4e, 0x87), STOP);
/** n empty lists, each appended into the one below it. */
export const appendNest = (n = 100_000): Uint8Array => pickle(PROTO_4, times(n, 0x5d), times(n - 1, 0x61), STOP);

/**
 * A snapshot with `entries` allocations, each with its own frame (its own line), every frame naming one filename
 * of `filenameBytes` bytes, written once and referred to through the memo as torch does.
 */
export function sharedFilename(entries = 1000, filenameBytes = 50 * 2 ** 20): Uint8Array {
  const filename = 'f'.repeat(filenameBytes);
  const w = new PickleWriter();
  w.byte(0x80);
  w.byte(4);
  const indices = Array.from({ length: entries }, (_, i) => i);
  w.dict(() => {
    w.str('device_traces');
    w.list([indices], (device) =>
      w.list(device, (i) =>
        w.dict(() => {
          for (const [k, v] of [
            ['action', 'alloc'],
            ['addr', 4096 + 512 * i],
            ['size', 512],
          ] as const) {
            w.str(k);
            if (typeof v === 'string') w.str(v);
            else w.int(v);
          }
          w.str('frames');
          w.list([i], () =>
            w.dict(() => {
              w.str('filename');
              w.str(filename);
              w.str('line');
              w.int(i + 1);
              w.str('name');
              w.str('step');
            }),
          );
        }),
      ),
    );
  });
  return w.finish();
}
