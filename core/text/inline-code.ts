/** A message split into prose and `code` spans, so code shows as code and not between backticks. */
export type TextSegment = { kind: 'text' | 'code'; text: string };

export function splitInlineCode(message: string): TextSegment[] {
  const out: TextSegment[] = [];
  const pattern = /`([^`\n]+)`/g;
  let last = 0;
  for (const m of message.matchAll(pattern)) {
    if (m.index > last) out.push({ kind: 'text', text: message.slice(last, m.index) });
    out.push({ kind: 'code', text: m[1]! });
    last = m.index + m[0].length;
  }
  if (last < message.length) out.push({ kind: 'text', text: message.slice(last) });
  return out;
}
