import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';

import { Command, CommanderError, InvalidArgumentError } from 'commander';

import { ATTRIBUTES } from '../../core/cuda/device-attributes';
import { parseDim3 } from '../../core/dims';
import { formatBytes, plural } from '../../core/format';
import { CompileCache } from '../compile/compile-cache';
import { parseArg, planFromArgs, type ParsedArg } from '../../core/plan/arg-syntax';
import { compileOptionsSchema } from '../../core/compile/compile-options';
import { describeIssues } from '../../core/plan/plan-schema';
import { CompileService, CompileStoppedError } from '../compile/compile-service';
import { forkLauncher } from '../process/launcher';
import { RunnerPool } from '../runner/runner-pool';
import { completeKernelFacts } from '../services/kernel-facts-service';
import { loadProfileFile, saveProfile } from '../services/profile-service';
import { makeProfile, deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import type { DeviceInfo } from '../../core/devices';
import { validateLaunch } from '../../core/validate/validate-launch';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { smArch } from '../../core/devices';
import { listDevices } from '../services/device-service';
import { discover } from '../services/discovery-service';
import { createWorkbench } from '../workbench';
import { EXIT } from './exit-codes';
import { renderCompile } from './render-compile';
import { renderValidation } from './render-validation';
import { renderExplanation } from './render-explanation';
import { explainPaste } from '../../core/explain/explain-paste';
import { renderRun } from './render-run';
import { PlanFileError, readPlanFile, readTextFile } from '../services/plan-files';
import { listGallery, loadSample } from '../services/sample-service';
import type { ExpectedDiagnosis } from '../../core/samples/sample-manifest';
import { errorCode } from '../process/supervised-process';
import { withServeOptions, type ServeCommandOptions } from '../serve/serve-options';
import { registerBundleExport } from './bundle-export-command';
import { isSanitizerTool, parseEnvAssignment } from '../../core/sanitizer/sanitizer-args';
import { SANITIZER_TOOLS } from '../../core/sanitizer/findings';
import { SanitizerUnavailableError, sanitizeProgram } from '../tools/sanitize-program';
import { sanitizePlan } from '../services/sanitize-plan-service';
import { renderSanitize } from './render-sanitize';
import { registerMemoryCommand } from './memory-command';
import { registerDoctorCommand } from './doctor-command';
import { registerMonitorCommand } from './monitor-command';
import { registerDiagnoseCommand } from './diagnose-command';
import { profileCommand, type ProfileCommandOptions } from './profile-command';
import { validatePlan } from './validate-plan-command';
import { isPlanRefused } from '../services/plan-check-service';

class UsageError extends Error {}

/** `run --trace` samples device memory this often while the run goes. */
const TRACE_SAMPLE_INTERVAL_MS = 10;

const print = (json: boolean, value: unknown, human: () => string) => console.log(json ? JSON.stringify(value, null, 2) : human());

function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}`);
    return n;
  };
}

export function buildProgram(): Command {
  const program = new Command('gpu-workbench')
    .description('Edit, compile, validate, run and diagnose CUDA kernels.')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('devices')
    .description('List CUDA devices with every device attribute by name (no CUDA context is created).')
    .option('--json', 'machine-readable output')
    .option('--attributes', 'print every attribute, not just a summary')
    .option('--save-profile [file]', 'save the device as a profile, to validate launches on machines without it (default: ~/.config/gpu-workbench/profiles/)')
    .option('--device <n>', 'which device to save with --save-profile', intOption('--device', 0, 1023), 0)
    .action(async (opts: { json?: boolean; attributes?: boolean; saveProfile?: string | boolean; device: number }) => {
      const result = await listDevices();
      if (!result.ok) {
        const report = await discover();
        print(!!opts.json, { ok: false, problem: result.problem, discovery: report }, () =>
          [
            `✗ ${result.problem.title}`,
            `  ${result.problem.detail}`,
            `  What to do: ${result.problem.remedy}`,
            ...(result.problem.searched ?? []).map((s) => `    searched ${s}`),
          ].join('\n'),
        );
        process.exitCode = EXIT.unavailable;
        return;
      }
      if (opts.saveProfile) {
        const device = result.devices.find((d) => d.ordinal === opts.device);
        if (!device) throw new UsageError(`There is no device ${opts.device}: this machine has ${result.devices.length}.`);
        const saved = await saveProfile(
          makeProfile(device, result.driverVersion, new Date().toISOString()),
          typeof opts.saveProfile === 'string' ? resolve(opts.saveProfile) : null,
        );
        console.error(`Saved the profile of ${device.name} to ${saved}`);
      }
      print(!!opts.json, result, () => {
        const lines = [`Driver ${result.driverVersion ?? '(version unknown: NVML unavailable)'} — ${plural(result.devices.length, 'device')}`];
        for (const d of result.devices) {
          const mem = result.memory?.find((m) => m.uuid === d.uuid);
          lines.push(
            `Device ${d.ordinal}: ${d.name}  compute ${d.computeCapability.major}.${d.computeCapability.minor}  ${formatBytes(d.totalMemBytes)}  ${d.attributes['MULTIPROCESSOR_COUNT']} SMs`,
          );
          lines.push(`  UUID ${d.uuid}  PCI ${d.pciBusId}`);
          if (mem)
            lines.push(
              `  memory used ${formatBytes(mem.usedBytes)}, free ${formatBytes(mem.freeBytes)}; ${mem.processes ? `${mem.processes.length} process(es) on it` : 'processes not visible'}`,
            );
          const shown = opts.attributes
            ? ATTRIBUTES.map((a) => a.name)
            : [
                'MAX_THREADS_PER_BLOCK',
                'MAX_BLOCK_DIM_X',
                'MAX_GRID_DIM_X',
                'MAX_SHARED_MEMORY_PER_BLOCK_OPTIN',
                'MAX_REGISTERS_PER_MULTIPROCESSOR',
                'L2_CACHE_SIZE',
                'CLOCK_RATE',
              ];
          for (const name of shown) lines.push(`  ${name.padEnd(44)} ${d.attributes[name] ?? 'n/a'}`);
        }
        if (result.memoryProblem) lines.push(`(${result.memoryProblem})`);
        return lines.join('\n');
      });
    });

  registerDoctorCommand(program);

  program
    .command('compile')
    .description('Compile a .cu file and print its diagnostics and each kernel’s resources (what the editor shows).')
    .argument('<file.cu>', 'CUDA C++ source file')
    .option('--arch <sm_XX>', 'target architecture (default: the first device’s, or sm_90 without a GPU)')
    .option('-G, --debug', 'device debug information (-G)')
    .option('--maxrregcount <n>', 'cap registers per thread', intOption('--maxrregcount', 16, 255))
    .option('-D, --define <NAME[=value]>', 'a preprocessor define (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('-I, --include <dir>', 'an include path (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--use-fast-math', 'fast, less accurate math')
    .option('--std <c++NN>', 'C++ standard', 'c++17')
    .option('--backend <nvrtc|nvcc|auto>', 'which compiler', 'auto')
    .option('--ptx', 'also print the PTX')
    .option('--sass', 'also print the SASS (needs cuobjdump or nvdisasm)')
    .option('--no-cache', 'skip the compile cache')
    .option('--timeout <ms>', 'stop the compiler after this long', intOption('--timeout', 100, 3_600_000), 120_000)
    .option('--json', 'machine-readable output')
    .action(
      async (
        file: string,
        opts: {
          arch?: string;
          debug?: boolean;
          maxrregcount?: number;
          define: string[];
          include: string[];
          useFastMath?: boolean;
          std: string;
          backend: string;
          ptx?: boolean;
          sass?: boolean;
          cache: boolean;
          timeout: number;
          json?: boolean;
        },
      ) => {
        const source = await fromUserFile(() => readTextFile(file, 'Source file'));
        if (!['auto', 'nvrtc', 'nvcc'].includes(opts.backend)) throw new UsageError('--backend is nvrtc, nvcc or auto.');
        let arch = opts.arch;
        if (!arch) {
          const devices = await listDevices();
          arch = devices.ok && devices.devices[0] ? smArch(devices.devices[0]) : 'sm_90';
        }
        const options = compileOptionsSchema.safeParse({
          arch,
          debug: !!opts.debug,
          maxRegisters: opts.maxrregcount ?? null,
          defines: opts.define,
          includePaths: opts.include.map((p) => resolve(p)),
          fastMath: !!opts.useFastMath,
          std: opts.std,
        });
        if (!options.success) throw new UsageError(describeIssues(options.error));
        const compiler = new CompileService(forkLauncher, opts.cache ? new CompileCache() : null);
        try {
          const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: false });
          const result = await completeKernelFacts(
            await compiler.compile({ source, sourceName: basename(file), options: options.data, backend: opts.backend as 'auto' }, opts.timeout),
            pool,
          ).finally(() => pool.dispose());
          const { image: _image, ...shown } = result;
          const sass = opts.sass && result.image && result.image[0] === 0x7f ? await compiler.disassembleImage(result.image) : null;
          print(!!opts.json, { ...shown, sass }, () =>
            [
              renderCompile(result, basename(file)),
              ...(opts.ptx && result.ptx ? ['', result.ptx] : []),
              ...(opts.sass
                ? [
                    '',
                    sass ??
                      (result.ok
                        ? '(no SASS: neither cuobjdump nor nvdisasm was found beside nvcc, on PATH or in /usr/local/cuda/bin)'
                        : '(no SASS: the compile failed)'),
                  ]
                : []),
            ].join('\n'),
          );
          process.exitCode = result.ok ? EXIT.ok : EXIT.failed;
        } catch (error) {
          if (error instanceof CompileStoppedError) {
            console.error(`✗ ${error.reason}`);
            process.exitCode = EXIT.failed;
            return;
          }
          const code = errorCode(error);
          if (code === 'WORKBENCH_NO_COMPILER' || code === 'WORKBENCH_NVRTC_NOT_LOADED') {
            console.error(`✗ ${(error as Error).message}`);
            process.exitCode = EXIT.unavailable;
            return;
          }
          throw error;
        } finally {
          await compiler.dispose();
        }
      },
    );

  program
    .command('validate')
    .description(
      'Check a launch configuration against a device’s limits before launching: which limit, by how much, the error it would cause, and the fix; occupancy and its limiter. With --plan or --sample, the whole plan: every launch, and every buffer against the device’s memory and the host’s.',
    )
    .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME [--fixed])')
    .argument('[file.cu]', 'CUDA C++ source file')
    .option('--kernel <name>', 'with a .cu file: the __global__ function')
    .option('--plan <plan.json>', 'check a whole launch plan instead of one launch')
    .option('--sample <name>', 'check a failure-gallery sample’s plan')
    .option('--fixed', 'with --sample: its fixed variant')
    .option('--grid <X[,Y,Z]>', 'grid dimensions in blocks', '1')
    .option('--block <X[,Y,Z]>', 'block dimensions in threads', '1')
    .option('--smem <bytes>', 'dynamic shared memory per block', intOption('--smem', 0, 0xffffffff), 0)
    .option('--profile <file.json>', 'validate against a saved device profile (e.g. profiles/nvidia-h200.json)')
    .option('--device <n>', 'validate against this machine’s device', intOption('--device', 0, 1023))
    .option('--cluster <X[,Y,Z]>', 'thread block cluster dimensions (Hopper and later)')
    .option('--cooperative', 'a cooperative launch (grid.sync())')
    .option('--no-opt-in', 'do not assume the dynamic shared memory limit is raised (a host program that never calls cudaFuncSetAttribute)')
    .option('--json', 'machine-readable output')
    .action(
      async (
        file: string | undefined,
        opts: {
          kernel?: string;
          grid: string;
          block: string;
          smem: number;
          profile?: string;
          device?: number;
          cluster?: string;
          cooperative?: boolean;
          optIn: boolean;
          json?: boolean;
          plan?: string;
          sample?: string;
          fixed?: boolean;
        },
      ) => {
        if (opts.plan || opts.sample) {
          if (file || opts.kernel) throw new UsageError('Give a .cu file with --kernel, or --plan, or --sample: one of them.');
          const { plan, planPath } = await gatherPlan(undefined, { ...opts, arg: [], device: 0, warmup: 0, repeat: 1, kernel: undefined });
          const target = await launchTarget(opts);
          if (target) process.exitCode = await validatePlan(plan, planPath, target, !!opts.json);
          return;
        }
        if (!file) throw new UsageError('Give a .cu file to check a launch of (or --plan plan.json, or --sample NAME).');
        if (!opts.kernel) throw new UsageError('Name the kernel to check with --kernel NAME.');
        const kernelName = opts.kernel;
        const grid = parseDim3(opts.grid, '--grid');
        if (!grid.ok) throw new UsageError(grid.error);
        const block = parseDim3(opts.block, '--block');
        if (!block.ok) throw new UsageError(block.error);
        const cluster = opts.cluster ? parseDim3(opts.cluster, '--cluster') : null;
        if (cluster && !cluster.ok) throw new UsageError(cluster.error);
        const target = await launchTarget(opts);
        if (!target) return;
        const { profile } = target;
        const source = await fromUserFile(() => readTextFile(file, 'Source file'));
        const arch = smArch(profile.device);
        const compiler = new CompileService(forkLauncher);
        const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: false });
        try {
          const compiled = await compiler.compile({ source, sourceName: basename(file), options: compileOptionsSchema.parse({ arch }), backend: 'auto' });
          const result = opts.profile ? compiled : await completeKernelFacts(compiled, pool);
          if (!result.ok) {
            console.log(renderCompile(result, basename(file)));
            process.exitCode = EXIT.failed;
            return;
          }
          const facts = result.kernels.find((k) => k.name === kernelName);
          if (!facts)
            throw new UsageError(
              `No kernel named "${kernelName}" in ${basename(file)}. The kernels in it are: ${result.kernels.map((k) => k.name).join(', ') || 'none'}.`,
            );
          const kernel = kernelLimitsFromFacts(facts, deviceLimits(profile.device), source);
          if (!kernel) {
            console.error(
              `✗ The compiler did not report ${kernelName}'s registers and shared memory, and no GPU is here to ask. Compile with nvcc (--backend is automatic when NVRTC is absent) or run on the GPU machine.`,
            );
            process.exitCode = EXIT.unavailable;
            return;
          }
          const validation = validateLaunch(deviceLimits(profile.device), kernel, {
            grid: grid.value,
            block: block.value,
            sharedBytes: opts.smem,
            cluster: cluster?.ok ? cluster.value : null,
            cooperative: !!opts.cooperative,
            raisesDynamicSharedLimit: opts.optIn,
          });
          print(!!opts.json, { device: profile.device.name, kernel: facts.display, limits: kernel, ...validation }, () =>
            renderValidation(validation, profile.device.name, facts.display, { grid: grid.value, block: block.value, sharedBytes: opts.smem }),
          );
          process.exitCode = validation.ok ? EXIT.ok : EXIT.failed;
        } finally {
          await Promise.all([compiler.dispose(), pool.dispose()]);
        }
      },
    );

  program
    .command('explain')
    .description('Explain a pasted CUDA error: driver or runtime API, PyTorch or CuPy, or compute-sanitizer output.')
    .argument('<text>', 'the error text, or - to read it from standard input')
    .option('--json', 'machine-readable output')
    .action(async (text: string, opts: { json?: boolean }) => {
      const input = text === '-' ? readFileSync(0, 'utf8') : text;
      if (!input.trim()) throw new UsageError('Nothing to explain: give the error text, or - and pipe it in.');
      const explanation = explainPaste(input);
      print(!!opts.json, explanation, () => renderExplanation(explanation));
      process.exitCode = explanation.recognized ? EXIT.ok : EXIT.failed;
    });

  withPlanOptions(
    program
      .command('run')
      .description('Compile a kernel and run it once, with buffers and scalars given by --arg (or a plan file with --plan).')
      .argument('[file.cu]', 'CUDA C++ source file'),
  )
    .option('--timeout <ms>', 'watchdog: kill the runner if the run takes longer', intOption('--timeout', 100, 3_600_000), 30_000)
    .option('--no-determinism-check', 'do not run the launches a second time to compare the results bit for bit')
    .option('--no-validate', 'send the plan to the driver even when the validator says a launch or an allocation would fail (to see what the driver says)')
    .option(
      '--determinism-runs <n>',
      'extra runs compared bit for bit with the first (default 1, when the buffers total ≤ 256 MiB)',
      intOption('--determinism-runs', 1, 16),
    )
    .option('--trace <file>', "write the run's event log as Chrome Trace Event JSON (Perfetto, chrome://tracing)")
    .option('--json', 'machine-readable output')
    .action(
      async (
        file: string | undefined,
        opts: PlanOptions & { determinismCheck: boolean; determinismRuns?: number; timeout: number; json?: boolean; trace?: string; validate: boolean },
        command: Command,
      ) => {
        const timeoutIsDefault = command.getOptionValueSource('timeout') === 'default';
        if (!opts.determinismCheck && opts.determinismRuns !== undefined)
          throw new UsageError('--no-determinism-check and --determinism-runs contradict each other: give one.');
        const determinismRuns = opts.determinismCheck ? opts.determinismRuns : 0;
        const { plan, planPath, sampleTimeoutMs } = await gatherPlan(file, opts);
        const timeout = sampleTimeoutMs && timeoutIsDefault ? sampleTimeoutMs : opts.timeout;
        const workbench = createWorkbench(forkLauncher, { warmSpare: false });
        try {
          const outcome = await workbench.runPlan(plan, {
            timeoutMs: timeout,
            arch: opts.arch,
            planPath,
            // The whole plan checked on the device first, as in the UI: a launch or an allocation that would fail is refused.
            validate: opts.validate,
            ...(determinismRuns !== undefined ? { determinismRuns } : {}),
            // A trace carries the device and each process beside the run's own events.
            ...(opts.trace ? { sampleIntervalMs: TRACE_SAMPLE_INTERVAL_MS } : {}),
          });
          print(!!opts.json, outcome, () => renderRun(outcome));
          if (outcome.status === 'invalid' && isPlanRefused(outcome.problem))
            console.error('Nothing ran. To send the plan to the driver anyway and see what it says, run again with --no-validate.');
          if (opts.trace) {
            const { renderRunTrace, writeRunTrace } = await import('./run-trace');
            const trace = await writeRunTrace(outcome, opts.trace, outcome.samples ?? null);
            if (outcome.samplingProblem) console.error(`Device memory was not sampled: ${outcome.samplingProblem}`);
            // stderr: --json's stdout stays the outcome alone.
            console.error(renderRunTrace(trace));
            if ('notWritten' in trace && outcome.result) process.exitCode = EXIT.failed;
          }
          process.exitCode ??=
            outcome.status === 'unavailable'
              ? EXIT.unavailable
              : outcome.status === 'invalid'
                ? EXIT.usage
                : outcome.diagnosis.severity === 'error'
                  ? EXIT.failed
                  : EXIT.ok;
        } finally {
          await workbench.dispose();
        }
      },
    );

  withServeOptions(
    program
      .command('serve')
      .description('Serve the workbench UI on 127.0.0.1 for a browser: on a GPU server, reach it through an SSH tunnel (ssh -L 7411:127.0.0.1:7411).'),
  ).action(async (opts: ServeCommandOptions) => {
    // Loaded here, not at start: the web server and its WebSocket library are for this command only.
    const { serveUntilStopped } = await import('../serve/serve-command');
    process.exitCode = await serveUntilStopped(opts);
  });

  const bundle = program.command('bundle').description('Diagnostic bundles: one zip that carries a run, its sources and what was seen.');
  registerBundleExport(bundle);
  bundle
    .command('inspect')
    .description('Open a bundle read-only and print what it holds; nothing in it runs. Exit 64 when it is refused.')
    .argument('<file>', 'the bundle (.zip)')
    .option('--json', 'machine-readable output')
    .action(async (file: string, opts: { json?: boolean }) => {
      const { BundleRefusedError } = await import('../bundle/read-bundle');
      const { openBundleInReader } = await import('../readers/open-in-reader');
      try {
        // Read as the app reads it: every entry for what its role says, so what inspect accepts the app opens.
        const view = await openBundleInReader(resolve(file));
        const { manifest, entries, notes } = view;
        const verdict = view.outcome?.diagnosis.headline ?? view.diagnosis?.verdict.sentence ?? null;
        print(!!opts.json, { manifest, entries, recorded: view.recorded, diagnosis: verdict, notes }, () =>
          [
            `Bundle ${resolve(file)}: schema ${manifest.schema}, made ${manifest.createdAt} by GPU Workbench ${manifest.workbench.version}${manifest.redacted ? ', redacted' : ''}`,
            `  recorded on ${view.recorded.device ?? 'an unknown device'}${verdict ? `: ${verdict}` : ''}`,
            ...(view.diagnosis ? [`  a program's diagnosis: ${view.diagnosis.program.argv.join(' ')}`] : []),
            `  plan: ${manifest.contents.plan ?? '—'}   result: ${manifest.contents.result ?? '—'}   sources: ${manifest.contents.sources.join(', ') || '—'}`,
            ...entries.map((e) => `  ${e.name}  ${formatBytes(e.bytes)}`),
            ...(notes.length ? ['It lacks:', ...notes.map((n) => `  - ${n}`)] : []),
          ].join('\n'),
        );
      } catch (error) {
        if (!(error instanceof BundleRefusedError)) throw error;
        console.error(`✗ ${error.message}`);
        process.exitCode = EXIT.usage;
      }
    });

  withPlanOptions(
    program
      .command('sanitize')
      .description(
        'Run a kernel (a .cu file with --kernel, --plan or --sample) or any program (after --) under compute-sanitizer, and say what it found, one line per place: file:line, threads, blocks, and for a kernel the buffer an address belongs to. Exit 1 when it finds something, 2 without compute-sanitizer.',
      )
      .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME | -- <command> [args...])')
      .argument('[args...]', 'a .cu file, or after --: the program and its arguments (python3 train.py, ./app, …)'),
  )
    .option('--tool <tool>', `${SANITIZER_TOOLS.join(', ')}`, 'memcheck')
    .option('--print-limit <n>', 'findings the tool prints at most (0: all)', intOption('--print-limit', 0, 10_000_000), 10_000)
    .option('--launch-timeout <s>', 'seconds one instrumented kernel may run', intOption('--launch-timeout', 1, 86_400), 60)
    .option('--timeout <s>', 'seconds the whole run may take before it is stopped', intOption('--timeout', 1, 86_400), 600)
    .option('--no-leak-check', 'memcheck: do not report device memory never freed')
    .option('--cwd <dir>', 'a program: the folder to run it in', '.')
    .option('--env <NAME=value>', 'a program: set a variable for it (repeat for more)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--json', 'machine-readable output')
    .action(
      async (
        args: string[],
        opts: PlanOptions & {
          tool: string;
          printLimit: number;
          launchTimeout: number;
          timeout: number;
          leakCheck: boolean;
          cwd: string;
          env: string[];
          json?: boolean;
        },
        command: Command,
      ) => {
        if (!isSanitizerTool(opts.tool)) throw new UsageError(`--tool must be one of ${SANITIZER_TOOLS.join(', ')}, not "${opts.tool}".`);
        const rawArgs = (command.parent as (Command & { rawArgs?: string[] }) | null)?.rawArgs ?? [];
        const program = rawArgs.includes('--');
        const options = { printLimit: opts.printLimit, launchTimeoutS: opts.launchTimeout, leakCheck: opts.leakCheck };
        const controller = new AbortController();
        const interrupt = () => controller.abort();
        process.once('SIGINT', interrupt);
        try {
          if (program) {
            if (opts.plan || opts.sample || opts.kernel)
              throw new UsageError('Give a program after --, or a kernel (a .cu file, --plan or --sample), not both.');
            const env: Record<string, string> = {};
            for (const assignment of opts.env) {
              const parsed = parseEnvAssignment(assignment);
              if (!parsed) throw new UsageError(`--env takes NAME=value (a name of letters, digits and _), not "${assignment}".`);
              env[parsed.name] = parsed.value;
            }
            const report = await sanitizeProgram({
              tool: opts.tool,
              command: args,
              cwd: resolve(opts.cwd),
              env,
              options,
              timeoutMs: opts.timeout * 1000,
              signal: controller.signal,
            });
            print(!!opts.json, report, () => renderSanitize(report));
            process.exitCode = report.verdict === 'clean' ? EXIT.ok : EXIT.failed;
            return;
          }
          if (args.length > 1) throw new UsageError(`One .cu file at most (got ${args.join(' ')}); a program goes after --.`);
          if (opts.env.length) throw new UsageError('--env is for a program run after --.');
          const { plan, planPath } = await gatherPlan(args[0], opts);
          const workbench = createWorkbench(forkLauncher, { warmSpare: false });
          try {
            const { outcome, report } = await sanitizePlan(
              { plan, planPath, tool: opts.tool, options, timeoutMs: opts.timeout * 1000, arch: opts.arch, signal: controller.signal },
              workbench.compiler,
            );
            print(!!opts.json, { report, run: outcome }, () => `${renderSanitize(report)}\n\nThe run itself: ${outcome.diagnosis.headline}`);
            process.exitCode =
              outcome.status === 'unavailable'
                ? EXIT.unavailable
                : outcome.status === 'invalid'
                  ? EXIT.usage
                  : report.verdict === 'clean'
                    ? EXIT.ok
                    : EXIT.failed;
          } finally {
            await workbench.dispose();
          }
        } catch (error) {
          if (!(error instanceof SanitizerUnavailableError)) throw error;
          console.error(`✗ ${error.message}`);
          process.exitCode = EXIT.unavailable;
        } finally {
          process.off('SIGINT', interrupt);
        }
      },
    );

  program
    .command('samples')
    .description('List the failure gallery: one sample per failure class, each with a broken and a fixed variant and the diagnosis it must produce.')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const gallery = await fromUserFile(() => listGallery());
      print(
        !!opts.json,
        gallery.map((s) => ({ name: s.name, dir: s.dir, ...s.manifest })),
        () =>
          [
            ...gallery.map((s) => `${s.name.padEnd(26)} ${s.manifest.title}\n${' '.repeat(27)}expect: ${describeExpected(s.manifest.expect.broken)}`),
            '',
            'Run one with: gpu-workbench run --sample NAME   (add --fixed for the corrected variant)',
          ].join('\n'),
      );
    });

  registerMemoryCommand(program);
  registerMonitorCommand(program);
  withPlanOptions(
    program
      .command('profile')
      .description(
        'Profile one launch of a kernel (a .cu file with --kernel, --plan or --sample) under Nsight Compute, and say what its numbers mean: sectors per request per source line, memory- or compute- or latency-bound, occupancy, where the warps wait. Without ncu or its counters: why, and the effective bandwidth. Exit 2 without a GPU.',
      )
      .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME)')
      .argument('[file.cu]', 'CUDA C++ source file'),
  )
    .option('--step <n>', 'the plan step (1-based) whose launch to profile (default: the first launch)', intOption('--step', 1, 1_000_000))
    .option('--no-counters', 'do not run Nsight Compute: only the time and the effective bandwidth')
    .option('--save <profile.json>', 'save the profile (to compare with later, or to open in the app)')
    .option('--compare <profile.json>', 'a saved profile to compare with: each figure before and after')
    .option('--timeout <s>', 'seconds the profiled run may take', intOption('--timeout', 1, 86_400), 600)
    .option('--json', 'machine-readable output')
    .action(async (file: string | undefined, opts: PlanOptions & ProfileCommandOptions) => {
      const { plan, planPath } = await gatherPlan(file, opts);
      process.exitCode = await profileCommand(plan, planPath, opts);
    });
  registerDiagnoseCommand(program);

  return program;
}

