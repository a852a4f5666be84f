import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { createSanitizerXmlParser, parseSanitizerXml, type SanitizerXmlResult } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

/**
 * What a damaged, cut or hostile file does: each gives the findings read before the damage and a problem that
 * says what happened and what to do; none throws.
 */
const oob = readFileSync(join(ROOT, 'test/fixtures/sanitizer/h100/memcheck-oob.xml'), 'utf8');
const HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<ComputeSanitizerOutput>\n';
const RECORD = (i: number) =>
  `<record><kind>Precise</kind><level>Error</level><who><threadIdx><x>${i % 1024}</x><y>0</y><z>0</z></threadIdx>` +
  `<blockIdx><x>${i >> 10}</x><y>0</y><z>0</z></blockIdx></who><what><text>Invalid __global__ write of size 4 bytes is out of bounds</text>` +
  `<size>4</size><direction>write</direction><address>0x${(i * 4).toString(16)}</address></what>` +
  `<where><func>k</func><path>/k.cu</path><line>5</line></where></record>\n`;
const safely = (f: () => SanitizerXmlResult): SanitizerXmlResult => {
  let r: SanitizerXmlResult | undefined;
  assert.doesNotThrow(() => (r = f()));
  return r!;
};
const one = (r: SanitizerXmlResult): string => {
  assert.equal(r.problems.length, 1, r.problems.join('\n'));
  assert.equal(r.complete, false);
  return r.problems[0]!;
};

test('cut off in the middle (the tool or the program died): the records before the cut, and why it matters', () => {
  const cut = oob.slice(0, oob.indexOf('<kind>Leak</kind>') + 40);
  const r = safely(() => parseSanitizerXml('memcheck', cut));
  assert.deepEqual(
    r.findings.map((f) => f.recordKind),
    ['Precise', 'Api'],
  );
  const problem = one(r);
  assert.match(problem, /stops before its closing <\/ComputeSanitizerOutput>: the output was cut off/);
  assert.match(problem, /died/);
  assert.match(problem, /The 2 findings read before the cut are shown/);
  assert.match(problem, /The record being written when it stopped is left out/);
  assert.match(problem, /Run it again/);

  // Cut at half its length, and cut between two records: the same, with what was whole by then.
  const half = safely(() => parseSanitizerXml('memcheck', oob.slice(0, oob.length >> 1)));
  assert.equal(half.findings.length, (oob.slice(0, oob.length >> 1).match(/<\/record>/g) ?? []).length);
  assert.match(one(half), /cut off/);
  const between = safely(() => parseSanitizerXml('memcheck', oob.slice(0, oob.indexOf('</record>') + '</record>'.length)));
  assert.equal(between.findings.length, 1);
  assert.doesNotMatch(one(between), /left out/);
});

