import type { ElementType } from '../plan/element-types';

export interface KernelParam {
  /** As written, qualifiers included: "const float* __restrict__". */
  type: string;
  name: string;
  pointer: boolean;
  /** The element type a buffer or scalar for this parameter would have, when it is a plain one. */
  elementType: ElementType | null;
}

export interface KernelSignature {
  name: string;
  line: number;
  column: number;
  params: KernelParam[];
  template: boolean;
  externC: boolean;
  launchBounds: { maxThreads: number | null; minBlocks: number | null } | null;
  /** name(type, type, ...) as a reader would write it. */
  display: string;
}

const BASE_TYPES: [RegExp, ElementType][] = [
  [/^(unsigned long long|unsigned long long int|uint64_t|size_t|unsigned long)$/, 'u64'],
  [/^(long long|long long int|int64_t|long|ptrdiff_t)$/, 'i64'],
  [/^(unsigned|unsigned int|uint32_t|uint)$/, 'u32'],
  [/^(int|signed|signed int|int32_t)$/, 'i32'],
  [/^(unsigned short|uint16_t)$/, 'u16'],
  [/^(short|int16_t)$/, 'i16'],
  [/^(unsigned char|uint8_t|uchar)$/, 'u8'],
  [/^(char|signed char|int8_t)$/, 'i8'],
  [/^(__half|half)$/, 'f16'],
  [/^(__nv_bfloat16|nv_bfloat16|bfloat16)$/, 'bf16'],
  [/^float$/, 'f32'],
  [/^double$/, 'f64'],
];

/** Blanks out comments, string and character literals, keeping every offset and line break. */
export function maskCode(source: string): string {
  return source.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => m.replace(/[^\n]/g, ' '));
}

function matchParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '<' || c === '[') depth++;
    else if (c === ')' || c === '>' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '' && p !== 'void');
}

function parseParam(text: string, index: number): KernelParam {
  const noDefault = text.replace(/=.*$/s, '').trim();
  const m = /^(.*?)([A-Za-z_]\w*)\s*(\[[^\]]*\])?$/s.exec(noDefault);
  let type = noDefault;
  let name = `arg${index}`;
  if (m && m[1]!.trim() !== '' && !/^(const|volatile|unsigned|signed|struct)$/.test(m[2]!)) {
    type = (m[1]! + (m[3] ? '*' : '')).trim();
    name = m[2]!;
  }
  type = type
    .replace(/\s+/g, ' ')
    .replace(/\s*\*\s*/g, '* ')
    .trim();
  const pointer = type.includes('*');
  const base = type
    .replace(/\*/g, ' ')
    .replace(/\b(const|volatile|__restrict__|__restrict|restrict|struct|__grid_constant__)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const elementType = BASE_TYPES.find(([re]) => re.test(base))?.[1] ?? null;
  return { type: type.replace(/\* $/, '*'), name, pointer, elementType };
}

/** Every __global__ function defined (or declared) in the source, in order. */
export function findKernels(source: string): KernelSignature[] {
  const code = maskCode(source);
  const kernels: KernelSignature[] = [];
  const re = /\b__global__\b/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(code))) {
    const before = code.slice(Math.max(0, m.index - 400), m.index);
    let i = m.index + m[0].length;
    let launchBounds: KernelSignature['launchBounds'] = null;
    // Skip qualifiers and the return type up to the name that is followed by '('.
    let name: string | null = null;
    let nameAt = -1;
    for (let guard = 0; guard < 20 && i < code.length; guard++) {
      const word = /^\s*([A-Za-z_]\w*)/.exec(code.slice(i));
      if (!word) break;
      const after = i + word[0].length;
      const rest = code.slice(after);
      if (word[1] === '__launch_bounds__' || word[1] === '__cluster_dims__' || word[1] === '__maxnreg__') {
        const open = after + rest.indexOf('(');
        const close = matchParen(code, open);
        if (close < 0) break;
        if (word[1] === '__launch_bounds__') {
          const args = code
            .slice(open + 1, close)
            .split(',')
            .map((s) => Number(s.trim()));
          launchBounds = { maxThreads: Number.isFinite(args[0]) ? args[0]! : null, minBlocks: Number.isFinite(args[1]) ? args[1]! : null };
        }
        i = close + 1;
        continue;
      }
      if (/^\s*\(/.test(rest) && word[1] !== 'void') {
        name = word[1]!;
        nameAt = after - word[1]!.length;
        i = after;
        break;
      }
      i = after;
    }
    if (!name) continue;
    const open = code.indexOf('(', i);
    const close = matchParen(code, open);
    if (close < 0) continue;
    const params = splitTopLevel(source.slice(open + 1, close).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, ' ')).map(parseParam);
    const upTo = source.slice(0, nameAt);
    const line = upTo.split('\n').length;
    const column = nameAt - upTo.lastIndexOf('\n');
    kernels.push({
      name,
      line,
      column,
      params,
      template: /template\s*<[^;{}]*>\s*$/.test(before),
      externC: /extern\s+"C"\s*(\{[^}]*)?$/.test(source.slice(Math.max(0, m.index - 400), m.index)),
      launchBounds,
      display: `${name}(${params.map((p) => p.type).join(', ')})`,
    });
    re.lastIndex = close;
  }
  return kernels;
}
