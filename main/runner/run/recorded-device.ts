import type { Dim3 } from '../../../core/dims';
import { formatBytes } from '../../../core/format';
import type { FloatSums } from '../../../core/plan/buffer-data';
import { GUARD_PATTERN } from '../../../core/plan/guards';
import type { RunEventRecorder } from '../../../core/runner/event-recorder';
import type { NativeAddon } from '../../native/addon';
import type { LoadedFunction } from '../module-cache';
import { workbenchError } from './step-failure';

/** The addon calls a run makes. */
export type RunnerAddon = Pick<
  NativeAddon,
  | 'markTimeOrigin'
  | 'captureOutputStart'
  | 'captureOutputTake'
  | 'captureOutputStop'
  | 'floatSums'
  | 'memAllocGuarded'
  | 'memcpyHtoD'
  | 'memcpyDtoH'
  | 'memcpyDtoHRegions'
  | 'memsetD8'
  | 'memFree'
  | 'memGetInfo'
  | 'synchronize'
  | 'setFunctionAttribute'
  | 'launch'
>;

/** A buffer's memory on the device. */
export interface Allocation {
  /** What cuMemAlloc returned: guards included. */
  base: bigint;
  /** What the kernel gets: past the front guard. */
  pointer: bigint;
  /** `pointer` in hex, as the result and the event log name it. */
  address: string;
  bytes: number;
  /** Bytes of guard pattern before and after it (0: none). */
  guardBytes: number;
  /** The byte its inside was filled with when allocated (the poison), or -1 when it was left as the driver gave it. */
  fill: number;
}

/** How an allocation is laid out: what the checks ask for (guards around it, a fill inside). */
export interface AllocLayout {
  guardBytes: number;
  fill: number;
}

const hex = (pointer: bigint) => `0x${pointer.toString(16)}`;

/**
 * The host memory a read-back lands in, made here: a Buffer Node cannot make is a RangeError in JavaScript (V8's
 * out-of-memory in native code would end the runner), and becomes the step's failure in words.
 */
function hostBufferFor(buffer: string, bytes: number): Uint8Array {
  try {
    return Buffer.allocUnsafeSlow(bytes);
  } catch {
    throw workbenchError('cuMemcpyDtoH_v2', `buffer "${buffer}" cannot be read back: this process cannot allocate ${formatBytes(bytes)} of host memory for it`);
  }
}

/**
 * The driver calls that touch memory or time, each written to the run's event log as it is made
 * (core/runner/event-log.ts): begin() just before the call, the event of its kind once it returned. A call
 * that throws leaves its begin() pending, so the failure's event (RunState.fail) is timed from it.
 */
export class RecordedDevice {
  constructor(
    readonly addon: RunnerAddon,
    readonly log: RunEventRecorder,
  ) {
    if (typeof addon.floatSums === 'function') this.floatSums = (bytes, isF64) => this.sums(bytes, isF64);
  }

  /**
   * A read-back's minimum, maximum and sum in native code: V8's loop over 65,536 floats took 0.15 ms of a 1.2 ms re-run
   * (H200). An addon built before it had floatSums leaves the summary to core's loop.
   */
  readonly floatSums: FloatSums | undefined;
  private readonly sumsOut = new Float64Array(3);

  private sums(bytes: Uint8Array, isF64: boolean): { min: number; max: number; sum: number } {
    this.addon.floatSums(bytes, isF64, this.sumsOut);
    return { min: this.sumsOut[0]!, max: this.sumsOut[1]!, sum: this.sumsOut[2]! };
  }

  /** The module's function; an event only when this call loaded it (a cache hit is no driver call). */
  async loadFunction(kernel: string, imageBytes: number, load: () => Promise<{ fn: LoadedFunction; loaded: boolean }>): Promise<LoadedFunction> {
    this.log.begin();
    const { fn, loaded } = await load();
    if (loaded) this.log.moduleLoad(kernel, imageBytes);
    else this.log.skip();
    return fn;
  }

  /** One event: the guard and poison fills are made inside the same addon call, and timed with it. */
  async alloc(buffer: string, bytes: number, layout: AllocLayout): Promise<Allocation> {
    this.log.begin();
    const base = await this.addon.memAllocGuarded(bytes, layout.guardBytes, GUARD_PATTERN, layout.fill);
    const pointer = base + BigInt(layout.guardBytes);
    const address = hex(pointer);
    this.log.alloc(buffer, address, bytes, bytes + 2 * layout.guardBytes);
    return { base, pointer, address, bytes, ...layout };
  }

  async upload(buffer: string, target: Allocation, data: Uint8Array): Promise<number> {
    this.log.begin();
    const ms = await this.addon.memcpyHtoD(target.pointer, data);
    this.log.copy('HtoD', buffer, data.byteLength, 'data');
    return ms;
  }

  async download(buffer: string, source: Allocation): Promise<{ data: Uint8Array; ms: number }> {
    this.log.begin();
    const data = hostBufferFor(buffer, source.bytes);
    const ms = await this.addon.memcpyDtoH(source.pointer, data);
    this.log.copy('DtoH', buffer, source.bytes, 'data');
    return { data, ms };
  }

  /** One copy for many regions of `bytes` each (every guard a launch could have touched). */
  async readGuards(pointers: bigint[], bytes: number): Promise<Uint8Array> {
    this.log.begin();
    const data = await this.addon.memcpyDtoHRegions(pointers, bytes);
    this.log.copy('DtoH', null, pointers.length * bytes, 'guards');
    return data;
  }

  async memset(buffer: string, at: bigint, bytes: number, value: number, why: 'poison' | 'zero' | 'guard'): Promise<void> {
    this.log.begin();
    await this.addon.memsetD8(at, value, bytes);
    this.log.memset(buffer, hex(at), bytes, value, why);
  }

  async launch(
    kernel: string,
    entry: string,
    spec: { functionId: number; grid: Dim3; block: Dim3; sharedBytes: number; args: Uint8Array[]; warmup: number; repeats: number },
  ): Promise<{ timesMs: number[] }> {
    this.log.begin();
    const { timesMs, gpu } = await this.addon.launch(spec);
    this.log.launch(kernel, entry, spec.grid, spec.block, spec.sharedBytes, gpu);
    return { timesMs };
  }

  async synchronize(): Promise<void> {
    this.log.begin();
    await this.addon.synchronize();
    this.log.sync();
  }

  async free(buffer: string, a: Allocation): Promise<void> {
    this.log.begin();
    await this.addon.memFree(a.base);
    this.log.free(buffer, a.address, a.bytes, a.bytes + 2 * a.guardBytes);
  }
}
