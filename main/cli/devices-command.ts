import { resolve } from 'node:path';

import type { Command } from 'commander';

import { ATTRIBUTES } from '../../core/cuda/device-attributes';
import { formatBytes, plural } from '../../core/format';
import { makeProfile } from '../../core/validate/device-limits';
import { listDevices } from '../services/device-service';
import { discover } from '../services/discovery-service';
import { saveProfile } from '../services/profile-service';
import { intOption, print, UsageError } from './cli-support';
import { EXIT } from './exit-codes';

/** `gpu-workbench devices`: the devices and their attributes, or why there are none; --save-profile keeps one for machines without it. */
export function registerDevicesCommand(program: Command): void {
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
}