/**
 * What `validate` checks against: a saved profile (--profile), or this machine's device (--device, default 0) with
 * the device itself for what only it can say (free memory, resources the compiler did not report). Null, said and
 * exit 2, when there is no device here and no profile was given.
 */
async function launchTarget(opts: { profile?: string; device?: number }): Promise<{ profile: DeviceProfile; device: DeviceInfo | null } | null> {
  if (opts.profile && opts.device !== undefined) throw new UsageError('Give --profile or --device, not both.');
  if (opts.profile) {
    try {
      return { profile: await loadProfileFile(resolve(opts.profile)), device: null };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const devices = await listDevices();
  if (!devices.ok) {
    console.error(
      `✗ ${devices.problem.title}: pass --profile to validate against a saved device (this checkout ships profiles/nvidia-h100.json and nvidia-h200.json).`,
    );
    process.exitCode = EXIT.unavailable;
    return null;
  }
  const device = devices.devices.find((d) => d.ordinal === (opts.device ?? 0));
  if (!device) throw new UsageError(`There is no device ${opts.device}: this machine has ${devices.devices.length}.`);
  return { profile: makeProfile(device, devices.driverVersion, new Date().toISOString()), device };
}

/** The options that name a plan (a file with launch flags, a plan file, a sample), shared by run and sanitize. */
function withPlanOptions(command: Command): Command {
  return command
    .option('--kernel <name>', 'with a .cu file: the __global__ function to launch')
    .option('--grid <X[,Y,Z]>', 'grid dimensions in blocks', '1')
    .option('--block <X[,Y,Z]>', 'block dimensions in threads', '1')
    .option('--smem <bytes>', 'dynamic shared memory per block', intOption('--smem', 0, 0xffffffff), 0)
    .option(
      '--arg <spec>',
      'a kernel argument, in order: name:type[count]=init or name:type=value (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--plan <plan.json>', 'a launch plan file instead of a file and flags')
    .option('--sample <name>', 'a failure-gallery sample (see `gpu-workbench samples`)')
    .option('--fixed', 'with --sample: its fixed variant instead of the broken one')
    .option('--device <n>', 'device ordinal', intOption('--device', 0, 1023), 0)
    .option('--arch <sm_XX>', 'compile for this architecture instead of the device’s own')
    .option('--warmup <n>', 'untimed launches before the timed ones', intOption('--warmup', 0, 10000), 0)
    .option('--repeat <n>', 'timed launches (min/median/max reported)', intOption('--repeat', 1, 10000), 1);
}

interface PlanOptions {
  arch?: string;
  kernel?: string;
  grid: string;
  block: string;
  smem: number;
  arg: string[];
  plan?: string;
  sample?: string;
  fixed?: boolean;
  device: number;
  warmup: number;
  repeat: number;
}

/** The plan a command names: a plan file, a gallery sample, or a source file with launch flags (run and sanitize share this). */
async function gatherPlan(file: string | undefined, opts: PlanOptions): Promise<{ plan: unknown; planPath: string | null; sampleTimeoutMs: number | null }> {
  if ([file, opts.plan, opts.sample].filter(Boolean).length > 1) throw new UsageError('Give one of a source file, --plan or --sample.');
  if (opts.fixed && !opts.sample) throw new UsageError('--fixed goes with --sample.');
  if (opts.plan) {
    const planPath = resolve(opts.plan);
    return { plan: (await fromUserFile(() => readPlanFile(planPath))).plan, planPath, sampleTimeoutMs: null };
  }
  if (opts.sample) {
    const sample = await fromUserFile(() => loadSample(opts.sample!, opts.fixed ? 'fixed' : 'broken'));
    return { plan: sample.plan, planPath: sample.planPath, sampleTimeoutMs: sample.manifest.timeoutMs ?? null };
  }
  if (!file) throw new UsageError('Give a .cu file to run (or --plan plan.json, or --sample NAME).');
  if (!opts.kernel) throw new UsageError('Name the kernel to launch with --kernel NAME.');
  const grid = parseDim3(opts.grid, '--grid');
  if (!grid.ok) throw new UsageError(grid.error);
  const block = parseDim3(opts.block, '--block');
  if (!block.ok) throw new UsageError(block.error);
  const args: ParsedArg[] = [];
  for (const spec of opts.arg) {
    const parsed = parseArg(spec);
    if (!parsed.ok) throw new UsageError(parsed.error);
    args.push(parsed.value);
  }
  const names = args.map((a) => (a.kind === 'buffer' ? a.buffer.name : a.name));
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new UsageError(`--arg name "${duplicate}" is used twice; each argument needs its own name.`);
  const source = await fromUserFile(() => readTextFile(file, 'Source file'));
  const plan = planFromArgs({
    source,
    sourceName: basename(file),
    kernel: opts.kernel,
    grid: grid.value,
    block: block.value,
    sharedBytes: opts.smem,
    args,
    device: opts.device,
    warmup: opts.warmup,
    repeats: opts.repeat,
  });
  return { plan, planPath: null, sampleTimeoutMs: null };
}

function describeExpected(e: ExpectedDiagnosis): string {
  return [e.kind, e.error, e.step !== undefined ? `step ${e.step + 1}` : null, e.kernel, e.buffer ? `buffer ${e.buffer}` : null].filter(Boolean).join(', ');
}

/** Files the user names fail with a message for the user, not a stack trace. */
async function fromUserFile<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof PlanFileError) throw new UsageError(error.message);
    throw error;
  }
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof UsageError) {
      console.error(`✗ ${error.message}`);
      return EXIT.usage;
    }
    console.error(`✗ Unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    console.error('  This is a bug in GPU Workbench; please report it with the command you ran.');
    return EXIT.failed;
  }
}
