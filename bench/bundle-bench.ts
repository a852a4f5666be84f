import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ZipFile } from 'yazl';

import { launchPlanSchema } from '../core/plan/plan-schema';
import type { RunOutcome } from '../core/runner/run-outcome';
import { BundleRefusedError, readBundle } from '../main/bundle/read-bundle';
import { buildBundleEntries, writeBundle } from '../main/bundle/write-bundle';
import { doctorReport, hostRedactor } from '../main/cli/bundle-export-command';
import { appVersion, projectRoot } from '../main/paths';
import { loadSample } from '../main/services/sample-service';

/**
 * `npm run bench:bundle` (any machine, no GPU). Exporting the bundle of a typical run (the recorded H100 run of
 * samples/oob-off-by-one, with its plan, doctor report, redacted environment and repro/), timed beside a raw
 * reference in the same run: yazl zipping the same bytes straight to a file, nothing else (no doctor, no
 * redaction, no temporary file, no fsync). Then inspecting hostile bundles made here: a zip bomb (256 MiB of
 * zeros deflated to a few hundred KiB) and 100,000 entries, each to be refused in < 1 s with the heap bounded.
 * Targets: export ≤ 2 s; refusal < 1 s.
 */
const REPEATS = 7;
const TARGET_EXPORT_MS = 2000;
const TARGET_REFUSE_MS = 1000;
const root = projectRoot();
const dir = mkdtempSync(join(tmpdir(), 'wb-bundle-bench-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

async function zipTo(path: string, entries: Iterable<[string, Buffer]>, compress = true): Promise<void> {
  const zip = new ZipFile();
  const handle = await open(path, 'w');
  const done = (async () => {
    for await (const chunk of zip.outputStream) await handle.write(chunk as Buffer);
  })();
  for (const [name, data] of entries) zip.addBuffer(data, name, { compress });
  zip.end();
  await done;
  await handle.close();
}

async function main(): Promise<void> {
  const outcome = JSON.parse(readFileSync(join(root, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8')) as RunOutcome;
  const plan = launchPlanSchema.parse((await loadSample('oob-off-by-one', 'broken')).plan);

  const exportOnce = async (i: number) => {
    const started = performance.now();
    const doctor = await doctorReport(10_000);
    const doctorMs = performance.now() - started;
    const built = buildBundleEntries({
      plan,
      outcome,
      origin: 'sample oob-off-by-one (broken)',
      workbenchVersion: appVersion(),
      createdAt: new Date().toISOString(),
      includeSources: true,
      redactor: hostRedactor(),
      env: process.env,
      doctor,
    });
    const written = await writeBundle(join(dir, `export-${i}.zip`), built.entries);
    return { ms: performance.now() - started, doctorMs, bytes: written.bytes, entries: built.entries };
  };
  const runs = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await exportOnce(i));
  const entries = runs[0]!.entries;
  const raw: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const started = performance.now();
    await zipTo(
      join(dir, `raw-${i}.zip`),
      [...entries].map(([n, b]) => [n, Buffer.from(b)] as [string, Buffer]),
    );
    raw.push(performance.now() - started);
  }
  const cold = runs[0]!;
  const warm = median(runs.slice(1).map((r) => r.ms));
  console.log(`Export of a typical run (oob-off-by-one, ${entries.size} entries, ${(cold.bytes / 1024).toFixed(1)} KiB zip), ${REPEATS} runs:`);
  console.log(`  first (doctor discovers libraries and tools): ${cold.ms.toFixed(1)} ms, of which doctor ${cold.doctorMs.toFixed(1)} ms`);
  console.log(`  median of the rest:                          ${warm.toFixed(1)} ms (doctor cached per process)`);
  console.log(`  raw reference (yazl, same bytes, no fsync):   ${median(raw).toFixed(1)} ms`);
  console.log(`  target ≤ ${TARGET_EXPORT_MS} ms: ${cold.ms <= TARGET_EXPORT_MS ? 'met' : 'MISSED'}`);

  // A zip bomb: one entry of 256 MiB of zeros, and 100,000 empty entries; both with a valid manifest.
  const manifest = Buffer.from(JSON.stringify({ schema: 1, createdAt: '2026-11-23T00:00:00Z', workbench: { version: '0.1.0' }, contents: {} }));
  const bomb = join(dir, 'bomb.zip');
  const many = join(dir, 'many.zip');
  const zeros = Buffer.alloc(256 * 1024 ** 2);
  await zipTo(bomb, [
    ['manifest.json', manifest],
    ['result.json', zeros],
  ]);
  await zipTo(
    many,
    (function* () {
      yield ['manifest.json', manifest] as [string, Buffer];
      for (let i = 0; i < 100_000; i++) yield [`e/${i}`, Buffer.alloc(0)] as [string, Buffer];
    })(),
    false,
  );
  writeFileSync(join(dir, 'marker'), '');
  for (const [label, path] of [
    ['zip bomb (256 MiB of zeros in one entry)', bomb],
    ['100,000 entries', many],
  ] as const) {
    const sizes: number[] = [];
    const times: number[] = [];
    let reason = '';
    for (let i = 0; i < 5; i++) {
      globalThis.gc?.();
      const before = process.memoryUsage().heapUsed;
      const started = performance.now();
      try {
        await readBundle(path);
        reason = 'OPENED (not refused)';
      } catch (error) {
        reason = error instanceof BundleRefusedError ? error.reason : `crashed: ${String(error)}`;
      }
      times.push(performance.now() - started);
      sizes.push(process.memoryUsage().heapUsed - before);
    }
    const file = readFileSync(path).byteLength;
    console.log(`Inspect ${label}, ${mib(file)} file: refused in ${median(times).toFixed(1)} ms (median of 5), heap grew ≤ ${mib(Math.max(0, ...sizes))}`);
    console.log(`  reason: ${reason}`);
    console.log(`  target < ${TARGET_REFUSE_MS} ms: ${median(times) < TARGET_REFUSE_MS && reason !== 'OPENED (not refused)' ? 'met' : 'MISSED'}`);
  }
  console.log(`  heap used now: ${mib(process.memoryUsage().heapUsed)}, rss ${mib(process.memoryUsage().rss)}`);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
