import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ANY_GPU_MAX_BYTES, oomAdvice, type OomFacts } from '../../core/memory/oom-advice';
import { A, buildSnapshotModel, type SnapshotModel } from '../../core/memory/snapshot-model';
import { timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const GiB = 1024 ** 3;
const TiB = 1024 ** 4;
/** An H100 80GB HBM3's total memory as the driver reports it (test/fixtures/diagnoses/pytorch-oom-too-large.json). */
const H100_TOTAL = 85_018_877_624;

const facts = (f: Partial<OomFacts>): OomFacts => ({
  requestedBytes: GiB,
  freeBytes: NaN,
  totalBytes: NaN,
  allocatedBytes: NaN,
  reservedBytes: NaN,
  where: null,
  allocator: 'pytorch',
  ...f,
});

test('a request larger than the whole device: says so with the figures, and that no setting helps', () => {
  const a = oomAdvice(
    facts({
      requestedBytes: 10 * TiB,
      freeBytes: 78.4 * GiB,
      totalBytes: H100_TOTAL,
      allocatedBytes: 256 * 2 ** 20,
      reservedBytes: 256 * 2 ** 20,
      where: 'train.py:7',
    }),
  );
  assert.equal(a.rule, 'larger-than-device');
  assert.equal(a.headline, 'Asked for 10 TiB on a GPU of 79.18 GiB at train.py:7: no setting can make this fit — it is 129× the whole device.');
  assert.match(a.steps[0]!, /^The size is wrong, not the memory: print the shape and dtype of the tensor made at train\.py:7/);
  assert.ok(!a.steps.join(' ').includes('expandable_segments'), 'no allocator setting is offered');
  // a plan's buffer: its count and type, not a tensor's shape
  const plan = oomAdvice(
    facts({
      requestedBytes: 256 * GiB,
      freeBytes: 78.2 * GiB,
      totalBytes: H100_TOTAL,
      allocatedBytes: 0,
      reservedBytes: 0,
      allocator: 'cuda',
      where: 'step 1 (alloc x)',
    }),
  );
  assert.equal(plan.rule, 'larger-than-device');
  assert.match(
    plan.headline,
    /^Asked for 256 GiB on a GPU of 79\.18 GiB at step 1 \(alloc x\): no setting can make this fit — it is 3\.23× the whole device\.$/,
  );
  assert.match(plan.steps[0]!, /buffer's element count and type/);
});

test('the device’s size unknown (a snapshot does not record it): past what any GPU has, it still says no setting helps', () => {
  const a = oomAdvice(
    facts({ requestedBytes: 10 * TiB, freeBytes: 78.41 * GiB, allocatedBytes: 256 * 2 ** 20, reservedBytes: 256 * 2 ** 20, where: '<stdin>:7' }),
  );
  assert.equal(a.rule, 'larger-than-any-gpu');
  assert.match(a.headline, /^Asked for 10 TiB at <stdin>:7 on a GPU with 78\.41 GiB free \(131× what was free\): no setting can make this fit/);
  // just under the bound, it is a matter of the arithmetic below
  assert.notEqual(
    oomAdvice(facts({ requestedBytes: ANY_GPU_MAX_BYTES, freeBytes: 10 * GiB, allocatedBytes: 0, reservedBytes: 0 })).rule,
    'larger-than-any-gpu',
  );
});

test('the cache could have served it: fragmentation, and the allocator setting that helps', () => {
  const a = oomAdvice(facts({ requestedBytes: 6 * GiB, freeBytes: 2 * GiB, totalBytes: H100_TOTAL, allocatedBytes: 60 * GiB, reservedBytes: 70 * GiB }));
  assert.equal(a.rule, 'cache-fragmented');
  assert.match(a.headline, /2 GiB free, while PyTorch's cache held 10 GiB reserved but unused/);
  assert.match(a.steps[0]!, /expandable_segments:True/);
});

test('freeing its own tensors makes room: how much must go; else other processes hold the rest', () => {
  // pytorch-oom-too-large recorded on an H100: 63.3 GiB asked, 15.3 GiB free, 63.3 GiB its own
  const own = oomAdvice(
    facts({
      requestedBytes: 63.34 * GiB,
      freeBytes: 15.32 * GiB,
      totalBytes: H100_TOTAL,
      allocatedBytes: 63.34 * GiB,
      reservedBytes: 63.34 * GiB,
      where: 'join.py:20',
    }),
  );
  assert.equal(own.rule, 'own-memory');
  assert.match(
    own.headline,
    /^Asked for 63\.34 GiB at join\.py:20 with 15\.32 GiB free; your live tensors held 63\.34 GiB: it fits once 48\.02 GiB of them is freed\.$/,
  );
  assert.match(own.steps.join(' '), /smaller batches/);
  // another process holds most of the device
  const others = oomAdvice(facts({ requestedBytes: 20 * GiB, freeBytes: 5 * GiB, totalBytes: H100_TOTAL, allocatedBytes: 1 * GiB, reservedBytes: 1 * GiB }));
  assert.equal(others.rule, 'other-processes');
  assert.match(others.headline, /this process held 1 GiB, and 73\.18 GiB was held by other processes/);
  // free memory not recorded: says so rather than guessing
  assert.equal(oomAdvice(facts({ requestedBytes: GiB })).rule, 'not-recorded');
});

test('oom.pickle recorded on an H100, 10 TiB asked: the marker’s advice is the arithmetic, not the generic list', () => {
  const bytes = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle')));
  const t = timelineFromSnapshot(buildSnapshotModel(unpickle(bytes)), 0);
  const oom = t.markers.find((m) => m.kind === 'oom')!;
  assert.match(
    oom.detail,
    /Asked for 10 TiB at <stdin>:7 on a GPU with 78\.41 GiB free \(131× what was free\): no setting can make this fit — no GPU has that much memory/,
  );
  assert.match(oom.detail, /What to do:\n {2}The size is wrong, not the memory: print the shape and dtype of the tensor made at <stdin>:7/);
  assert.doesNotMatch(oom.detail, /expandable_segments/);
});

test('an OOM made at the model level (a 64 GiB request with 70 GiB cached and unused): fragmentation, from the same marker code', () => {
  const bytes = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle')));
  const model: SnapshotModel = buildSnapshotModel(unpickle(bytes));
  const trace = model.devices[0]!;
  const at = [...trace.action].indexOf(A.oom);
  assert.ok(at > 0);
  // what the allocator held just before the OOM: 10 GiB allocated of 80 GiB reserved; 2 GiB free; 64 GiB asked
  trace.allocated[at - 1] = 10 * GiB;
  trace.reserved[at - 1] = 80 * GiB;
  trace.deviceFree.set(at, 2 * GiB);
  trace.size[at] = 64 * GiB;
  const oom = timelineFromSnapshot(model, 0).markers.find((m) => m.kind === 'oom')!;
  assert.match(oom.detail, /Asked for 64 GiB at <stdin>:7 with 2 GiB free, while PyTorch's cache held 70 GiB reserved but unused/);
  assert.match(oom.detail, /PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True/);
});
