import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { findComputeSanitizer } from '../../main/tools/compute-sanitizer';
import { discoverLibraries } from '../../main/services/discovery-service';
import { openWorkbenchPage } from '../helpers/browser';
import { seriousViolations } from '../helpers/a11y';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { assertInViewport, chooseDevice, openApp, openResult, openSample, sizeName, VIEWPORTS, waitForCompile } from '../helpers/ui';

// Issue 12, items 9 and 10: the first load on a machine without a GPU says so and what still works; a
// file that is not a result, numbers, Save as, and the occupancy chart's tooltip, as a person sees them.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-nogpu-'));
const home = join(work, 'home');
mkdirSync(home);
const RUNS = join(ROOT, 'test/fixtures/runs');
const hasCompiler = findNvcc().then((n) => n.found);
const hasDriver = discoverLibraries().cuda.loaded;
// HOME is the host's home folder: where Save as starts. The test's own, not the user's.
const app = serveWithBrowser(work, { HOME: home });

for (const viewport of VIEWPORTS) {
  test(
    `9 (${sizeName(viewport)}): the first load without a GPU says so, what still works and how; Run is off and says why`,
    { skip: hasDriver && 'this machine has a driver' },
    async () => {
      const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
      const banner = page.getByTestId('no-gpu-banner');
      await banner.waitFor();
      const said = await banner.innerText();
      assert.match(said, /No GPU to run on: No NVIDIA driver found/);
      assert.match(said, /Still works: compile as you type \((nvcc|NVRTC)\)/);
      assert.match(said, /check launches against the shipped NVIDIA H100 80GB HBM3 and NVIDIA H200 profiles \(Device, in the Launch panel\)/);
      assert.match(said, /open results recorded on a GPU \(Run tab, Open result\)/);
      assert.match(said, /To run kernels, use a machine with an NVIDIA driver: gpu-workbench serve there/);
      await assertInViewport(page, banner.locator('strong'), 'the banner');

      const runButton = page.getByTestId('run-button');
      await runButton.waitFor();
      assert.equal(await runButton.isDisabled(), true);
      assert.match((await runButton.getAttribute('title')) ?? '', /Run needs an NVIDIA GPU, and this machine has none: No NVIDIA driver found/);
      const why = page.getByTestId('run-blockers');
      assert.match(
        await why.innerText(),
        /Run needs an NVIDIA GPU, and this machine has none: No NVIDIA driver found\. Compiling, checking launches against a profile and opening recorded results still work\./,
      );
      await assertInViewport(page, why, 'why Run is off');

      // The Devices page offers the shipped profiles, and one click puts a profile to use.
      await page.getByTestId('devices-tab').click();
      const offer = page.getByTestId('profiles-offer');
      assert.match(
        await offer.innerText(),
        /Without a GPU, check launches against a profile[\s\S]*NVIDIA H100 80GB HBM3 \(profile[\s\S]*NVIDIA H200 \(profile/i,
      );
      const use = offer.getByRole('button', { name: /Use NVIDIA H200/ });
      if (await use.count()) await use.click();
      await offer.locator('li').filter({ hasText: 'NVIDIA H200' }).getByText('✓ in use').waitFor();
      await assertInViewport(page, offer.locator('h3'), 'the profiles offer');
      await page.getByRole('tab', { name: 'Editor' }).click();
      await page.getByTestId('launch-panel').getByLabel('Device').waitFor();
      assert.match(await page.getByTestId('launch-panel').getByLabel('Device').locator('option:checked').innerText(), /NVIDIA H200/);
      assert.deepEqual(errors, []);
      await page.close();
    },
  );

  test(`10 (${sizeName(viewport)}): a JSON file that is not a result gets a message in words, not a schema dump`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await openResult(page, join(ROOT, 'package.json'));
    const alert = page.getByTestId('run-result').getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.match(said, /package\.json is not a GPU Workbench run result: it has neither a "status" nor a "diagnosis"\. Open a file written by Save result/);
    assert.doesNotMatch(said, /Invalid|expected|received|\bpath\b/i);
    await assertInViewport(page, alert, 'the message');

    await openResult(page, join(SAMPLES, 'vector-add/plan.json'));
    await alert.filter({ hasText: 'is a launch plan, not a run result' }).waitFor();
    assert.match(await alert.innerText(), /Load it with Load plan in the Run section/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): numbers read as numbers: 1.07e+37, not 1.0687624325403613e+37; "< 0.01 waves", not "0.00 waves"`, async (t) => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await openResult(page, join(RUNS, 'shared-memory-race.json'));
    const out = page.getByTestId('buffer-out').locator('h4');
    await out.waitFor();
    assert.match(await out.innerText(), /max 1\.07e\+37 · mean 3\.61e\+32/);
    assert.doesNotMatch(await page.getByTestId('run-result').innerText(), /1\.0687624325403613e\+37/);
    await assertInViewport(page, out, 'the buffer summary');

    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await waitForCompile(page);
    await chooseDevice(page, /NVIDIA H200.*profile/);
    await page.getByTestId('launch-panel').getByLabel('Grid').fill('1');
    await page.getByTestId('launch-panel').getByLabel('Block', { exact: true }).fill('256');
    const detail = page.getByTestId('occupancy-detail');
    assert.match(await detail.innerText(), /^< 0\.01 waves · /);
    await page.getByTestId('launch-panel').getByLabel('Grid').fill('528');
    assert.match(await detail.innerText(), /^0\.5 waves · /);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): Save as shows the folder and the full path it writes, and says where it wrote`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.getByRole('button', { name: 'Save as…' }).click();
    assert.equal(await page.getByTestId('save-folder').innerText(), home);
    const name = `mine-${viewport.width}.cu`;
    await page.getByLabel('Save to path').fill(name);
    assert.equal(await page.getByTestId('save-target').innerText(), `Saves to ${join(home, name)}`);
    await assertInViewport(page, page.getByTestId('save-target'), 'where it saves');
    await page.getByRole('dialog', { name: 'Save as' }).getByRole('button', { name: 'Save', exact: true }).click();
    const notice = page.locator('.banner[role=alert]').filter({ hasText: 'Saved to' });
    assert.equal(await notice.innerText().then((t) => /Saved to (\S+)/.exec(t)?.[1]), join(home, name));
    assert.ok(existsSync(join(home, name)));
    assert.match(readFileSync(join(home, name), 'utf8'), /__global__ void kernel/);
    await page.getByRole('button', { name: 'Dismiss' }).click();

    // A result saved by name goes into the folder shown, and the message names the full path.
    await openResult(page, join(RUNS, 'null-pointer.json'));
    await page.getByText(`opened from ${join(RUNS, 'null-pointer.json')}`).waitFor();
    await page.getByLabel('Result file').fill(`saved-${viewport.width}.json`);
    assert.equal(await page.getByTestId('result-path-shown').innerText(), join(RUNS, `saved-${viewport.width}.json`));
    await page.getByLabel('Result file').fill(join(work, `saved-${viewport.width}.json`));
    await page.getByRole('button', { name: 'Save result' }).click();
    assert.equal(await page.getByTestId('result-saved').innerText(), `Result saved to ${join(work, `saved-${viewport.width}.json`)}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): the occupancy chart tells each block size's occupancy on hover, its tooltip inside the viewport`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await waitForCompile(page);
    const chart = page.getByTestId('occupancy-chart').locator('.u-over');
    await chart.scrollIntoViewIfNeeded();
    const box = (await chart.boundingBox())!;
    // The right end of the chart, at the right edge of the window: the tooltip must not be cut off.
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    const tip = page.getByTestId('occupancy-tooltip');
    assert.match(await tip.innerText(), /1024 threads per block[\s\S]*Occupancy \d+% · \d+ blocks\/SM · limited by/);
    await assertInViewport(page, tip, 'the chart tooltip');
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await tip.filter({ hasText: '32 threads per block' }).waitFor();
    await assertInViewport(page, tip, 'the chart tooltip');
    assert.deepEqual(errors, []);
    await page.close();
  });
}

// Issue 26, item 7: what cannot work on this machine is off and says why, before it is pressed — as Run is — from the
// host's discovery (the doctor's): the re-run under compute-sanitizer, and monitoring without NVML.
test(
  '26.7: the re-run under compute-sanitizer and Start monitoring are off here, each with its reason on screen',
  { skip: hasDriver && 'this machine has a driver' },
  async () => {
    const tool = await findComputeSanitizer();
    const nvml = discoverLibraries().nvml.loaded;
    for (const viewport of VIEWPORTS) {
      const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
      // A recorded failure with its sample's plan open: everything the re-run needs but the machine.
      await openResult(page, join(RUNS, 'oob-off-by-one.json'));
      await openSample(page, 'oob-off-by-one');
      await page.getByTestId('output-tab-Run').click();
      const rerun = page.getByTestId('sanitizer-rerun');
      const note = page.getByTestId('sanitizer-rerun-note');
      const why = tool.found
        ? /^compute-sanitizer runs the plan on a GPU, and this machine has none: No NVIDIA driver found\./
        : /^compute-sanitizer was not found on this machine \(Devices shows where it was looked for\)\. It ships with the CUDA toolkit/;
      await note.filter({ hasText: why }).waitFor();
      assert.equal(await rerun.isDisabled(), true, `${sizeName(viewport)}: the re-run is off`);
      assert.match((await rerun.getAttribute('title')) ?? '', why);
      assert.equal(await rerun.getAttribute('aria-describedby'), 'sanitizer-rerun-note');
      assert.doesNotMatch(await note.innerText(), /\/usr\/|\(loader path\)/, 'the reason, not a wall of searched paths');
      await assertInViewport(page, note, `${sizeName(viewport)}: why the re-run is off`);

      await page.getByTestId('output-tab-Memory').click();
      const start = page.getByTestId('monitor-start');
      await start.waitFor();
      if (!nvml) {
        assert.equal(await start.isDisabled(), true, `${sizeName(viewport)}: Start monitoring is off`);
        const said = page.getByTestId('monitor-unavailable');
        assert.equal(
          await said.innerText(),
          'Monitoring needs NVML (libnvidia-ml.so.1, installed with the NVIDIA driver), and it was not found on this machine (Devices shows where it was looked for).',
        );
        assert.equal(await start.getAttribute('aria-describedby'), 'monitor-unavailable');
        assert.equal(await page.getByRole('checkbox', { name: 'sample during runs' }).isDisabled(), true);
        await assertInViewport(page, said, `${sizeName(viewport)}: why monitoring is off`);
      }
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(errors, []);
      await page.context().close();
    }
  },
);

// Issue 26, item 7: everything else that runs under compute-sanitizer is off, with its reason, where the tool is missing.
test('26.7: without compute-sanitizer, Sanitize a program… and a diagnosis’s sanitizer passes are off, each with its reason on screen', async (t) => {
  if ((await findComputeSanitizer()).found) return t.skip('this machine has compute-sanitizer');
  const why =
    /^compute-sanitizer was not found on this machine \(Devices shows where it was looked for\)\. It ships with the CUDA toolkit \(bin\/compute-sanitizer\); install it, or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path\./;
  for (const viewport of VIEWPORTS) {
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
    await page.getByTestId('output-tab-Sanitizer').click();
    const button = page.getByTestId('sanitize-program');
    const note = page.getByTestId('sanitize-program-unavailable');
    await note.filter({ hasText: why }).waitFor();
    assert.equal(await button.isDisabled(), true, `${sizeName(viewport)}: Sanitize a program… is off`);
    assert.match((await button.getAttribute('title')) ?? '', why);
    assert.equal(await button.getAttribute('aria-describedby'), 'sanitize-program-unavailable');
    assert.doesNotMatch(await note.innerText(), /\/usr\//, 'the reason, not a wall of searched paths');
    await assertInViewport(page, note, `${sizeName(viewport)}: why Sanitize a program… is off`);
    // Opening a report the tool saved elsewhere still works, and the note says so.
    assert.equal(await page.getByTestId('open-sanitizer-report').isEnabled(), true);
    assert.match(await note.innerText(), /Open sanitizer report… opens a report saved elsewhere\.$/);
    assert.deepEqual(await seriousViolations(page), []);

    await page.getByTestId('diagnose-tab').click();
    const passes = page.getByRole('checkbox', { name: 'Run the sanitizer passes after a clean exit' });
    await passes.waitFor();
    assert.equal(await passes.isDisabled(), true, `${sizeName(viewport)}: the sanitizer passes are off`);
    assert.equal(await passes.isChecked(), false);
    assert.match(await page.getByTestId('diagnose-no-sanitizer').innerText(), why);
    assert.equal(await passes.getAttribute('aria-describedby'), 'diagnose-no-sanitizer');
    assert.deepEqual(await seriousViolations(page), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  }
});
