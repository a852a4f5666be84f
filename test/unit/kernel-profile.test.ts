import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { doctorChecks } from '../../core/discovery';
import { counterAccess, parseProfilingAdminOnly } from '../../core/kernel-profile/counter-permission';
import { ncuArguments, ncuProgramArguments, ncuSourcePageArguments } from '../../core/kernel-profile/ncu-args';
import { inBaseUnit, ncuNumber, parseMetricRows, parseRawPage, parseSourcePage } from '../../core/kernel-profile/ncu-csv';
import { classifyNcuFailure, noCountersMessage } from '../../core/kernel-profile/no-counters';
import { parseProfile, programProfileSchema, type Profile } from '../../core/kernel-profile/profile';
import { buildCounters, mainSourceFile, parseDims, REQUIRED_METRICS, sameSourceFile } from '../../core/kernel-profile/profile-build';
import { compareProfiles } from '../../core/kernel-profile/profile-compare';
import { effectiveBandwidth, profileFindings } from '../../core/kernel-profile/profile-findings';
import { renderProfile, renderProgramProfile } from '../../main/cli/render-profile';
import { ROOT } from '../helpers/cli';

/** Nsight Compute 2025.3.1 on an H100, recorded by scripts/gpu-record-ncu.sh (samples/uncoalesced-access, vector-add). */
const DIR = join(ROOT, 'test/fixtures/ncu');
const text = (name: string) => readFileSync(join(DIR, 'h100', name), 'utf8');
const saved = (name: string): Profile => {
  const parsed = parseProfile(JSON.parse(readFileSync(join(DIR, name), 'utf8')));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return parsed.profile;
};
const perRequest = (a: { sectors: number; requests: number }) => a.sectors / a.requests;

test("ncu's numbers and units: thousands separators, scaled units to base units", () => {
  assert.equal(ncuNumber('131,072'), 131072);
  assert.equal(ncuNumber('524288.000000'), 524288);
  assert.equal(ncuNumber('n/a'), null);
  assert.equal(ncuNumber('-'), null);
  assert.equal(inBaseUnit(18.241536, 'Mbyte'), 18_241_536);
  assert.equal(inBaseUnit(78.368, 'us'), 78_368);
  assert.equal(inBaseUnit(274.930176, 'Gbyte/s'), 274_930_176_000);
  assert.equal(inBaseUnit(7, ''), 7);
});

test('the raw page: one row per kernel, every metric in base units', () => {
  const [kernel, ...more] = parseRawPage(text('full-broken-raw.csv'));
  assert.equal(more.length, 0);
  assert.equal(kernel!.kernelName, 'transpose(const float *, float *, int, int)');
  assert.equal(kernel!.metrics.get('dram__bytes_read.sum'), 18_241_536);
  assert.equal(kernel!.metrics.get('gpu__time_duration.sum'), 78_368);
  assert.equal(kernel!.metrics.get('l1tex__t_requests_pipe_lsu_mem_global_op_st.sum'), 131_072);
  assert.throws(() => parseRawPage('"a","b"\n"1","2"\n'), /not the raw page/);
});

test('the source page: each line its samples and stalls, its global loads and stores apart, with the ideal', () => {
  const [page] = parseSourcePage(text('full-broken-source-cudasass.csv'));
  assert.equal(page!.file, '/work/main/samples/uncoalesced-access/broken.cu');
  const line7 = page!.lines.find((l) => l.line === 7)!;
  assert.equal(perRequest(line7.loads!), 4);
  assert.equal(perRequest(line7.stores!), 32);
  assert.equal(line7.stores!.idealSectors / line7.stores!.requests, 4);
  assert.equal(line7.stores!.accessBits, 32);
  assert.equal(line7.stalls.long_sb, 2254);
  assert.equal(page!.lines.find((l) => l.line === 8)!.stalls.drain, 4287);
  assert.throws(() => parseSourcePage('"Line No","Source"\n"x7","int a;"\n'), /line number/);
  // Printed into ncu's log while it profiles, the page has ncu's own messages around it.
  const logged = `==PROF== Connected to process 12 (/usr/bin/node)\n${text('full-broken-source-cudasass.csv')}==PROF== Disconnected from process 12\n`;
  assert.deepEqual(parseSourcePage(logged), parseSourcePage(text('full-broken-source-cudasass.csv')));
});

