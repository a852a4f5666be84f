/**
 * What a file the user opens is, told from its first bytes (and, for JSON, the names of its top-level keys read
 * from a bounded head): never a full parse, so a 2 GB trace or result is sniffed from its first 64 KiB like a small
 * one. The name is a hint only where the content says nothing (an empty file, plain text).
 */

export type FileKind =
  | 'source' // CUDA/C++ or other text: the editor
  | 'plan' // a launch plan (JSON with kernels and steps): the Run section's plan
  | 'result' // a run result the workbench saved: the Run tab
  | 'diagnosis' // a diagnosis report (core/diagnose/report-schema): the Diagnose view
  | 'profile' // a kernel profile (core/kernel-profile/profile): the Profile tab
  | 'sanitizer-xml' // compute-sanitizer --xml --save: the Sanitizer tab
  | 'sanitizer-text' // what compute-sanitizer printed: the Sanitizer tab (with its XML when beside it, else alone)
  | 'snapshot' // a PyTorch memory snapshot (a pickle): the Memory tab
  | 'trace' // a Chrome trace / Perfetto JSON (run --trace, the Memory tab's export): drawn in the Memory tab
  | 'bundle' // a diagnostic bundle (a zip): the bundle view
  | 'json' // JSON that is none of the above
  | 'binary'; // bytes no view reads

/** How much of a file the host reads to sniff it. */
export const SNIFF_HEAD_BYTES = 64 * 1024;

/** Where each kind opens, in words (for the Open dialog and its recent files). */
export const FILE_KIND_PLACES: Record<FileKind, string> = {
  source: 'source',
  plan: 'launch plan',
  result: 'run result',
  diagnosis: 'diagnosis report',
  profile: 'kernel profile',
  'sanitizer-xml': 'sanitizer report',
  'sanitizer-text': 'sanitizer output',
  snapshot: 'memory snapshot',
  trace: 'Chrome trace',
  bundle: 'bundle',
  json: 'JSON',
  binary: 'binary file',
};

export const FILE_KINDS = Object.keys(FILE_KIND_PLACES) as [FileKind, ...FileKind[]];

const startsWith = (head: Uint8Array, bytes: readonly number[]): boolean => bytes.every((b, i) => head[i] === b);
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP = [0x50, 0x4b, 0x05, 0x06];

/** The first non-space character's offset in `text`, or -1. */
const firstNonSpace = (text: string): number => text.search(/\S/);

/**
 * The names of a JSON object's top-level keys that appear within `text` (a head of the file: it may stop
 * anywhere), in order, and whether the head reached the object's end. Nested values and strings are skipped by
 * a small scanner: nothing is built but the key list, which stops at `maxKeys`.
 */
export function topLevelKeys(text: string, maxKeys = 200): { keys: string[]; complete: boolean } | null {
  const start = firstNonSpace(text);
  if (start < 0 || text[start] !== '{') return null;
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) return { keys, complete: false };
      if (depth === 1 && expectKey) {
        try {
          keys.push(JSON.parse(text.slice(i, j + 1)) as string);
        } catch {
          return null;
        }
        if (keys.length >= maxKeys) return { keys, complete: false };
        expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return { keys, complete: true };
    } else if (c === ',' && depth === 1) expectKey = true;
  }
  return { keys, complete: false };
}

const has = (keys: readonly string[], ...names: string[]) => names.every((n) => keys.includes(n));

/**
 * A kernel profile says what it is in its first key ("kind": "gpu-workbench-profile"); its per-line counters can run
 * past the head, so it is told by that and the keys before them, not by the keys after.
 */
const PROFILE_KIND = /^\s*\{\s*"kind"\s*:\s*"gpu-workbench-profile"/;

/** A JSON object's kind from its top-level keys (and, for a profile, its first). */
function jsonObjectKind(keys: readonly string[], text: string): FileKind {
  if (has(keys, 'kind', 'kernel') && PROFILE_KIND.test(text)) return 'profile';
  if (has(keys, 'traceEvents')) return 'trace';
  if (has(keys, 'schema', 'program') && (has(keys, 'verdict') || has(keys, 'startedAt'))) return 'diagnosis';
  if (has(keys, 'status') && (has(keys, 'diagnosis') || has(keys, 'compile') || has(keys, 'problem'))) return 'result';
  if (has(keys, 'kernels', 'steps') || (has(keys, 'steps') && has(keys, 'buffers'))) return 'plan';
  return 'json';
}

/** A JSON array's kind: a Chrome trace may be a bare list of events, each with "ph" and "ts". */
function jsonArrayKind(text: string, start: number): FileKind {
  const first = text.slice(start + 1).search(/\S/);
  const rest = text.slice(start + 1 + Math.max(first, 0));
  if (rest.startsWith('{')) {
    const keys = topLevelKeys(rest, 20)?.keys ?? [];
    if (has(keys, 'ph') || has(keys, 'name', 'ts')) return 'trace';
  }
  return 'json';
}

/**
 * Bytes as one character each (Latin-1): enough to scan structure, as UTF-8's multi-byte sequences never hold a
 * quote, a backslash or a bracket; a non-ASCII key comes out garbled and matches no known key, which is right.
 */
function bytesAsText(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

const SOURCE_NAME = /\.(cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hxx|inl|ptx|py|txt|md|sh|cmake)$/i;

/** What a file is, from its first bytes (up to SNIFF_HEAD_BYTES) and its name. */
export function sniffFileKind(head: Uint8Array, name: string): FileKind {
  if (startsWith(head, ZIP) || startsWith(head, EMPTY_ZIP)) return 'bundle';
  // A pickle starts with PROTO (0x80) and its protocol number (2 to 5; protocol 6 is refused later, in words).
  if (head[0] === 0x80 && head.length > 1 && head[1]! >= 2 && head[1]! <= 6) return 'snapshot';
  const text = bytesAsText(head.subarray(head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0));
  if (head.includes(0)) return 'binary';
  const start = firstNonSpace(text);
  if (start < 0) return SOURCE_NAME.test(name) || !/\.json$/i.test(name) ? 'source' : 'json';
  if (text.startsWith('<?xml', start) || text.startsWith('<ComputeSanitizerOutput', start)) {
    return /<ComputeSanitizerOutput[\s/>]/.test(text) ? 'sanitizer-xml' : 'source';
  }
  if (/^={5,} (COMPUTE-SANITIZER|ERROR SUMMARY|LEAK SUMMARY|Invalid|Race)/m.test(text.slice(0, 4096))) return 'sanitizer-text';
  if (text[start] === '{') {
    const top = topLevelKeys(text);
    const kind = top ? jsonObjectKind(top.keys, text.slice(start)) : 'source';
    return kind === 'json' && SOURCE_NAME.test(name) ? 'source' : kind;
  }
  if (text[start] === '[' && !SOURCE_NAME.test(name)) return jsonArrayKind(text, start);
  return 'source';
}
