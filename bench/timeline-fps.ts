import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { CDPSession, Page } from 'playwright-core';

import { formatBytes } from '../core/format';
import { launchChromium } from '../test/helpers/browser';
import { startServe } from '../test/helpers/serve-process';
import { generateSnapshotPickle } from './snapshot-pickle';

/**
 * `npm run bench:timeline` (any machine, no GPU): the memory timeline view with 1,000,000 allocations, by the
 * real path. A PyTorch snapshot pickle with that many allocations is generated (bench/snapshot-pickle.ts) and
 * opened in Chromium through the app's own "Open memory snapshot…" (memory.open on the serve host, the
 * timeline on the wire, decoded and drawn in the page). Then the view is zoomed and panned for a few seconds
 * with the wheel, drags and keys, while the page records every requestAnimationFrame interval and every long
 * task. Raw reference: on the same page, an empty canvas of the same size cleared and filled every frame.
 * The JS heap is read (after a forced GC) before opening, after opening and after the interaction.
 *
 * TIMELINE_BENCH_ALLOCATIONS, TIMELINE_BENCH_WORKING_SET (how many are alive at once, 4000 by default),
 * TIMELINE_BENCH_MS and TIMELINE_BENCH_DPR (2: a high-DPI screen) change the defaults.
 *
 * Target: ≥ 30 frames per second (median and p95 frame interval ≤ 33.3 ms) while panning and zooming, and
 * the heap bounded (no growth with interaction beyond the tile cache's bound).
 */
const ALLOCATIONS = Number(process.env['TIMELINE_BENCH_ALLOCATIONS'] ?? 1_000_000);
const INTERACT_MS = Number(process.env['TIMELINE_BENCH_MS'] ?? 6000);
const DPR = Number(process.env['TIMELINE_BENCH_DPR'] ?? 1);
/** How many allocations are alive at most: the raster's work per column grows with it. */
const WORKING_SET = Number(process.env['TIMELINE_BENCH_WORKING_SET'] ?? 4000);
const TARGET_FRAME_MS = 1000 / 30;

interface FrameStats {
  frames: number;
  median: number;
  p95: number;
  max: number;
  longTasks: number;
  longestTask: number;
}

const quantile = (xs: number[], q: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]! : NaN);

/** Starts recording frame intervals and long tasks in the page. */
async function startRecording(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __bench: { deltas: number[]; longTasks: number[]; raf: number; observer: PerformanceObserver } };
    const bench = {
      deltas: [] as number[],
      longTasks: [] as number[],
      raf: 0,
      observer: new PerformanceObserver((list) => list.getEntries().forEach((e) => bench.longTasks.push(e.duration))),
    };
    bench.observer.observe({ type: 'longtask' });
    let last = performance.now();
    const loop = (now: number) => {
      bench.deltas.push(now - last);
      last = now;
      bench.raf = requestAnimationFrame(loop);
    };
    bench.raf = requestAnimationFrame(loop);
    w.__bench = bench;
  });
}

async function stopRecording(page: Page): Promise<FrameStats> {
  const { deltas, longTasks } = await page.evaluate(() => {
    const bench = (window as unknown as { __bench: { deltas: number[]; longTasks: number[]; raf: number; observer: PerformanceObserver } }).__bench;
    cancelAnimationFrame(bench.raf);
    bench.observer.disconnect();
    return { deltas: bench.deltas.slice(1), longTasks: bench.longTasks };
  });
  return {
    frames: deltas.length,
    median: quantile(deltas, 0.5),
    p95: quantile(deltas, 0.95),
    max: Math.max(...deltas),
    longTasks: longTasks.length,
    longestTask: longTasks.length ? Math.max(...longTasks) : 0,
  };
}

/** The page's memory after a forced GC: the JS heap, and the ArrayBuffers' backing stores (the typed columns, the tiles' pixels) outside it. */
async function heapUsed(cdp: CDPSession): Promise<{ heap: number; buffers: number }> {
  await cdp.send('HeapProfiler.collectGarbage');
  const usage = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; backingStorageSize?: number };
  return { heap: usage.usedSize, buffers: usage.backingStorageSize ?? NaN };
}

const memoryText = (m: { heap: number; buffers: number }) => `${formatBytes(m.heap)} heap + ${formatBytes(m.buffers)} array buffers`;

/** Waits until every tile in view is drawn at its own level; returns how long that took. */
async function settled(page: Page, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor({ timeout: timeoutMs });
  return performance.now() - started;
}

