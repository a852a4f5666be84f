import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { bundleDoctor, bundleView, doctorMachineLabel } from '../../core/bundle/bundle-view';
import { bundleManifestSchema } from '../../core/bundle/manifest';
import { NO_REDACTION } from '../../core/bundle/redact';
import { doctorMachine } from '../../main/bundle/bundle-service';
import { buildBundleEntries, NO_PLAN_NOTE } from '../../main/bundle/write-bundle';
import { ROOT } from '../helpers/cli';

// Issue 26, item 6: a bundle says whose doctor it holds and when the run was recorded, and is made without its plan.
const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/device-assert.json'), 'utf8'));

test('whose doctor: the run’s machine for a run made here or facts recorded there, else the exporting machine’s, said so', () => {
  assert.equal(doctorMachine({ recordedHere: true }), 'recording');
  assert.equal(doctorMachine({}), 'exporting');
  assert.equal(doctorMachine({ recordedHere: false }), 'exporting');
  assert.equal(bundleDoctor({ checks: [], machine: 'exporting' }).machine, 'exporting');
  assert.equal(bundleDoctor({ checks: [], machine: 'recording' }).machine, 'recording');
  assert.equal(bundleDoctor({ checks: [] }).machine, 'unknown', 'an older bundle does not say');
  assert.equal(bundleDoctor({ checks: [], machine: 'somewhere' }).machine, 'unknown');
  assert.match(doctorMachineLabel('exporting'), /doctor of the machine that exported this bundle, not the one that ran it/);
  assert.match(doctorMachineLabel('recording'), /recorded on/);
});

test('a bundle of a recorded result without its plan: what there is, the plan’s absence said; recorded at the result’s own time', () => {
  const built = buildBundleEntries({
    plan: null,
    outcome,
    origin: 'the result file device-assert.json',
    workbenchVersion: '0',
    createdAt: '2030-01-01T00:00:00.000Z',
    includeSources: true,
    redactor: NO_REDACTION,
    env: {},
    doctor: { checks: [], machine: 'exporting' },
  });
  const names = [...built.entries.keys()];
  assert.ok(names.includes('result.json') && names.includes('doctor.json') && names.includes('environment.json'));
  assert.ok(!names.some((n) => n === 'plan.json' || n.startsWith('sources/') || n.startsWith('repro/') || n === 'compile.json'), names.join(', '));
  assert.ok(built.notes.includes(NO_PLAN_NOTE));
  assert.equal(built.manifest.contents.plan, null);

  const manifest = bundleManifestSchema.parse(JSON.parse(new TextDecoder().decode(built.entries.get('manifest.json'))));
  const view = bundleView('b.zip', manifest, built.entries);
  assert.equal(view.recorded.device, 'NVIDIA H100 80GB HBM3');
  assert.equal(view.recorded.at, new Date(outcome.result.startedAtMs).toISOString(), 'the run’s time, not the export’s');
  assert.equal(view.recorded.exportedAt, '2030-01-01T00:00:00.000Z');
  assert.equal(view.doctor.machine, 'exporting');
  assert.equal(view.plan, null);
  assert.ok(view.outcome);
});