test('kernel-wide sectors per request equal bare ncu metrics for the same launch (loads 4, stores 32; tiled: 4 and 4)', () => {
  for (const [variant, stores] of [
    ['broken', 32],
    ['fixed', 4],
  ] as const) {
    const counters = buildCounters(
      parseRawPage(text(`full-${variant}-raw.csv`))[0]!,
      parseSourcePage(text(`full-${variant}-source-cudasass.csv`)),
      `${variant}.cu`,
    );
    const bare = parseMetricRows(text(`bare-${variant}.csv`))[0]!.metrics;
    const bareLoads = bare.get('l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum')! / bare.get('l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum')!;
    const bareStores = bare.get('l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum')! / bare.get('l1tex__t_requests_pipe_lsu_mem_global_op_st.sum')!;
    assert.equal(perRequest(counters.loads).toFixed(1), bareLoads.toFixed(1));
    assert.equal(perRequest(counters.stores).toFixed(1), bareStores.toFixed(1));
    assert.equal(perRequest(counters.stores), stores);
    assert.equal(counters.occupancy.theoreticalPct, 100);
  }
});

test("the runner's own report (NVRTC names the file by its base name) finds the kernel's lines", () => {
  assert.ok(sameSourceFile('/work/main/broken.cu', 'broken.cu'));
  assert.ok(!sameSourceFile('/work/main/fixed.cu', 'broken.cu'));
  const counters = buildCounters(parseRawPage(text('runner-broken-raw.csv'))[0]!, parseSourcePage(text('runner-broken-source.csv')), 'broken.cu');
  assert.equal(counters.sourceFile, '/work/main/broken.cu');
  assert.deepEqual(
    counters.lines.map((l) => l.line),
    [4, 5, 6, 7, 8],
  );
  assert.equal(perRequest(counters.lines.find((l) => l.line === 7)!.stores!), 32);
});

test('findings: the uncoalesced line named with its figures and the fix; the tiled transpose has none', () => {
  const broken = profileFindings(saved('profile-broken.json'));
  const problems = broken.filter((f) => f.severity === 'problem');
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.line, 7);
  assert.match(problems[0]!.headline, /each store request moves 32\.0 sectors where 4\.0 would do for 4-byte accesses \(8\.0× the ideal\)/);
  assert.match(problems[0]!.detail, /shared memory/);
  assert.match(broken.find((f) => f.id === 'bound')!.headline, /^Memory-bound: .*L2 the busiest unit/);
  assert.match(broken.find((f) => f.id === 'stalls')!.headline, /drain \(line 8\)/);
  const fixed = profileFindings(saved('profile-fixed.json'));
  assert.deepEqual(
    fixed.filter((f) => f.severity === 'problem'),
    [],
  );
  // The tiled transpose sits at the line: memory 60.4% of peak on this recording, latency-bound on the one before.
  assert.match(fixed.find((f) => f.id === 'bound')!.headline, /^(Memory|Latency)-bound/);
});

test('thresholds: an occupancy floor turns the occupancy note into a problem; a looser coalescing ratio lets 8× pass', () => {
  const profile = saved('profile-broken.json');
  const strict = profileFindings(profile, { uncoalescedRatio: 2, minAchievedOccupancyPct: 80 });
  assert.equal(strict.find((f) => f.id === 'occupancy')!.severity, 'problem');
  const loose = profileFindings(profile, { uncoalescedRatio: 10, minAchievedOccupancyPct: 0 });
  assert.equal(loose.filter((f) => f.severity === 'problem').length, 0);
});

test('without counters: why and how to allow them, and the effective bandwidth against the peak', () => {
  const profile = saved('profile-no-counters.json');
  const findings = profileFindings(profile);
  const why = findings.find((f) => f.id === 'no-counters')!;
  assert.match(why.headline, /ERR_NVGPUCTRPERM/);
  assert.match(why.detail, /NVreg_RestrictProfilingToAdminUsers=0/);
  assert.match(why.detail, /SYS_ADMIN/);
  const bw = effectiveBandwidth(profile)!;
  assert.ok(Math.abs(bw.bytesPerSecond - 33_554_432 / 0.079328e-3) < 1);
  assert.match(findings.find((f) => f.id === 'bandwidth')!.headline, /of the device's 3352\.3 GB\/s/);
  assert.match(noCountersMessage('no-ncu', '', 'k').headline, /ncu\) was not found/);
});

