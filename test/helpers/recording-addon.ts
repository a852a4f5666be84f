import type { CudaErrorInfo, FunctionAttributes } from '../../core/runner/run-result';
import { loadAddon, type NativeAddon } from '../../main/native/addon';
import type { RunnerAddon } from '../../main/runner/run/recorded-device';

/**
 * A stand-in for the addon calls a run makes, for tests of the run's orchestration (which calls, in which
 * order, what the result says of them): every call is recorded with its arguments, device memory is a set of
 * host arrays, and a "kernel" is a JavaScript function over the pointers it is given. It says nothing of what a
 * GPU would compute or how long it takes; the GPU suite (test/gpu) runs the same plans for real.
 */
export type FakeKernel = (memory: FakeMemory, args: Uint8Array[], call: number) => void;

export interface FakeScript {
  /** Kernels by function id (the id loadFunction hands out). */
  kernels: Map<number, FakeKernel>;
  /** Makes the nth call (1-based) of the named addon method reject with this error. */
  failures?: { method: string; nth: number; error: CudaErrorInfo }[];
  /** captureOutputStart's answer: whether device printf is captured. */
  capture?: boolean;
  /** markTimeOrigin rejects (an addon without it). */
  noTimeOrigin?: boolean;
}

export interface FakeMemory {
  read(pointer: bigint, bytes: number): Uint8Array;
  write(pointer: bigint, data: Uint8Array): void;
  print(text: string): void;
}

let loaded: NativeAddon | null = null;
const realAddon = (): NativeAddon => (loaded ??= loadAddon().addon!);

const hex = (p: bigint) => `0x${p.toString(16)}`;
const digest = (data: Uint8Array) => {
  let h = 2166136261;
  for (const b of data) h = Math.imul(h ^ b, 16777619) >>> 0;
  return `${data.byteLength}B#${h.toString(16)}`;
};

