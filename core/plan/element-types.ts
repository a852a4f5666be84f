/** Element types a buffer or scalar may have, with their size in bytes. */
export const ELEMENT_TYPES = {
  i8: 1,
  u8: 1,
  i16: 2,
  u16: 2,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f16: 2,
  bf16: 2,
  f32: 4,
  f64: 8,
} as const;

export type ElementType = keyof typeof ELEMENT_TYPES;
export const ELEMENT_TYPE_NAMES = Object.keys(ELEMENT_TYPES) as ElementType[];

export const isElementType = (name: string): name is ElementType => Object.hasOwn(ELEMENT_TYPES, name);
export const elementSize = (type: ElementType): number => ELEMENT_TYPES[type];
export const isFloatType = (type: ElementType): boolean => type === 'f16' || type === 'bf16' || type === 'f32' || type === 'f64';

const f32Scratch = new DataView(new ArrayBuffer(4));

function f32ToBf16Bits(value: number): number {
  f32Scratch.setFloat32(0, value);
  const bits = f32Scratch.getUint32(0);
  if (Number.isNaN(value)) return 0x7fc0;
  // Round to nearest even, as __float2bfloat16_rn does.
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

function bf16BitsToF32(bits: number): number {
  f32Scratch.setUint32(0, (bits & 0xffff) << 16);
  return f32Scratch.getFloat32(0);
}

function f32ToF16Bits(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const abs = Math.abs(value);
  if (abs >= 65520) return sign | 0x7c00; // rounds to infinity
  if (abs < 2 ** -24 / 2) return sign; // rounds to zero
  if (abs < 2 ** -14) return sign | Math.round(abs / 2 ** -24); // subnormal
  let exponent = Math.floor(Math.log2(abs));
  let mantissa = abs / 2 ** exponent - 1;
  let m = Math.round(mantissa * 1024);
  if (m === 1024) {
    m = 0;
    exponent += 1;
  }
  mantissa = m;
  return sign | ((exponent + 15) << 10) | mantissa;
}

function f16BitsToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Writes one element, little-endian as on every CUDA platform. 64-bit integers take a bigint or number. */
export function writeElement(view: DataView, offset: number, type: ElementType, value: number | bigint): void {
  switch (type) {
    case 'i8':
      return view.setInt8(offset, Number(value));
    case 'u8':
      return view.setUint8(offset, Number(value));
    case 'i16':
      return view.setInt16(offset, Number(value), true);
    case 'u16':
      return view.setUint16(offset, Number(value), true);
    case 'i32':
      return view.setInt32(offset, Number(value), true);
    case 'u32':
      return view.setUint32(offset, Number(value), true);
    case 'i64':
      return view.setBigInt64(offset, BigInt.asIntN(64, toBigInt(value)), true);
    case 'u64':
      return view.setBigUint64(offset, BigInt.asUintN(64, toBigInt(value)), true);
    case 'f16':
      return view.setUint16(offset, f32ToF16Bits(Number(value)), true);
    case 'bf16':
      return view.setUint16(offset, f32ToBf16Bits(Number(value)), true);
    case 'f32':
      return view.setFloat32(offset, Number(value), true);
    case 'f64':
      return view.setFloat64(offset, Number(value), true);
  }
}

/** Reads one element as a number (64-bit integers beyond 2^53 lose precision; previews only). */
export function readElement(view: DataView, offset: number, type: ElementType): number {
  switch (type) {
    case 'i8':
      return view.getInt8(offset);
    case 'u8':
      return view.getUint8(offset);
    case 'i16':
      return view.getInt16(offset, true);
    case 'u16':
      return view.getUint16(offset, true);
    case 'i32':
      return view.getInt32(offset, true);
    case 'u32':
      return view.getUint32(offset, true);
    case 'i64':
      return Number(view.getBigInt64(offset, true));
    case 'u64':
      return Number(view.getBigUint64(offset, true));
    case 'f16':
      return f16BitsToF32(view.getUint16(offset, true));
    case 'bf16':
      return bf16BitsToF32(view.getUint16(offset, true));
    case 'f32':
      return view.getFloat32(offset, true);
    case 'f64':
      return view.getFloat64(offset, true);
  }
}

function toBigInt(value: number | bigint): bigint {
  return typeof value === 'bigint' ? value : BigInt(Math.trunc(value));
}
