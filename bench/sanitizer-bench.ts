import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SaxesParser } from 'saxes';

import type { SanitizerFinding } from '../core/sanitizer/findings';
import { describeGroup, groupFindings } from '../core/sanitizer/group';
import { mergeText, parseSanitizerText } from '../core/sanitizer/parse-text';
import { createSanitizerXmlParser } from '../core/sanitizer/parse-xml';
import { projectRoot } from '../main/paths';

/**
 * `npm run bench:sanitizer` (any machine, no GPU): reading and grouping compute-sanitizer output the size a
 * faulting grid makes. 100,000 findings are built from the real records of memcheck-null.xml (an H100
 * recording: 32 threads writing through a null pointer), with thread, block and address varied, in the same
 * shape as the 65,537-record, 139 MB XML the README mentions. Each of our steps is timed beside a raw
 * reference in the same run: saxes alone scanning the same chunks with no handlers (the floor for any
 * reader built on it), and with three counting handlers (the floor for one that looks at the events).
 * Target: grouping 100,000 findings under 1 s.
 */
const FINDINGS = 100_000;
const REPEATS = 3;
const CHUNK = 1 << 16; // what a file stream hands over at a time
const TARGET_GROUP_MS = 1000;

const root = projectRoot();
const fixture = (name: string) => readFileSync(join(root, 'test/fixtures/sanitizer/h100', name), 'utf8');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const timed = <T>(f: () => T): { ms: number; value: T } => {
  const s = performance.now();
  const value = f();
  return { ms: performance.now() - s, value };
};
const runs = <T>(f: () => T): { ms: number; value: T } => {
  let last: { ms: number; value: T } | undefined;
  const ms: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    last = timed(f);
    ms.push(last.ms);
  }
  return { ms: median(ms), value: last!.value };
};

/** A real record with its thread, block and address made fillable: the parts between the three values. */
function template(record: string): (thread: number, block: number, address: number) => string {
  const marked = record
    .replace(/(<threadIdx>\s*<x>)\d+(<\/x>)/, '$1\u0000$2')
    .replace(/(<blockIdx>\s*<x>)\d+(<\/x>)/, '$1\u0000$2')
    .replace(/(<address>)0x[0-9a-f]+(<\/address>)/, '$1\u0000$2');
  const [a, b, c, d] = marked.split('\u0000');
  if (d === undefined) throw new Error('memcheck-null.xml no longer has the fields the bench varies');
  return (thread, block, address) => `${a}${thread}${b}${block}${c}0x${address.toString(16)}${d}`;
}