test("ncu's failures told apart: no permission, no kernel profiled, an error; a clean run is none", () => {
  const denied =
    '==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.\n';
  assert.equal(classifyNcuFailure(denied, 0)!.reason, 'no-permission');
  assert.equal(classifyNcuFailure('==WARNING== No kernels were profiled.\n', 0)!.reason, 'not-profiled');
  assert.equal(classifyNcuFailure('==ERROR== Failed to connect\n', 1)!.reason, 'ncu-failed');
  assert.equal(classifyNcuFailure(text('runner-broken.log'), 0), null);
});

test('compare: each figure before and after, the store sectors from 32 to 4', () => {
  const figures = compareProfiles(saved('profile-broken.json'), saved('profile-fixed.json'));
  const stores = figures.find((f) => f.name === 'Sectors per store request')!;
  assert.equal(stores.before, 32);
  assert.equal(stores.after, 4);
  assert.equal(stores.change, -0.875);
  assert.equal(figures.find((f) => f.name === 'Memory throughput')!.better, null);
});

test("ncu's arguments: the one launch by its function name (regex-escaped), after the launches before it", () => {
  const args = ncuArguments('my.kernel', 12, '/tmp/p/profile', '/tmp/p/source.csv');
  assert.deepEqual(args.slice(0, 8), ['--kernel-name-base', 'function', '--kernel-name', 'regex:^my\\.kernel$', '--launch-skip', '12', '--launch-count', '1']);
  assert.ok(args.includes('SourceCounters'));
  assert.deepEqual(args.slice(args.indexOf('--export'), args.indexOf('--export') + 2), ['--export', '/tmp/p/profile']);
  assert.deepEqual(args.slice(-7), ['--csv', '--page', 'source', '--print-source', 'cuda,sass', '--log-file', '/tmp/p/source.csv']);
  // Every metric the profile reads is asked for by name, whatever the sections hold on this GPU.
  const metrics = args[args.indexOf('--metrics') + 1]!.split(',');
  for (const name of REQUIRED_METRICS) assert.ok(metrics.includes(name), name);
});

test('a saved profile is checked: a wrong kind or an out-of-range figure is refused in words', () => {
  assert.match((parseProfile({ kind: 'other' }) as { error: string }).error, /kind/);
  const p = saved('profile-broken.json');
  const bad = { ...p, counters: { ...p.counters!, durationNs: -1 } };
  assert.ok(!parseProfile(bad).ok);
});

test("the driver's word on counters: RmProfilingAdminOnly read, denied only for a user who is not root", () => {
  const params = 'ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n';
  assert.equal(parseProfilingAdminOnly(params), true);
  assert.equal(parseProfilingAdminOnly(params.replace('AdminOnly: 1', 'AdminOnly: 0')), false);
  assert.equal(parseProfilingAdminOnly('EnableMSI: 1\n'), null);
  // The H100 the suite runs on lets every user read them (its /proc/driver/nvidia/params, recorded).
  assert.equal(parseProfilingAdminOnly(text('nvidia-params.txt')), false);
  const source = '/proc/driver/nvidia/params';
  assert.equal(counterAccess({ restrictedToAdmins: true, administrator: false, source }), 'denied');
  assert.equal(counterAccess({ restrictedToAdmins: true, administrator: true, source }), 'allowed');
  assert.equal(counterAccess({ restrictedToAdmins: false, administrator: false, source }), 'allowed');
  assert.equal(counterAccess({ restrictedToAdmins: null, administrator: false, source }), 'unknown');
  assert.equal(counterAccess(null), 'unknown');
});

