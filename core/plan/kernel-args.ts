import { elementSize, writeElement, type ElementType } from './element-types';

/** The bytes cuLaunchKernel reads for one scalar parameter. */
export function encodeScalar(type: ElementType, value: number | string): Uint8Array {
  const bytes = new Uint8Array(elementSize(type));
  const v = typeof value === 'string' ? BigInt(value) : value;
  writeElement(new DataView(bytes.buffer), 0, type, typeof v === 'bigint' && type !== 'i64' && type !== 'u64' ? Number(v) : v);
  return bytes;
}

/** The bytes of a device pointer parameter (CUdeviceptr is 64-bit on every supported platform). */
export function encodePointer(pointer: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, pointer, true);
  return bytes;
}