export function recordingAddon(script: FakeScript): { addon: RunnerAddon; calls: string[] } {
  const calls: string[] = [];
  const blocks = new Map<bigint, Uint8Array>();
  let next = 0x7f0000000000n;
  let printed = '';
  const counts = new Map<string, number>();
  const enter = (method: string, detail: string) => {
    calls.push(`${method}(${detail})`);
    const n = (counts.get(method) ?? 0) + 1;
    counts.set(method, n);
    const failure = script.failures?.find((f) => f.method === method && f.nth === n);
    if (failure) throw { ...failure.error };
  };
  const locate = (pointer: bigint, bytes: number): { block: Uint8Array; offset: number } => {
    for (const [base, block] of blocks) {
      if (pointer >= base && pointer + BigInt(bytes) <= base + BigInt(block.byteLength)) return { block, offset: Number(pointer - base) };
    }
    throw { library: 'cuda', api: 'fake', code: 700, name: 'CUDA_ERROR_ILLEGAL_ADDRESS', message: `no allocation holds ${hex(pointer)}+${bytes}` };
  };
  const memory: FakeMemory = {
    read(pointer, bytes) {
      const { block, offset } = locate(pointer, bytes);
      return block.slice(offset, offset + bytes);
    },
    write(pointer, data) {
      const { block, offset } = locate(pointer, data.byteLength);
      block.set(data, offset);
    },
    print(text) {
      printed += text;
    },
  };
  const launches = new Map<number, number>();
  const addon: RunnerAddon = {
    async markTimeOrigin() {
      enter('markTimeOrigin', '');
      if (script.noTimeOrigin) throw new Error('no time origin');
    },
    captureOutputStart() {
      enter('captureOutputStart', '');
      return script.capture ?? false;
    },
    captureOutputTake(maxBytes) {
      enter('captureOutputTake', String(maxBytes));
      const text = printed.slice(0, maxBytes);
      const droppedBytes = Math.max(0, printed.length - maxBytes);
      printed = '';
      return { text, droppedBytes };
    },
    captureOutputStop() {
      enter('captureOutputStop', '');
    },
    // Host arithmetic, not a device call: the real addon's loop (it needs no driver), and not recorded.
    floatSums(bytes, isF64, out) {
      realAddon().floatSums(bytes, isF64, out);
    },
    async memAllocGuarded(bytes, guardBytes, guardByte, poisonByte) {
      enter('memAllocGuarded', `${bytes}, ${guardBytes}, ${guardByte}, ${poisonByte}`);
      const block = new Uint8Array(bytes + 2 * guardBytes).fill(guardByte);
      if (poisonByte >= 0) block.fill(poisonByte, guardBytes, guardBytes + bytes);
      const base = next;
      next += 0x100000n;
      blocks.set(base, block);
      return base;
    },
    async memcpyHtoD(pointer, data) {
      enter('memcpyHtoD', `${hex(pointer)}, ${digest(data)}`);
      memory.write(pointer, data);
      return 0.25;
    },
    async memcpyDtoH(pointer, into) {
      enter('memcpyDtoH', `${hex(pointer)}, ${into.byteLength}`);
      into.set(memory.read(pointer, into.byteLength));
      return 0.5;
    },
    async memcpyDtoHRegions(pointers, bytes) {
      enter('memcpyDtoHRegions', `${pointers.map(hex).join(' ')}, ${bytes}`);
      const out = new Uint8Array(pointers.length * bytes);
      pointers.forEach((p, i) => out.set(memory.read(p, bytes), i * bytes));
      return out;
    },
    async memsetD8(pointer, value, bytes) {
      enter('memsetD8', `${hex(pointer)}, ${value}, ${bytes}`);
      memory.write(pointer, new Uint8Array(bytes).fill(value));
    },
    async memFree(pointer) {
      enter('memFree', hex(pointer));
      if (!blocks.delete(pointer)) throw { library: 'cuda', api: 'cuMemFree_v2', code: 1, name: 'CUDA_ERROR_INVALID_VALUE', message: 'not a base' };
    },
    async memGetInfo() {
      enter('memGetInfo', '');
      return { freeBytes: 1024, totalBytes: 4096 };
    },
    async synchronize() {
      enter('synchronize', '');
    },
    async setFunctionAttribute(functionId, attribute, value) {
      enter('setFunctionAttribute', `${functionId}, ${attribute}, ${value}`);
    },
    async launch(spec) {
      const args = spec.args;
      enter(
        'launch',
        `fn ${spec.functionId}, ${spec.grid.join('x')}, ${spec.block.join('x')}, ${spec.sharedBytes}, [${args.map(digest).join(' ')}], ${spec.warmup}, ${spec.repeats}`,
      );
      const kernel = script.kernels.get(spec.functionId);
      if (!kernel) throw new Error(`no fake kernel ${spec.functionId}`);
      const timesMs: number[] = [];
      for (let i = 0; i < spec.warmup + spec.repeats; i++) {
        const call = (launches.get(spec.functionId) ?? 0) + 1;
        launches.set(spec.functionId, call);
        kernel(memory, args, call);
        if (i >= spec.warmup) timesMs.push(1 + timesMs.length);
      }
      return { timesMs, gpu: timesMs.map((ms, i) => ({ startMs: i * 10, endMs: i * 10 + ms })) };
    },
  };
  return { addon, calls };
}

/** A pointer argument's value. */
export const pointerArg = (arg: Uint8Array): bigint => new DataView(arg.buffer, arg.byteOffset, 8).getBigUint64(0, true);

export const fakeAttributes = (maxDynamicSharedSizeBytes = 0): FunctionAttributes => ({
  maxThreadsPerBlock: 1024,
  sharedSizeBytes: 0,
  constSizeBytes: 0,
  localSizeBytes: 0,
  numRegs: 16,
  ptxVersion: 90,
  binaryVersion: 90,
  maxDynamicSharedSizeBytes,
});