/** A few seconds of what a person does: wheel in and out at places, drag, keys, shift+wheel. */
async function interact(page: Page, ms: number): Promise<number> {
  const canvas = page.getByTestId('timeline-canvas').first();
  const box = (await canvas.boundingBox())!;
  const at = (fx: number, fy: number) => ({ x: box.x + 150 + (box.width - 160) * fx, y: box.y + Math.min(box.height - 10, 200 + (box.height - 200) * fy) });
  let inputs = 0;
  const end = performance.now() + ms;
  for (let i = 0; performance.now() < end; i++) {
    const phase = i % 48;
    const p = at(0.2 + (0.6 * ((i * 7) % 11)) / 10, 0.5);
    if (phase < 12) {
      await page.mouse.move(p.x, p.y);
      await page.mouse.wheel(0, -120);
    } else if (phase < 18) {
      await page.mouse.move(p.x, p.y);
      await page.mouse.down();
      for (let k = 1; k <= 4; k++) await page.mouse.move(p.x - 30 * k, p.y);
      await page.mouse.up();
      inputs += 5;
    } else if (phase < 26) {
      await canvas.focus();
      await page.keyboard.press(phase % 2 ? '+' : 'ArrowRight');
    } else if (phase < 32) {
      await page.keyboard.down('Shift');
      await page.mouse.wheel(0, 100);
      await page.keyboard.up('Shift');
    } else if (phase < 40) {
      await page.keyboard.press(phase % 2 ? '-' : 'ArrowLeft');
    } else {
      await page.mouse.move(p.x, p.y);
      await page.mouse.wheel(0, 120);
    }
    inputs++;
  }
  return inputs;
}

