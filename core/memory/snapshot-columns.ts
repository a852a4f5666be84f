import { ACTIONS, type Block, type DeviceTrace, type Frame, type Segment, type SnapshotModel } from './snapshot-model';

/**
 * A snapshot model as it crosses from its reader's process to the host: a string table (each distinct string once)
 * and typed columns, never an object graph. A pickle may reference one string or one list thousands of times; an
 * object graph sent by JSON or structured clone is copied once per reference, these columns once. The decoder checks
 * every count, length and index, because the columns come from a process that read a file from outside.
 */

type ColumnType = 'f64' | 'i32' | 'u8';
type Column = Float64Array | Int32Array | Uint8Array;

export interface ColumnDescriptor {
  name: string;
  type: ColumnType;
  length: number;
}

export interface SnapshotColumnsHeader {
  format: 'snapshot-columns-1';
  strings: string[];
  frames: number;
  stacks: number;
  stackFrames: number;
  devices: { device: number; count: number; baseAllocated: number; baseReserved: number; deviceFree: number }[];
  segments: number;
  blocks: number;
  /** PyTorch's allocator settings as JSON text, bounded by the encoder. */
  allocatorSettings: string;
  columns: ColumnDescriptor[];
}

export class SnapshotColumnsError extends Error {
  override readonly name = 'SnapshotColumnsError';
}

/** Allocator settings are a handful of numbers and flags; more than this is not kept. */
export const MAX_ALLOCATOR_SETTINGS_CHARS = 64 * 1024;
const BYTES: Record<ColumnType, number> = { f64: 8, i32: 4, u8: 1 };
const ALIGN = 8;

const typeOf = (c: Column): ColumnType => (c instanceof Float64Array ? 'f64' : c instanceof Int32Array ? 'i32' : 'u8');
const padded = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

function settingsText(settings: Record<string, unknown>): string {
  try {
    const text = JSON.stringify(settings);
    return text.length <= MAX_ALLOCATOR_SETTINGS_CHARS ? text : '{}';
  } catch {
    return '{}';
  }
}

/** The model as a header (JSON-able) and one body of columns, each 8-byte aligned. */
export function encodeSnapshotColumns(model: SnapshotModel): { header: SnapshotColumnsHeader; body: Uint8Array } {
  const ids = new Map<string, number>();
  const strings: string[] = [];
  const str = (s: string) => {
    let id = ids.get(s);
    if (id === undefined) ids.set(s, (id = strings.push(s) - 1));
    return id;
  };
  const columns: [string, Column][] = [];
  const add = (name: string, column: Column) => columns.push([name, column]);
  add(
    'frame.file',
    Int32Array.from(model.frames, (f) => str(f.filename)),
  );
  add(
    'frame.line',
    Float64Array.from(model.frames, (f) => f.line),
  );
  add(
    'frame.name',
    Int32Array.from(model.frames, (f) => str(f.name)),
  );
  const offsets = new Int32Array(model.stacks.length + 1);
  model.stacks.forEach((s, i) => (offsets[i + 1] = offsets[i]! + s.length));
  const flat = new Int32Array(offsets[model.stacks.length]!);
  model.stacks.forEach((s, i) => flat.set(s, offsets[i]!));
  add('stack.offset', offsets);
  add('stack.frame', flat);
  add('stack.userFrame', model.userFrame);
  for (const d of model.devices) {
    for (const key of ['time', 'action', 'address', 'size', 'stream', 'stack', 'allocated', 'reserved', 'freedAt'] as const) add(`device.${key}`, d[key]);
    add('device.free.index', Float64Array.from(d.deviceFree.keys()));
    add('device.free.bytes', Float64Array.from(d.deviceFree.values()));
  }
  const segs = model.segments;
  const blocks = segs.flatMap((s) => s.blocks);
  add(
    'segment.device',
    Float64Array.from(segs, (s) => s.device),
  );
  add(
    'segment.address',
    Float64Array.from(segs, (s) => s.address),
  );
  add(
    'segment.totalSize',
    Float64Array.from(segs, (s) => s.totalSize),
  );
  add(
    'segment.allocatedSize',
    Float64Array.from(segs, (s) => s.allocatedSize),
  );
  add(
    'segment.stream',
    Float64Array.from(segs, (s) => s.stream),
  );
  add(
    'segment.type',
    Int32Array.from(segs, (s) => str(s.segmentType)),
  );
  add(
    'segment.expandable',
    Uint8Array.from(segs, (s) => (s.isExpandable ? 1 : 0)),
  );
  add(
    'segment.blocks',
    Int32Array.from(segs, (s) => s.blocks.length),
  );
  add(
    'block.address',
    Float64Array.from(blocks, (b) => b.address),
  );
  add(
    'block.size',
    Float64Array.from(blocks, (b) => b.size),
  );
  add(
    'block.requestedSize',
    Float64Array.from(blocks, (b) => b.requestedSize),
  );
  add(
    'block.state',
    Int32Array.from(blocks, (b) => str(b.state)),
  );
  add(
    'block.stack',
    Int32Array.from(blocks, (b) => b.stack),
  );

  const body = new Uint8Array(columns.reduce((n, [, c]) => n + padded(c.byteLength), 0));
  let at = 0;
  for (const [, c] of columns) {
    body.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), at);
    at += padded(c.byteLength);
  }
  return {
    header: {
      format: 'snapshot-columns-1',
      strings,
      frames: model.frames.length,
      stacks: model.stacks.length,
      stackFrames: flat.length,
      devices: model.devices.map((d) => ({
        device: d.device,
        count: d.count,
        baseAllocated: d.baseAllocated,
        baseReserved: d.baseReserved,
        deviceFree: d.deviceFree.size,
      })),
      segments: segs.length,
      blocks: blocks.length,
      allocatorSettings: settingsText(model.allocatorSettings),
      columns: columns.map(([name, c]) => ({ name, type: typeOf(c), length: c.length })),
    },
    body,
  };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The next column of the body: its name, type and length what the header's counts say, its bytes copied out. */