test('the doctor: ncu found or how to get it, and the counters restricted with how to allow them', () => {
  const base = { addon: { loaded: false, path: 'x', error: 'no' }, platform: 'linux-x64' } as const;
  const library = { loaded: false, path: null, source: null, attempts: [], missingRequired: [], missingOptional: [] };
  const tool = (found: boolean) => ({
    found,
    path: found ? '/usr/local/cuda/bin/ncu' : null,
    version: found ? '2025.3.1.0' : null,
    searched: ['/usr/local/cuda/bin/ncu'],
  });
  const checks = (ncuFound: boolean, restricted: boolean | null, administrator = false) =>
    doctorChecks(
      {
        ...base,
        cuda: library,
        nvrtc: library,
        nvml: library,
        nvcc: tool(false),
        ncu: tool(ncuFound),
        profilingCounters: { restrictedToAdmins: restricted, administrator, source: '/proc/driver/nvidia/params' },
      },
      null,
      null,
    );
  const byId = (list: ReturnType<typeof checks>, id: string) => list.find((c) => c.id === id)!;
  assert.equal(byId(checks(true, false), 'ncu').status, 'ok');
  assert.match(byId(checks(false, false), 'ncu').remedy!, /GPU_WORKBENCH_NCU/);
  const denied = byId(checks(true, true), 'profiling-counters');
  assert.equal(denied.status, 'warn');
  assert.match(denied.detail, /ERR_NVGPUCTRPERM/);
  assert.match(denied.remedy!, /NVreg_RestrictProfilingToAdminUsers=0/);
  assert.equal(byId(checks(true, true, true), 'profiling-counters').status, 'ok');
  assert.equal(byId(checks(true, null), 'profiling-counters').status, 'not-run');
});

test("a program's arguments: every process followed, the launches asked, the program after --; one launch's source page", () => {
  const args = ncuProgramArguments({ kernel: 'gemm|conv', skip: 2, count: 3, reportBase: '/tmp/p/profile', command: ['python3', 'train.py', '--epochs', '1'] });
  assert.deepEqual(args.slice(0, 4), ['--target-processes', 'all', '--kernel-name-base', 'function']);
  assert.deepEqual(args.slice(4, 6), ['--kernel-name', 'regex:gemm|conv']);
  assert.deepEqual(args.slice(6, 10), ['--launch-skip', '2', '--launch-count', '3']);
  assert.deepEqual(args.slice(args.indexOf('--')), ['--', 'python3', 'train.py', '--epochs', '1']);
  assert.ok(!ncuProgramArguments({ kernel: null, skip: 0, count: 5, reportBase: 'r', command: ['./a'] }).includes('--kernel-name'));
  assert.deepEqual(ncuSourcePageArguments('/tmp/p/profile.ncu-rep', 4).slice(0, 6), [
    '--import',
    '/tmp/p/profile.ncu-rep',
    '--launch-skip',
    '4',
    '--launch-count',
    '1',
  ]);
  assert.deepEqual(parseDims('(64, 256, 1)'), [64, 256, 1]);
  assert.equal(parseDims('64x256'), null);
  assert.equal(mainSourceFile(parseSourcePage(text('full-broken-source-cudasass.csv'))), '/work/main/samples/uncoalesced-access/broken.cu');
  assert.equal(mainSourceFile([]), null);
});

test("a program's profile recorded on an H200: checked by its schema, its uncoalesced line named, PyTorch's vector stores not blamed", () => {
  const program = (name: string) => {
    const parsed = programProfileSchema.safeParse(JSON.parse(readFileSync(join(DIR, name), 'utf8')));
    assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
    return parsed.data;
  };
  const transpose = program('program-transpose-h200.json');
  assert.equal(transpose.kernels.length, 1);
  const text = renderProgramProfile(transpose);
  assert.match(text, /exited with code 0; 1 kernel launch profiled/);
  assert.match(text, /broken\.cu:7 .*stores 32\.0 \(ideal 4\.0\)/);
  assert.ok(profileFindings(transpose.kernels[0]!).some((f) => f.severity === 'problem' && /^Line 7: each store request moves 32\.0 sectors/.test(f.headline)));
  const torch = program('program-pytorch-h200.json');
  assert.deepEqual(
    torch.kernels.map((k) => k.kernel.entry.match(/<4, (\w+)/)?.[1]),
    ['FillFunctor', 'AUnaryFunctor'],
  );
  for (const k of torch.kernels) {
    assert.equal(k.kernel.sourceFile, '', 'PyTorch ships no -lineinfo: no lines');
    assert.ok(!profileFindings(k).some((f) => f.severity === 'problem' && /coalesc/i.test(f.headline)), renderProfile(k));
  }
});