/** The raw reference: a canvas the size of the view cleared and filled each frame, nothing else. */
async function rawReference(page: Page, ms: number): Promise<FrameStats> {
  await page.evaluate(() => {
    const view = document.querySelector('[data-testid="memory-timeline"] canvas') as HTMLCanvasElement;
    const c = document.createElement('canvas');
    c.width = view.width;
    c.height = view.height;
    c.style.cssText = 'position:fixed;left:0;top:0;pointer-events:none;opacity:0.5';
    c.id = 'bench-raw';
    document.body.append(c);
    const ctx = c.getContext('2d', { alpha: false })!;
    let n = 0;
    const loop = () => {
      ctx.clearRect(0, 0, c.width, c.height);
      ctx.fillStyle = n++ % 2 ? '#345' : '#543';
      ctx.fillRect(0, 0, c.width, c.height);
      (window as unknown as { __rawRaf: number }).__rawRaf = requestAnimationFrame(loop);
    };
    loop();
  });
  await startRecording(page);
  await page.waitForTimeout(ms);
  const stats = await stopRecording(page);
  await page.evaluate(() => {
    cancelAnimationFrame((window as unknown as { __rawRaf: number }).__rawRaf);
    document.getElementById('bench-raw')?.remove();
  });
  return stats;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-bench-timeline-'));
  let serve: Awaited<ReturnType<typeof startServe>> | null = null;
  let browser: Awaited<ReturnType<typeof launchChromium>> | null = null;
  try {
    let started = performance.now();
    const file = join(work, 'snapshot-1m.pickle');
    writeFileSync(file, generateSnapshotPickle({ allocations: ALLOCATIONS }, WORKING_SET));
    console.log(
      `generated a snapshot with ${ALLOCATIONS.toLocaleString('en')} allocations, at most ${WORKING_SET.toLocaleString('en')} alive at once: ${formatBytes(statSync(file).size)} pickle in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: DPR });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // The largest API message the page receives, and when (page clock): the host's answer to memory.open.
    await page.addInitScript(() => {
      const Native = window.WebSocket;
      const w = window as unknown as { __largest: { size: number; at: number } };
      w.__largest = { size: 0, at: 0 };
      window.WebSocket = class extends Native {
        constructor(...args: ConstructorParameters<typeof WebSocket>) {
          super(...args);
          this.addEventListener('message', (e: MessageEvent) => {
            const size = typeof e.data === 'string' ? e.data.length : 0;
            if (size > w.__largest.size) w.__largest = { size, at: performance.now() };
          });
        }
      };
    });
    const cdp = await page.context().newCDPSession(page);
    await page.goto(serve.url);
    await page.getByTestId('tab').first().waitFor();
    // the output panel as tall as the window, the Memory tab forward
    await page.getByTestId('output-tab-Memory').click();
    await page.getByTestId('maximize-output').click();
    const heapBefore = await heapUsed(cdp);

    started = performance.now();
    await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
    await page.getByLabel('Memory snapshot or result file').fill(file);
    await page.getByRole('button', { name: 'Open snapshot' }).click();
    await page.getByTestId('memory-timeline').waitFor({ timeout: 600_000 });
    const openedMs = performance.now() - started;
    const firstSharpMs = openedMs + (await settled(page));
    const answer = await page.evaluate(() => ({ ...(window as unknown as { __largest: { size: number; at: number } }).__largest, now: performance.now() }));
    const heapOpen = await heapUsed(cdp);
    const summary = await page.getByTestId('memory-summary').innerText();
    // the page's own clock: from the answer's arrival to now (the timeline drawn and every tile settled)
    const drawnMs = answer.now - answer.at;
    console.log(
      `opened through memory.open in ${(firstSharpMs / 1000).toFixed(1)} s: the host's answer (${formatBytes(answer.size)} of JSON, one WebSocket message) ` +
        `arrived after ${((firstSharpMs - drawnMs) / 1000).toFixed(1)} s; the page parsed, decoded, laid out and drew it, every tile, in ${(drawnMs / 1000).toFixed(1)} s`,
    );
    console.log(`summary: ${summary.split('\n')[0]}`);

    await startRecording(page);
    const inputs = await interact(page, INTERACT_MS);
    const view = await stopRecording(page);
    const sharpAfterMs = await settled(page);
    const heapAfter = await heapUsed(cdp);
    const raw = await rawReference(page, 3000);
    if (errors.length) console.log(`page errors: ${errors.join('; ')}`);

    const fps = (ms: number) => (1000 / ms).toFixed(1);
    const row = (name: string, a: string, b: string, c: string) => console.log(`${name.padEnd(34)} ${a.padStart(14)} ${b.padStart(14)} ${c.padStart(12)}`);
    console.log('');
    console.log(
      `pan and zoom for ${INTERACT_MS / 1000} s: ${inputs} inputs (wheel at the pointer, drags, + − ← →, Shift+wheel), 1440×900, devicePixelRatio ${DPR}`,
    );
    row('', 'timeline view', 'raw canvas', 'target');
    row('frames recorded', String(view.frames), String(raw.frames), '');
    row('median frame interval (ms)', view.median.toFixed(1), raw.median.toFixed(1), `≤ ${TARGET_FRAME_MS.toFixed(1)}`);
    row('p95 frame interval (ms)', view.p95.toFixed(1), raw.p95.toFixed(1), `≤ ${TARGET_FRAME_MS.toFixed(1)}`);
    row('slowest frame (ms)', view.max.toFixed(1), raw.max.toFixed(1), '');
    row('fps at the median / p95', `${fps(view.median)} / ${fps(view.p95)}`, `${fps(raw.median)} / ${fps(raw.p95)}`, '≥ 30');
    row('long tasks (> 50 ms), longest', `${view.longTasks}, ${view.longestTask.toFixed(0)} ms`, `${raw.longTasks}, ${raw.longestTask.toFixed(0)} ms`, '');
    row('tiles sharp again after (ms)', sharpAfterMs.toFixed(0), '', '');
    console.log('');
    const total = (m: { heap: number; buffers: number }) => m.heap + m.buffers;
    const growth = total(heapAfter) - total(heapOpen);
    console.log(`page memory after GC, before opening:     ${memoryText(heapBefore)}`);
    console.log(`                  with the timeline open: ${memoryText(heapOpen)}`);
    console.log(
      `                  after the interaction:  ${memoryText(heapAfter)} (${growth >= 0 ? '+' : '−'}${formatBytes(Math.abs(growth))}: tiles are drawn on canvases, at most 64 kept)`,
    );
    const pass = view.median <= TARGET_FRAME_MS && view.p95 <= TARGET_FRAME_MS;
    console.log(
      `${pass ? 'PASS' : 'FAIL'}: median ${view.median.toFixed(1)} ms, p95 ${view.p95.toFixed(1)} ms per frame (target ≤ ${TARGET_FRAME_MS.toFixed(1)} ms, 30 fps)`,
    );
    if (!pass) process.exitCode = 1;
  } finally {
    await browser?.close();
    serve?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