function columnReader(header: SnapshotColumnsHeader, body: Uint8Array) {
  let next = 0;
  let at = 0;
  return <T extends Column>(name: string, type: ColumnType, length: number): T => {
    const d = header.columns[next++];
    if (!d || d.name !== name || d.type !== type || d.length !== length)
      throw new SnapshotColumnsError(`column ${next} is ${d ? `${d.name} (${d.type} × ${d.length})` : 'missing'}, expected ${name} (${type} × ${length})`);
    const bytes = length * BYTES[type];
    if (at + bytes > body.byteLength) throw new SnapshotColumnsError(`column ${name} runs past the end of the data`);
    const copy = body.slice(at, at + bytes).buffer;
    at += padded(bytes);
    return (type === 'f64' ? new Float64Array(copy) : type === 'i32' ? new Int32Array(copy) : new Uint8Array(copy)) as T;
  };
}

function checkIds(column: Int32Array, name: string, min: number, max: number): void {
  for (let i = 0; i < column.length; i++) {
    const v = column[i]!;
    if (v < min || v >= max) throw new SnapshotColumnsError(`${name}[${i}] is ${v}, outside ${min}…${max - 1}`);
  }
}

function checkHeader(value: unknown): SnapshotColumnsHeader {
  const h = value as Partial<SnapshotColumnsHeader> | null;
  if (!h || typeof h !== 'object' || h.format !== 'snapshot-columns-1') throw new SnapshotColumnsError('the header is not a snapshot-columns-1 header');
  if (!Array.isArray(h.strings) || !h.strings.every((s) => typeof s === 'string')) throw new SnapshotColumnsError('the string table is not a list of strings');
  for (const key of ['frames', 'stacks', 'stackFrames', 'segments', 'blocks'] as const)
    if (!isCount(h[key])) throw new SnapshotColumnsError(`the count ${key} is not a count`);
  if (!Array.isArray(h.devices) || !h.devices.every((d) => d && isCount(d.device) && isCount(d.count) && isCount(d.deviceFree)))
    throw new SnapshotColumnsError('the device list is not valid');
  if (!h.devices.every((d) => isFiniteNumber(d.baseAllocated) && isFiniteNumber(d.baseReserved)))
    throw new SnapshotColumnsError('a device’s baseline is not a number');
  if (typeof h.allocatorSettings !== 'string' || h.allocatorSettings.length > MAX_ALLOCATOR_SETTINGS_CHARS)
    throw new SnapshotColumnsError('the allocator settings are not bounded text');
  if (!Array.isArray(h.columns)) throw new SnapshotColumnsError('the column list is missing');
  return h as SnapshotColumnsHeader;
}

function decodeDevice(d: SnapshotColumnsHeader['devices'][number], read: ReturnType<typeof columnReader>, stacks: number): DeviceTrace {
  const n = d.count;
  const trace: DeviceTrace = {
    device: d.device,
    count: n,
    time: read('device.time', 'f64', n),
    action: read('device.action', 'u8', n),
    address: read('device.address', 'f64', n),
    size: read('device.size', 'f64', n),
    stream: read('device.stream', 'f64', n),
    stack: read('device.stack', 'i32', n),
    allocated: read('device.allocated', 'f64', n),
    reserved: read('device.reserved', 'f64', n),
    freedAt: read('device.freedAt', 'i32', n),
    baseAllocated: d.baseAllocated,
    baseReserved: d.baseReserved,
    deviceFree: new Map(),
  };
  for (let i = 0; i < n; i++)
    if (trace.action[i]! >= ACTIONS.length) throw new SnapshotColumnsError(`device ${d.device}: action ${trace.action[i]} is unknown`);
  checkIds(trace.stack, `device ${d.device} stack`, -1, stacks);
  checkIds(trace.freedAt, `device ${d.device} freedAt`, -1, n);
  const keys = read<Float64Array>('device.free.index', 'f64', d.deviceFree);
  const values = read<Float64Array>('device.free.bytes', 'f64', d.deviceFree);
  keys.forEach((k, i) => trace.deviceFree.set(k, values[i]!));
  return trace;
}

