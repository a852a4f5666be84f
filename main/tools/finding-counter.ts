import { StringDecoder } from 'node:string_decoder';

import type { SanitizerTool } from '../../core/sanitizer/findings';
import { isFindingHeader } from '../../core/sanitizer/parse-text-findings';

const PREFIX = '========= ';

/**
 * Counts the findings compute-sanitizer prints as its output streams in (its XML waits for the end): lines
 * joined across chunks, UTF-8 decoded across chunks, each tool line judged by the parser's own rules. Calls
 * `onCount` when the count changes.
 */
export function findingCounter(tool: SanitizerTool, onCount: (count: number) => void): (chunk: Buffer) => void {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let count = 0;
  return (chunk) => {
    const lines = (partial + decoder.write(chunk)).split('\n');
    // A line longer than this is no finding's first line: keep its end only, to stay bounded.
    partial = lines.pop()!.slice(-4096);
    const before = count;
    for (const line of lines) if (line.startsWith(PREFIX) && isFindingHeader(tool, line.slice(PREFIX.length))) count++;
    if (count !== before) onCount(count);
  };
}