test('an empty file, a file with the header only, and one that is not compute-sanitizer XML', () => {
  assert.match(one(safely(() => parseSanitizerXml('memcheck', ''))), /holds no compute-sanitizer output: the tool wrote nothing/);
  assert.match(one(safely(() => parseSanitizerXml('memcheck', '<?xml version="1.0"?>\n'))), /holds no compute-sanitizer output/);
  const html = safely(() => parseSanitizerXml('memcheck', '<html><body>hello</body></html>'));
  assert.match(one(html), /not compute-sanitizer's: its root element is <html>/);
});

test('malformed XML: the findings before the fault, and where it is', () => {
  const broken = oob.replace(
    '</where>\n    <hostStack>\n      <saveLocation>kernel launch time',
    '</wher>\n    <hostStack>\n      <saveLocation>kernel launch time',
  );
  assert.notEqual(broken, oob);
  const r = safely(() => parseSanitizerXml('memcheck', broken));
  assert.equal(r.findings.length, 0);
  assert.match(one(r), /not well-formed \(\d+:\d+: unexpected close tag/);

  const second = oob.replace('<api>cudaDeviceSynchronize</api>', '<api>cudaDeviceSynchronize</ap>');
  const r2 = safely(() => parseSanitizerXml('memcheck', second));
  assert.equal(r2.findings.length, 1);
  assert.match(one(r2), /not well-formed.*The 1 finding read before it is shown/);

  const entity = safely(() => parseSanitizerXml('memcheck', HEAD + '<record><kind>&unknown;</kind></record></ComputeSanitizerOutput>'));
  assert.match(one(entity), /not well-formed/);
  const garbage = safely(() => parseSanitizerXml('memcheck', oob + 'trailing text'));
  assert.equal(garbage.findings.length, 4);
  assert.match(one(garbage), /not well-formed/);
});

test('a DOCTYPE with entities (billion laughs) is refused before anything expands', () => {
  const lol =
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lollollollollollollollollollol">\n' +
    Array.from({ length: 9 }, (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('\n') +
    '\n]>\n<ComputeSanitizerOutput><record><kind>Precise</kind><what><text>&lol9;</text></what></record></ComputeSanitizerOutput>';
  const r = safely(() => parseSanitizerXml('memcheck', lol));
  assert.equal(r.findings.length, 0);
  const problem = one(r);
  assert.match(problem, /declares a DOCTYPE/);
  assert.match(problem, /billion laughs/);
  assert.match(problem, /refuses the file/);

  // Split across writes, and with an internal subset too large to hold: refused all the same.
  const p = createSanitizerXmlParser('memcheck');
  p.write('<?xml version="1.0"?>\n<!DOC');
  p.write('TYPE x [<!ENTITY a "' + 'a'.repeat(5_000_000) + '">]><ComputeSanitizerOutput/>');
  assert.match(one(p.close()), /declares a DOCTYPE/);
  // A DOCTYPE with no entities at all is refused as well: compute-sanitizer never writes one.
  assert.match(one(safely(() => parseSanitizerXml('memcheck', '<!DOCTYPE ComputeSanitizerOutput><ComputeSanitizerOutput/>'))), /DOCTYPE/);
});

test('a huge text node: reading stops before holding it, with the records before it', () => {
  const huge =
    HEAD + RECORD(0) + RECORD(1) + `<record><kind>Precise</kind><what><text>${'A'.repeat(20_000_000)}</text></what></record></ComputeSanitizerOutput>`;
  for (const write of [
    (p: ReturnType<typeof createSanitizerXmlParser>) => p.write(huge),
    (p: ReturnType<typeof createSanitizerXmlParser>) => {
      for (let i = 0; i < huge.length; i += 1 << 20) p.write(huge.slice(i, i + (1 << 20)));
    },
  ]) {
    const p = createSanitizerXmlParser('memcheck');
    const r = safely(() => {
      write(p);
      return p.close();
    });
    assert.equal(r.findings.length, 2);
    const problem = one(r);
    assert.match(problem, /more than 65,536 characters without markup inside <text>/);
    assert.match(problem, /The 2 findings read before it are shown/);
  }
  // A text a little over the limit (kept to the limit), and one under it, read on.
  const long = parseSanitizerXml(
    'memcheck',
    HEAD + `<record><kind>Precise</kind><what><text>${'B'.repeat(70_000)}</text></what></record></ComputeSanitizerOutput>`,
  );
  assert.equal(long.findings.length, 1);
  assert.equal(long.findings[0]!.text.length, 65_536);
  assert.match(long.problems.join(' '), /cut to that length/);
  assert.equal(long.complete, true);
});

test('deep nesting is refused past the limit', () => {
  const deep = HEAD + '<record>' + '<a>'.repeat(100) + '</a>'.repeat(100) + '</record></ComputeSanitizerOutput>';
  const r = safely(() => parseSanitizerXml('memcheck', deep));
  assert.equal(r.findings.length, 0);
  assert.match(one(r), /nests elements more than 32 deep/);
});

test('250,000 records: 200,000 kept, the rest counted, and the user told the counts are lower bounds', () => {
  const p = createSanitizerXmlParser('memcheck');
  p.write(HEAD);
  let batch = '';
  for (let i = 0; i < 250_000; i++) {
    batch += RECORD(i);
    if (batch.length > 1 << 20) {
      p.write(batch);
      batch = '';
    }
  }
  p.write(batch + '</ComputeSanitizerOutput>\n');
  const r = safely(() => p.close());
  assert.equal(r.findings.length, 200_000);
  assert.equal(r.records, 250_000);
  assert.equal(r.dropped, 50_000);
  assert.equal(r.complete, true, 'the file itself was whole');
  assert.equal(r.problems.length, 1);
  assert.match(
    r.problems[0]!,
    /Only the first 200,000 findings are kept: 50,000 more records were counted and left out, so counts in the groups are lower bounds/,
  );
  assert.deepEqual(r.findings[199_999]!.thread, { x: 199_999 % 1024, y: 0, z: 0 });

  const small = parseSanitizerXml('memcheck', HEAD + RECORD(0) + RECORD(1) + RECORD(2) + '</ComputeSanitizerOutput>', { maxFindings: 2 });
  assert.equal(small.findings.length, 2);
  assert.equal(small.dropped, 1);
});

test('a record with an endless host stack keeps its first elements only', () => {
  const frames = '<frame><func>f</func><pc>0x1</pc></frame>'.repeat(10_000);
  const r = parseSanitizerXml(
    'memcheck',
    HEAD + `<record><kind>Leak</kind><what><size>8</size></what><hostStack>${frames}</hostStack></record></ComputeSanitizerOutput>`,
  );
  assert.equal(r.findings.length, 1);
  assert.equal(r.findings[0]!.leak?.bytes, 8);
  assert.ok(r.findings[0]!.hostStack.length < 2_000);
  assert.match(r.problems.join(' '), /more than 5,000 elements/);
});

test('writing after a problem, or after close, changes nothing and throws nothing', () => {
  const p = createSanitizerXmlParser('memcheck');
  p.write('<!DOCTYPE x>');
  p.write(oob);
  const r = p.close();
  assert.equal(r.findings.length, 0);
  assert.equal(r.problems.length, 1);
  assert.doesNotThrow(() => p.write(oob));
});

test('a problem quotes an element’s name within bounds, however long the file’s is', () => {
  // From the reader fuzz: a root element of 87,000 characters made a problem longer than a bundle keeps (16,384).
  const root = one(safely(() => parseSanitizerXml('memcheck', `<${'Sanie'.repeat(10_000)}>`)));
  assert.ok(root.length < 1000, `the problem is ${root.length} characters long`);
  assert.match(root, /its root element is <(Sanie)+S?a?n?i?…>, where/);
});
