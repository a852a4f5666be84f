import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { discoverLibraries } from '../../main/services/discovery-service';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { validateChromeTrace, type TraceEvent } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { openResult, sizeName, VIEWPORTS, type Viewport } from '../helpers/ui';

// Issue 14 (the view): the memory timeline of PyTorch snapshots recorded on an H100 with PyTorch 2.11
// (test/fixtures/snapshots/h100: oom.pickle — 8 × 64 MiB allocated at line 4, every other one freed at line 5,
// then 10 TiB asked for at line 7; leak.pickle — 50 × 4 MiB kept at line 16), opened as a person does, read
// through what the page says (names, text), zoomed and stepped through with the keyboard.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-memory-'));
const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const app = serveWithBrowser(work);

async function openSnapshot(page: Page, path: string, as: 'Open memory snapshot…' | 'Compare with…' = 'Open memory snapshot…'): Promise<void> {
  await page.getByTestId('output-tab-Memory').click();
  await page.getByRole('button', { name: as }).click();
  const dialog = page.getByTestId('memory-open-dialog');
  await dialog.getByLabel('Memory snapshot or result file').fill(path);
  await dialog.getByRole('button', { name: as === 'Compare with…' ? 'Compare' : 'Open snapshot' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** A page of the app whose context lets axe-core in (the page's CSP forbids inline scripts), collecting the page's errors. */
async function openApp(viewport: Viewport): Promise<{ page: Page; errors: string[] }> {
  const context = await app.browser.newContext({ viewport, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.serve.url);
  await page.getByTestId('tab').first().waitFor();
  return { page, errors };
}

/** Waits until every tile of the (first) timeline on screen is drawn. */
const tilesDrawn = (page: Page) => page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();

for (const viewport of VIEWPORTS) {
  test(`14 (${sizeName(viewport)}): an OOM snapshot: the OOM and what was left alive said in words and marked; an allocation found by keyboard, with its size, address and line`, async () => {
    const { page, errors } = await openApp(viewport);
    await openSnapshot(page, join(H100, 'oom.pickle'));
    assert.equal(await page.getByTestId('output-tab-Memory').getAttribute('aria-selected'), 'true');

    // The summary beside the canvas says it all in words, for everyone and for screen readers.
    const summary = page.getByTestId('memory-summary');
    await summary.waitFor();
    const text = await summary.innerText();
    assert.match(text, /oom\.pickle/);
    assert.match(text, /1 out-of-memory error/);
    assert.match(text, /4 allocations \(256 MiB\) still alive when the timeline ends: leak candidates/);
    // Each marker is a button a person can reach: the OOM and the leak among them.
    const markers = page.getByRole('list', { name: 'Markers' }).getByRole('button');
    const names = await markers.allInnerTexts();
    assert.ok(
      names.some((n) => /^Out of memory at .*10 TiB/i.test(n)),
      `no OOM marker among: ${names.join(' | ')}`,
    );
    assert.ok(
      names.some((n) => /^Leak at /.test(n)),
      `no leak marker among: ${names.join(' | ')}`,
    );

    // The canvas is a named, focusable part of the page whose keys are described.
    const canvas = page.getByRole('application', { name: /Memory timeline of oom\.pickle/ });
    await canvas.waitFor();
    await tilesDrawn(page);
    await canvas.focus();
    const window0 = await page.getByTestId('timeline-window').innerText();
    for (let i = 0; i < 3; i++) await page.keyboard.press('+');
    await tilesDrawn(page);
    assert.notEqual(await page.getByTestId('timeline-window').innerText(), window0, 'the keys zoomed in');
    assert.match(await page.getByTestId('timeline-said').innerText(), /^Showing .* to .*\.$/);
    await page.keyboard.press('0');
    // ] selects the next allocation: the first of the eight 64 MiB ones, made at line 4 of the script.
    await page.keyboard.press(']');
    const details = page.getByTestId('memory-details');
    await details.waitFor();
    const facts = await details.getByTestId('memory-details-facts').innerText();
    assert.match(facts, /Size\s+64 MiB \(67,108,864 bytes\)/);
    assert.match(facts, /Address\s+0x[0-9a-f]{8,}/);
    assert.match(facts, /Made at\s+<stdin>:4/);
    const stack = details.getByTestId('memory-stack');
    assert.match(await stack.innerText(), /<stdin>:4/);
    // PyTorch's 30 frames around the user's line are two lines that open, not 30 rows to read past.
    const runs = stack.getByRole('button', { name: /internal frames/ });
    assert.equal(await runs.count(), 2, await stack.innerText());
    assert.match(await runs.first().innerText(), /^▸ \d+ internal frames \(PyTorch, Python and the runtime\)$/);
    assert.doesNotMatch(await stack.innerText(), /CUDACachingAllocator/, 'folded: the allocator’s frames are not shown');
    await runs.first().focus();
    await page.keyboard.press('Enter');
    assert.equal(await runs.first().getAttribute('aria-expanded'), 'true');
    assert.match(await stack.innerText(), /CUDACachingAllocator/, 'opened by keyboard: every folded frame is there');
    await page.keyboard.press('Enter');
    assert.doesNotMatch(await stack.innerText(), /CUDACachingAllocator/);
    await canvas.focus();
    assert.match(await page.getByTestId('timeline-said').innerText(), /64 MiB allocation from <stdin>:4\. Size: 64 MiB/);
    // ↑ steps up the stack, ] to the next one made
    await page.keyboard.press(']');
    assert.match(await details.getByTestId('memory-details-title').innerText(), /64 MiB/);

    // The OOM marker: what was alive then, grouped by stack.
    await markers.filter({ hasText: 'Out of memory' }).first().click();
    const alive = page.getByTestId('memory-alive-at');
    await alive.waitFor();
    assert.match(await alive.getByTestId('memory-alive-total').innerText(), /^4 allocations, 256 MiB/);
    assert.match(await alive.getByTestId('memory-groups').innerText(), /<stdin>:4[\s\S]*256 MiB\s+4\s+64 MiB/);

    assert.deepEqual(await seriousViolations(page), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}

test('14: hovering an allocation tells what it is; a click selects it; the Peak button lists what was alive then', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  await page.getByTestId('tab').first().waitFor();
  await openSnapshot(page, join(H100, 'leak.pickle'));
  await page.getByTestId('maximize-output').click();
  await tilesDrawn(page);
  // low in the allocations area, half way along: the 64 MiB blocks held since before the recording
  const box = (await page.getByTestId('memory-timeline').locator('.timeline-canvas-box').boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height - 20);
  const tip = page.getByTestId('timeline-tooltip');
  await tip.waitFor();
  assert.match(await tip.innerText(), /64 MiB[\s\S]*Size: 64 MiB[\s\S]*Address: 0x[0-9a-f]+[\s\S]*Alive:/);
  await page.mouse.down();
  await page.mouse.up();
  assert.match(await page.getByTestId('memory-details').getByTestId('memory-details-title').innerText(), /64 MiB/);
  await page.getByRole('button', { name: 'Peak', exact: true }).click();
  assert.match(await page.getByTestId('memory-alive-at').innerText(), /The peak/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('14: two snapshots compared: both drawn, the peak difference and the groups that grew', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  await page.getByTestId('tab').first().waitFor();
  await openSnapshot(page, join(H100, 'oom.pickle'));
  await openSnapshot(page, join(H100, 'leak.pickle'), 'Compare with…');
  const compared = page.getByTestId('memory-compare');
  await compared.waitFor();
  assert.match(await compared.getByTestId('memory-compare-peak').innerText(), /^Peak .* in oom\.pickle, .* in leak\.pickle: [+−±]/);
  // what leak.pickle kept at line 16 (50 × 4 MiB), which oom.pickle never held
  assert.match(await compared.getByTestId('memory-compare-growth').innerText(), /<stdin>:16[^\n]*\+200 MiB\s+0 B\s+200 MiB/);
  await page.getByTestId('memory-timeline-compare').getByRole('application').waitFor();
  assert.deepEqual(await seriousViolations(page), []);
  assert.deepEqual(await unnamedOrDuplicateControls(page), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('14: a run recorded on an H100 with its event log: its buffers stacked, the leaks marked and named, a buffer and a kernel selected by keyboard', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  // never-frees: a, b and c (4 MiB each) allocated at steps 0–2 and never freed; vecAdd launched at step 5
  await openResult(page, join(ROOT, 'test/fixtures/runs/never-frees.json'));
  await page.getByTestId('diagnosis-headline').waitFor();
  await page.getByTestId('output-tab-Memory').click();
  const summary = page.getByTestId('memory-summary');
  await summary.waitFor();
  assert.match(
    await summary.innerText(),
    /^never-frees\.json \(Run on NVIDIA H100 80GB HBM3 \(cuda:0\)\) — 3 allocations over [\d.]+ ms\. Peak 12 MiB at [\d.]+ ms, with 3 allocations alive\. 3 allocations \(12 MiB\) never freed: leaked\./,
  );
  const names = await page.getByRole('list', { name: 'Markers' }).getByRole('button').allInnerTexts();
  for (const buffer of ['a', 'b', 'c'])
    assert.ok(
      names.some((n) => n.startsWith('Leak at ') && n.endsWith(`: leak: ${buffer} (4 MiB) never freed`)),
      `no leak marker for ${buffer} among ${names.join(' | ')}`,
    );
  await page.getByRole('application', { name: 'Memory timeline of never-frees.json' }).focus();
  await page.keyboard.press(']');
  const details = page.getByTestId('memory-details');
  assert.equal(await details.getByTestId('memory-details-title').innerText(), 'a (4 MiB)');
  assert.match(await details.getByTestId('memory-details-facts').innerText(), /Address\s+0x7fc432800100[\s\S]*never freed[\s\S]*Step\s+step 0: /);
  // . goes through the spans in time: the module load, the copies, then the launch
  let title = '';
  for (let i = 0; i < 12 && !title.startsWith('Kernel: '); i++) {
    await page.keyboard.press('.');
    title = await details.getByTestId('memory-details-title').innerText();
  }
  assert.match(title, /^Kernel: /);
  assert.match(await details.getByTestId('memory-details-facts').innerText(), /Step\s+step 5: /);
  // A range by keyboard alone: zoom out to the whole run, R, and its figures are read out and shown.
  await page.keyboard.press('0');
  await page.keyboard.press('r');
  assert.match(await details.getByTestId('memory-details-title').innerText(), /^Range 0 .*to [\d.]+ ms$/);
  const figures = await details.getByTestId('memory-details-facts').innerText();
  assert.match(figures, /Allocated\s+12 MiB in 3 allocations/);
  assert.match(figures, /Freed\s+0 B in 0 allocations/);
  assert.match(figures, /Net change\s+\+12 MiB/);
  assert.match(figures, /Kernels\s+\d+ kernels?, .+ of GPU time in the range/);
  // What is read out follows the selection a frame later: waited for, not read at once (a loaded machine lags).
  const said = page.getByTestId('timeline-said');
  await said.filter({ hasText: /^Range 0 / }).waitFor({ timeout: 5_000 });
  assert.match(await said.innerText(), /^Range 0 .*\. Lasts: .*\. Allocated: 12 MiB in 3 allocations\./);
  // Home then zoom in: the first stretch holds only the first allocation (a, at step 0), and R says so.
  await page.keyboard.press('Home');
  for (let i = 0; i < 12; i++) await page.keyboard.press('+');
  await page.keyboard.press('r');
  assert.doesNotMatch(await details.getByTestId('memory-details-facts').innerText(), /in 3 allocations/, 'the stretch shown, not the whole run');
  assert.deepEqual(await seriousViolations(page), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('14: results without an event log: an older one drawn by step, and said so; a run with no result: no timeline, and why', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  // divergent-barrier.json keeps its allocation records by step, but no event log
  await openResult(page, join(ROOT, 'test/fixtures/runs/divergent-barrier.json'));
  await page.getByTestId('diagnosis-headline').waitFor();
  await page.getByTestId('output-tab-Memory').click();
  assert.match(await page.getByTestId('memory-summary').innerText(), /no event log: the steps in order, one a millisecond, not to time/);
  // infinite-loop.json: the runner was stopped, nothing came back from the device
  await openResult(page, join(ROOT, 'test/fixtures/runs/infinite-loop.json'));
  await page.getByTestId('diagnosis-headline').waitFor();
  await page.getByTestId('output-tab-Memory').click();
  const empty = page.getByTestId('memory-empty');
  await empty.waitFor();
  assert.match(await empty.innerText(), /^There is no memory timeline: this run has no result from the device to draw \(.+\)\.$/);
  assert.equal(await page.getByRole('application').count(), 0);
  // and a file that is not a snapshot is refused with its reason
  await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
  const dialog = page.getByTestId('memory-open-dialog');
  await dialog.getByLabel('Memory snapshot or result file').fill(join(ROOT, 'test/fixtures/pickles/evil-global.pickle'));
  await dialog.getByRole('button', { name: 'Open snapshot' }).click();
  const refusal = dialog.getByTestId('memory-open-error');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /evil-global\.pickle/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('14: the monitor: with NVML, each GPU live and Stop ends it; without, why it cannot and what to do', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  await page.getByTestId('output-tab-Memory').click();
  await page.getByLabel('Sampling interval (ms)').fill('5');
  assert.equal(await page.getByRole('button', { name: 'Start monitoring' }).isDisabled(), true, 'below 10 ms is refused');
  await page.getByLabel('Sampling interval (ms)').fill('50');
  if (discoverLibraries().nvml.loaded) {
    await page.getByRole('button', { name: 'Start monitoring' }).click();
    // a real device: its used memory is a track, drawn live, until Stop
    await page.getByRole('application', { name: /Memory timeline of the monitor/ }).waitFor();
    await page
      .getByTestId('memory-summary')
      .filter({ hasText: /GPU \d+ used/ })
      .waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Stop monitoring' }).click();
    await page.getByRole('button', { name: 'Start monitoring' }).waitFor();
  } else {
    // Without NVML the button is off before it is pressed, and says why (issue 26, item 7).
    assert.equal(await page.getByRole('button', { name: 'Start monitoring' }).isDisabled(), true);
    assert.match(await page.getByTestId('monitor-unavailable').innerText(), /^Monitoring needs NVML \(libnvidia-ml\.so\.1, installed with the NVIDIA driver\)/);
    await page.getByTestId('memory-source-monitor').click();
    assert.equal(await page.getByRole('application').count(), 0, 'nothing sampled, nothing drawn');
    assert.match(await page.getByTestId('memory-empty').innerText(), /Start monitoring/);
  }
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('14: the Perfetto export of a recorded timeline is valid trace JSON, with its leaks; a snapshot exports its OOM', async () => {
  const { page, errors } = await openApp(VIEWPORTS[0]);
  await openResult(page, join(ROOT, 'test/fixtures/runs/never-frees.json'));
  await page.getByTestId('diagnosis-headline').waitFor();
  await page.getByTestId('output-tab-Memory').click();
  await page.getByTestId('memory-summary').waitFor();
  const exportTo = async (file: string): Promise<Map<string, TraceEvent[]>> => {
    const path = join(work, file);
    await page.getByTestId('memory-export-path').fill(path);
    await page.getByTestId('memory-export-trace').click();
    const said = page.getByTestId('memory-export-said');
    await said.waitFor();
    assert.match(await said.innerText(), new RegExp(`^Wrote ${path.replace(/[.]/g, '\\.')} \\(.+, \\d+ events\\): open it in https://ui\\.perfetto\\.dev`));
    return validateChromeTrace(readFileSync(path, 'utf8'));
  };
  const run = await exportTo('never-frees.trace.json');
  const instants = (run.get('i') ?? []).map((e) => e.name);
  for (const buffer of ['a', 'b', 'c'])
    assert.ok(
      instants.some((n) => n.includes(`${buffer} (4 MiB) never freed`)),
      `leak of ${buffer} in ${instants.join(' | ')}`,
    );
  assert.ok(
    (run.get('X') ?? []).some((e) => e.name.includes('vecAdd')),
    'the launch is a span',
  );
  // The samples of a run that did not sample: nothing to export, and the button says so.
  assert.equal(await page.getByTestId('memory-export-csv').isDisabled(), true);

  await openSnapshot(page, join(H100, 'oom.pickle'));
  await tilesDrawn(page);
  const snapshot = await exportTo('oom.trace.json');
  assert.ok(
    (snapshot.get('i') ?? []).some((e) => /out of memory|OOM/i.test(e.name)),
    'the OOM is an instant',
  );
  assert.ok((snapshot.get('C') ?? []).length > 0, 'allocated and reserved are counters');

  // A name with nowhere to go is said, not written.
  await page.getByTestId('memory-export-path').fill('');
  await page.getByTestId('memory-export-trace').click();
  assert.match(await page.getByTestId('memory-export-said').innerText(), /Give a file name/);
  assert.deepEqual(errors, []);
  await page.context().close();
});
