/** A static `__shared__` array declared in a kernel's body, with its size where the source fixes it. */
export interface SharedArray {
  name: string;
  type: string;
  dims: number[];
  /** null when a dimension or the element type is not a literal the parser knows. */
  bytes: number | null;
  line: number;
}

const TYPE_BYTES: Record<string, number> = {
  char: 1,
  'unsigned char': 1,
  'signed char': 1,
  int8_t: 1,
  uint8_t: 1,
  bool: 1,
  short: 2,
  'unsigned short': 2,
  int16_t: 2,
  uint16_t: 2,
  half: 2,
  __half: 2,
  __nv_bfloat16: 2,
  int: 4,
  unsigned: 4,
  'unsigned int': 4,
  int32_t: 4,
  uint32_t: 4,
  float: 4,
  long: 8,
  'long long': 8,
  'unsigned long long': 8,
  int64_t: 8,
  uint64_t: 8,
  size_t: 8,
  double: 8,
  float2: 8,
  int2: 8,
  float4: 16,
  int4: 16,
  double2: 16,
};

const DECLARATION = /__shared__\s+(?:__align__\(\d+\)\s+)?((?:unsigned\s+|signed\s+|long\s+)*[A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+);/g;

/**
 * The static shared arrays in a kernel's body (extern arrays are dynamic shared memory, not counted).
 * The body is found by the kernel's name and its braces; comments are blanked first.
 */
export function staticSharedArrays(source: string, kernel: string): SharedArray[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
  const at = new RegExp(`__global__[^;{]*\\b${kernel}\\s*\\(`).exec(code);
  if (!at) return [];
  const open = code.indexOf('{', at.index);
  if (open < 0) return [];
  let depth = 0;
  let end = open;
  for (; end < code.length; end++) {
    if (code[end] === '{') depth++;
    else if (code[end] === '}' && --depth === 0) break;
  }
  const body = code.slice(open, end);
  const out: SharedArray[] = [];
  for (const m of body.matchAll(DECLARATION)) {
    if (/\bextern\s*$/.test(body.slice(Math.max(0, m.index - 16), m.index))) continue;
    const type = m[1]!.trim().replace(/\s+/g, ' ');
    const dims = [...m[3]!.matchAll(/\[([^\]]*)\]/g)].map((d) => (/^\s*\d+\s*$/.test(d[1]!) ? Number(d[1]) : NaN));
    const size = TYPE_BYTES[type];
    const known = size !== undefined && dims.length > 0 && dims.every(Number.isFinite);
    out.push({
      name: m[2]!,
      type,
      dims,
      bytes: known ? dims.reduce((p, d) => p * d, size) : null,
      line: code.slice(0, open + m.index).split('\n').length,
    });
  }
  return out;
}
