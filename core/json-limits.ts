import { formatBytes, thousands } from './format';

/**
 * JSON from outside, measured before JSON.parse builds anything: V8 aborts the whole process (no try/catch sees it)
 * on a text that makes a string past its limit or more values than the heap holds, so the shape of the text is
 * counted first, in one pass over its bytes, and a text over any limit is never parsed.
 */
export interface JsonLimits {
  /** The text's size. */
  bytes: number;
  /** Arrays and objects inside one another: `[]` is 1, `[[1]]` is 2, a bare `1` is 0. */
  depth: number;
  /** Values: each array, object, string, number, true, false and null (an object's keys are not values). */
  items: number;
  /** The longest string, keys included, as written (its escapes counted as their bytes). */
  stringBytes: number;
  /** What the text is, for the messages: "a bundle manifest". */
  role?: string;
}

export interface JsonShape {
  bytes: number;
  depth: number;
  items: number;
  longestString: number;
}

export const NO_JSON_LIMITS: JsonLimits = { bytes: Infinity, depth: Infinity, items: Infinity, stringBytes: Infinity };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Bytes that end a bare token (a number, true, false, null, or garbage): JSON's whitespace and its punctuation. */
const DELIMITER = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d, QUOTE, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA, COLON]) DELIMITER[c] = 1;

/**
 * The shape of a JSON text, counted in one pass without building a value, stopping at the first limit passed (the
 * problem in words, with the byte where it was passed). It does not check that the text is JSON (JSON.parse does,
 * after): any bytes are measured, in time linear in their length. For a text JSON.parse accepts, the counts are what it
 * builds, or more where an object repeats a key (JSON.parse keeps one).
 */
export function measureJson(text: Uint8Array, limits: JsonLimits = NO_JSON_LIMITS): { shape: JsonShape; problem: string | null } {
  const shape: JsonShape = { bytes: text.length, depth: 0, items: 0, longestString: 0 };
  const role = limits.role ? ` for ${limits.role}` : '';
  const stop = (problem: string) => ({ shape, problem });
  if (text.length > limits.bytes)
    return stop(`is ${formatBytes(text.length)} (${thousands(text.length)} bytes), over the limit of ${formatBytes(limits.bytes)}${role}`);
  // One entry per open array (false) or object (true); it never grows past limits.depth + 1.
  const inObject: boolean[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i]!;
    const at = i;
    if (c === QUOTE) {
      i++;
      while (i < n && text[i] !== QUOTE) i += text[i] === BACKSLASH ? 2 : 1;
      const length = Math.min(i, n) - at - 1;
      if (length > shape.longestString) shape.longestString = length;
      if (length > limits.stringBytes)
        return stop(
          `holds a string of ${thousands(length)}${i >= n ? ' or more' : ''} bytes at byte ${thousands(at)}, over the limit of ${thousands(limits.stringBytes)}${role}`,
        );
      i++;
      const key = expectKey;
      expectKey = false;
      if (key) continue;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      i++;
      inObject.push(c === OPEN_OBJECT);
      expectKey = c === OPEN_OBJECT;
      if (inObject.length > shape.depth) shape.depth = inObject.length;
      if (inObject.length > limits.depth)
        return stop(
          `nests arrays and objects ${thousands(inObject.length)} deep at byte ${thousands(at)}, over the limit of ${thousands(limits.depth)}${role}`,
        );
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COMMA) {
      i++;
      if (c !== COMMA) inObject.pop();
      expectKey = c === COMMA && inObject[inObject.length - 1] === true;
      continue;
    } else if (DELIMITER[c]) {
      i++;
      continue;
    } else {
      while (i < n && !DELIMITER[text[i]!]) i++;
      expectKey = false;
    }
    if (++shape.items > limits.items)
      return stop(`holds more than ${thousands(limits.items)} values (the next one at byte ${thousands(at)}), over the limit${role}`);
  }
  return { shape, problem: null };
}

/** Why this JSON text passes a limit (in words, with where), or null when it is within them all. */
export function checkJsonLimits(text: Uint8Array, limits: JsonLimits): string | null {
  return measureJson(text, limits).problem;
}

/** A JSON text refused: over a limit (`limit`), or not JSON (`syntax`); the message names what it was. */
export class JsonRefusedError extends Error {
  constructor(
    message: string,
    readonly kind: 'limit' | 'syntax',
  ) {
    super(message);
    this.name = 'JsonRefusedError';
  }
}

// TextDecoder is in every runtime the workbench runs in, but in no lib core/ compiles against (as in unpickle.ts).
declare const TextDecoder: new (label: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };
const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * The value of a JSON text from outside, parsed only once it is known to be within the limits. Throws
 * JsonRefusedError only: "`what` holds more than 4,096 values …", "`what` is not valid JSON (…)".
 */
export function parseJsonWithin(text: Uint8Array, limits: JsonLimits, what: string): unknown {
  const problem = checkJsonLimits(text, limits);
  if (problem) throw new JsonRefusedError(`${what} ${problem}`, 'limit');
  try {
    return JSON.parse(decoder.decode(text));
  } catch (error) {
    throw new JsonRefusedError(`${what} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, 'syntax');
  }
}