function decodeSegments(h: SnapshotColumnsHeader, read: ReturnType<typeof columnReader>, stacks: number): Segment[] {
  const n = h.segments;
  const device = read<Float64Array>('segment.device', 'f64', n);
  const address = read<Float64Array>('segment.address', 'f64', n);
  const totalSize = read<Float64Array>('segment.totalSize', 'f64', n);
  const allocatedSize = read<Float64Array>('segment.allocatedSize', 'f64', n);
  const stream = read<Float64Array>('segment.stream', 'f64', n);
  const type = read<Int32Array>('segment.type', 'i32', n);
  const expandable = read<Uint8Array>('segment.expandable', 'u8', n);
  const blockCounts = read<Int32Array>('segment.blocks', 'i32', n);
  const m = h.blocks;
  const bAddress = read<Float64Array>('block.address', 'f64', m);
  const bSize = read<Float64Array>('block.size', 'f64', m);
  const bRequested = read<Float64Array>('block.requestedSize', 'f64', m);
  const bState = read<Int32Array>('block.state', 'i32', m);
  const bStack = read<Int32Array>('block.stack', 'i32', m);
  checkIds(type, 'segment type', 0, h.strings.length);
  checkIds(bState, 'block state', 0, h.strings.length);
  checkIds(bStack, 'block stack', -1, stacks);
  if (blockCounts.reduce((a, b) => a + (b < 0 ? Infinity : b), 0) !== m)
    throw new SnapshotColumnsError('the segments’ block counts do not add up to the blocks');
  let at = 0;
  return Array.from({ length: n }, (_, i) => {
    const blocks: Block[] = [];
    for (let k = 0; k < blockCounts[i]!; k++, at++)
      blocks.push({ address: bAddress[at]!, size: bSize[at]!, requestedSize: bRequested[at]!, state: h.strings[bState[at]!]!, stack: bStack[at]! });
    return {
      device: device[i]!,
      address: address[i]!,
      totalSize: totalSize[i]!,
      allocatedSize: allocatedSize[i]!,
      stream: stream[i]!,
      segmentType: h.strings[type[i]!]!,
      isExpandable: expandable[i] === 1,
      blocks,
    };
  });
}

/** The model again from its header and body, every index checked; a SnapshotColumnsError names the first problem. */
export function decodeSnapshotColumns(headerValue: unknown, body: Uint8Array): SnapshotModel {
  const h = checkHeader(headerValue);
  const read = columnReader(h, body);
  const fileIds = read<Int32Array>('frame.file', 'i32', h.frames);
  const lines = read<Float64Array>('frame.line', 'f64', h.frames);
  const nameIds = read<Int32Array>('frame.name', 'i32', h.frames);
  checkIds(fileIds, 'frame file', 0, h.strings.length);
  checkIds(nameIds, 'frame name', 0, h.strings.length);
  const frames: Frame[] = Array.from({ length: h.frames }, (_, i) => ({ filename: h.strings[fileIds[i]!]!, line: lines[i]!, name: h.strings[nameIds[i]!]! }));
  const offsets = read<Int32Array>('stack.offset', 'i32', h.stacks + 1);
  const flat = read<Int32Array>('stack.frame', 'i32', h.stackFrames);
  const userFrame = read<Int32Array>('stack.userFrame', 'i32', h.stacks);
  checkIds(flat, 'stack frame', 0, h.frames);
  checkIds(userFrame, 'user frame', -1, h.frames);
  if (offsets[0] !== 0 || offsets[h.stacks] !== h.stackFrames) throw new SnapshotColumnsError('the stack offsets do not span the stack frames');
  for (let i = 0; i < h.stacks; i++) if (offsets[i + 1]! < offsets[i]!) throw new SnapshotColumnsError(`stack ${i}’s offsets go backwards`);
  const stacks = Array.from({ length: h.stacks }, (_, i) => flat.slice(offsets[i]!, offsets[i + 1]!));
  const devices = h.devices.map((d) => decodeDevice(d, read, h.stacks));
  const segments = decodeSegments(h, read, h.stacks);
  let allocatorSettings: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(h.allocatorSettings);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) allocatorSettings = parsed as Record<string, unknown>;
  } catch {
    throw new SnapshotColumnsError('the allocator settings are not JSON');
  }
  return { frames, stacks, userFrame, devices, segments, allocatorSettings };
}
