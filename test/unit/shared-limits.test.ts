import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { kernelFacts, withSharedDiagnostics } from '../../core/compile/compile-result';
import { parseCompilerLog } from '../../core/compile/diagnostics';
import { parsePtxasInfo } from '../../core/compile/resource-usage';
import { staticSharedArrays } from '../../core/compile/shared-arrays';
import { compileFailureDetail, specificsBeyondDiagnostics } from '../../core/runner/compile-failure';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { sharedLimits, sharedLimitsClause, STATIC_SHARED_LIMIT } from '../../core/validate/shared-limits';
import { validateLaunch } from '../../core/validate/validate-launch';
import { ROOT } from '../helpers/cli';

// Issue 26, item 11: the compile said static __shared__ is limited to 48 KiB while the launch panel said 227 KiB for
// the same kernel. Both are true of different things; both places now say which applies to what, from one function.
const fixture = (name: string) => readFileSync(join(ROOT, 'test/fixtures/logs', name), 'utf8');
const h100 = deviceLimits((JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8')) as DeviceProfile).device);
const source = fixture('bigshared.cu');

test('the limits: 48 KiB of static arrays everywhere; the opt-in maximum of the device, or of the architecture a compile targets', () => {
  assert.equal(STATIC_SHARED_LIMIT, 49152);
  assert.deepEqual(sharedLimits(h100), { staticPerBlock: 49152, optInPerBlock: 232448, where: 'NVIDIA H100 80GB HBM3' });
  // The architecture's table agrees with the device's own attribute (both profiles are sm_90).
  assert.equal(sharedLimits({ arch: 'sm_90' }).optInPerBlock, h100.sharedPerBlockOptin);
  assert.equal(sharedLimits({ arch: 'sm_90a' }).optInPerBlock, 232448);
  assert.equal(sharedLimits({ arch: 'compute_80' }).optInPerBlock, 166912);
  assert.equal(sharedLimits({ arch: 'sm_86' }).optInPerBlock, 101376);
  assert.deepEqual(sharedLimits({ arch: 'sm_1' }), { staticPerBlock: 49152, optInPerBlock: null, where: null });
  assert.equal(
    sharedLimitsClause(sharedLimits(h100)),
    'static __shared__ arrays are limited to 48 KiB per block; only dynamic shared memory (extern __shared__) goes past that, up to 227 KiB per block in all on NVIDIA H100 80GB HBM3 once cudaFuncAttributeMaxDynamicSharedMemorySize is raised',
  );
  assert.match(sharedLimitsClause(sharedLimits({ arch: null })), /limited to 48 KiB per block; .* up to the device's opt-in maximum per block in all once/);
});

test('the compile and the launch panel say the same limits, with the same numbers, for the same kernel', () => {
  const facts = kernelFacts(source, parsePtxasInfo(fixture('nvrtc-bigshared.log')), ['_Z1kPf']);
  const [compiled] = withSharedDiagnostics([], facts, 'bigshared.cu', 'sm_90');
  const kernel = kernelLimitsFromFacts(facts[0]!, h100, source)!;
  const finding = validateLaunch(h100, kernel, { grid: [1, 1, 1], block: [256, 1, 1], sharedBytes: 0 }).findings.find(
    (f) => f.rule === 'static-shared-too-large',
  )!;
  const clause = (where: string) => sharedLimitsClause({ ...sharedLimits(h100), where });
  assert.ok(compiled!.message.includes(clause('sm_90')), compiled!.message);
  assert.ok(finding.message.includes(clause('NVIDIA H100 80GB HBM3')), finding.message);
  for (const said of [compiled!.message, finding.message]) {
    assert.match(said, /390\.63 KiB \(400,000 bytes\)/);
    assert.deepEqual(said.match(/\d+ KiB per block/g), ['48 KiB per block', '227 KiB per block']);
  }
  assert.match(compiled!.message, /390\.63 KiB is more than even that: tile the data/);
  assert.match(finding.message, /more than the 227 KiB \(232,448 bytes\) this device allows per block in all/);
  assert.match(finding.message, /__shared__ float s\[100000\] \(390\.63 KiB\) at line 1/);
  assert.equal(staticSharedArrays(source, 'k').length, 1);
});

test('nvcc: ptxas’ own refusal (in hex, without a line) gives way to the workbench’s, once, on the kernel’s line, quoting it', () => {
  const log = fixture('nvcc-bigshared.log');
  const fromLog = parseCompilerLog(log);
  assert.equal(fromLog.length, 1);
  const facts = kernelFacts(source, parsePtxasInfo(log), ['_Z1kPf']);
  const diagnostics = withSharedDiagnostics(fromLog, facts, 'bigshared.cu', 'sm_90');
  assert.equal(diagnostics.length, 1);
  const [d] = diagnostics;
  assert.deepEqual([d!.file, d!.line, d!.severity, d!.code], ['bigshared.cu', 1, 'error', 'static-shared']);
  assert.match(
    d!.message,
    /^k uses 390\.63 KiB \(400,000 bytes\) of static shared memory, so it can never launch: static __shared__ arrays are limited to 48 KiB/,
  );
  assert.match(d!.message, /\(ptxas: Entry function '_Z1kPf' uses too much shared data \(0x61a80 bytes, 0xc000 max\)\)$/);
  // NVRTC says nothing itself: the same message, without the quote.
  const nvrtc = withSharedDiagnostics([], kernelFacts(source, parsePtxasInfo(fixture('nvrtc-bigshared.log')), ['_Z1kPf']), 'bigshared.cu', 'sm_90');
  assert.equal(nvrtc[0]!.message, d!.message.replace(/ \(ptxas: .*\)$/, ''));
  // The result's detail says the error once: ptxas' line is not repeated beneath the workbench's.
  const detail = compileFailureDetail(diagnostics, log).split('\n');
  assert.equal(detail.filter((l) => /too much shared data/.test(l)).length, 1);
  assert.match(detail[0]!, /^bigshared\.cu:1:\d+: error: k uses 390\.63 KiB/);
  assert.ok(detail.some((l) => /Used 10 registers/.test(l)));
});

test('a recorded compile failure: the lines beside "The compiler said" leave out the error it already shows', () => {
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/static-shared-too-large.json'), 'utf8')) as RunOutcome;
  const diagnostics = outcome.compile.flatMap((c) => c.diagnostics);
  const rest = specificsBeyondDiagnostics(outcome.diagnosis.specifics, diagnostics);
  assert.equal(rest.length, outcome.diagnosis.specifics.length - 1);
  assert.ok(rest.every((l) => !/static shared memory/.test(l)));
  assert.ok(rest.some((l) => /Used 22 registers/.test(l)));
  assert.deepEqual(specificsBeyondDiagnostics(['something else'], diagnostics), ['something else']);
});