/** The same findings as the tool's text prints them, each with its nearest allocation. */
function textTemplate(block: string): (thread: number, blk: number, address: number) => string {
  const marked = block
    .replace(/by thread \(\d+,/, 'by thread (\u0000,')
    .replace(/in block \(\d+,/, 'in block (\u0000,')
    .replace(/Access to 0x[0-9a-f]+/, 'Access to 0x\u0000');
  const [a, b, c, d] = marked.split('\u0000');
  if (d === undefined) throw new Error('memcheck-null.xml.txt no longer has the lines the bench varies');
  return (thread, blk, address) => `${a}${thread}${b}${blk}${c}${address.toString(16)}${d}`;
}

function build(): { chunks: string[]; bytes: number; text: string } {
  const xml = fixture('memcheck-null.xml');
  const records = [...xml.matchAll(/ {2}<record>[\s\S]*?<\/record>\n/g)].map((m) => m[0]);
  const precise = records.filter((r) => r.includes('<kind>Precise</kind>')).map(template);
  const tail = records.filter((r) => !r.includes('<kind>Precise</kind>')).join('');
  const head = xml.slice(0, xml.indexOf('  <record>'));
  const txt = fixture('memcheck-null.xml.txt');
  const firstBlock = /========= Invalid __global__ write[\s\S]*?\n========= \n/.exec(txt)![0];
  const text = textTemplate(firstBlock);

  const parts: string[] = [head];
  const textParts: string[] = ['========= COMPUTE-SANITIZER\n'];
  for (let i = 0; i < FINDINGS; i++) {
    const thread = i % 256;
    const block = Math.floor(i / 256);
    const address = i * 4; // through a null pointer, as the recordings did
    parts.push(precise[i % precise.length]!(thread, block, address));
    textParts.push(text(thread, block, address));
  }
  parts.push(tail, '</ComputeSanitizerOutput>\n');
  textParts.push(`========= ERROR SUMMARY: ${FINDINGS + 3} errors\n`);
  const whole = parts.join('');
  const chunks: string[] = [];
  for (let i = 0; i < whole.length; i += CHUNK) chunks.push(whole.slice(i, i + CHUNK));
  return { chunks, bytes: whole.length, text: textParts.join('') };
}

function main() {
  const built = timed(build);
  const { chunks, bytes, text } = built.value;
  const mb = bytes / 1e6;
  console.log(
    `Sanitizer output: ${FINDINGS.toLocaleString('en-US')} findings from memcheck-null.xml's records, ${mb.toFixed(1)} MB of XML (built in ${built.ms.toFixed(0)} ms)`,
  );

  const bare = runs(() => {
    const p = new SaxesParser({ position: true });
    for (const c of chunks) p.write(c);
    p.close();
    return 0;
  });
  const counting = runs(() => {
    const p = new SaxesParser({ position: true });
    let n = 0;
    p.on('opentag', () => n++);
    p.on('text', () => n++);
    p.on('closetag', () => n++);
    for (const c of chunks) p.write(c);
    p.close();
    return n;
  });
  const parsed = runs(() => {
    const p = createSanitizerXmlParser('memcheck');
    for (const c of chunks) p.write(c);
    return p.close();
  });
  const result = parsed.value;
  if (result.problems.length > 0 || result.findings.length !== FINDINGS + 3)
    throw new Error(`the parser read ${result.findings.length}: ${result.problems.join(' ')}`);

  const info = runs(() => parseSanitizerText(text));
  const merged = runs(() => mergeText(result.findings, info.value));
  const withNearest = merged.value.filter((f) => f.nearest !== null).length;
  if (withNearest !== FINDINGS) throw new Error(`merged ${withNearest} nearest allocations of ${FINDINGS}`);

  const grouped = runs(() => groupFindings(merged.value));
  const groups = grouped.value;
  const described = runs(() => groups.map((g) => describeGroup(g, info.value.summary)));

  // The worst case for the Map: every finding its own place (1,000 lines × 100 kernels).
  const spread: SanitizerFinding[] = merged.value.map((f, i) => (f.where ? { ...f, where: { ...f.where, func: `k${i % 100}`, line: i % 1000 } } : f));
  const groupedSpread = runs(() => groupFindings(spread));

  const heapMb = process.memoryUsage().heapUsed / 1e6;
  const rate = (ms: number) => `${(mb / (ms / 1000)).toFixed(0)} MB/s`;
  console.log('| step | ms (median of 3) | rate | raw reference, same chunks |');
  console.log('| --- | ---: | ---: | --- |');
  console.log(`| saxes alone, no handlers | ${bare.ms.toFixed(0)} | ${rate(bare.ms)} | (the reference) |`);
  console.log(`| saxes with 3 counting handlers | ${counting.ms.toFixed(0)} | ${rate(counting.ms)} | ${(counting.ms / bare.ms).toFixed(2)}× saxes alone |`);
  console.log(
    `| parse-xml: ${result.findings.length.toLocaleString('en-US')} findings | ${parsed.ms.toFixed(0)} | ${rate(parsed.ms)} | ${(parsed.ms / bare.ms).toFixed(2)}× saxes alone |`,
  );
  console.log(`| parse-text: ${(text.length / 1e6).toFixed(1)} MB, ${info.value.nearest.length.toLocaleString('en-US')} notes | ${info.ms.toFixed(0)} | | |`);
  console.log(`| mergeText | ${merged.ms.toFixed(0)} | | |`);
  console.log(
    `| groupFindings → ${groups.length} groups | ${grouped.ms.toFixed(1)} | | target < ${TARGET_GROUP_MS} ms: ${grouped.ms < TARGET_GROUP_MS ? 'met' : 'MISSED'} |`,
  );
  console.log(`| groupFindings, every finding spread over ${groupedSpread.value.length.toLocaleString('en-US')} groups | ${groupedSpread.ms.toFixed(1)} | | |`);
  console.log(`| describeGroup, all groups | ${described.ms.toFixed(2)} | | |`);
  console.log(`(heap in use at the end: ${heapMb.toFixed(0)} MB; ${chunks.length} chunks of ${CHUNK / 1024} KiB)`);
  console.log(`First group: ${described.value[0]}`);
  if (grouped.ms >= TARGET_GROUP_MS) process.exitCode = 1;
}

main();
