import type { Dim3 } from '../../core/dims';
import { formatDim3 } from '../../core/dims';
import type { Validation } from '../../core/validate/validate-launch';

const ICON = { error: '✗', warning: '!', note: '·' } as const;

export function renderValidation(v: Validation, deviceName: string, kernel: string, config: { grid: Dim3; block: Dim3; sharedBytes: number }): string {
  const lines = [
    `${kernel}<<<${formatDim3(config.grid)}, ${formatDim3(config.block)}${config.sharedBytes ? `, ${config.sharedBytes}` : ''}>>> on ${deviceName}`,
  ];
  for (const f of v.findings) {
    const errors = f.driverError ? ` → ${f.driverError.name} (${f.driverError.code}) / ${f.runtimeError?.name} (${f.runtimeError?.code})` : '';
    lines.push(`${ICON[f.severity]} ${f.message}${errors}`);
    if (f.fix) lines.push(`    fix: ${f.fix}`);
  }
  if (v.occupancy) {
    const o = v.occupancy;
    lines.push(
      `Occupancy: ${(o.occupancy * 100).toFixed(1)}% — ${o.activeBlocksPerSM} blocks (${o.activeWarpsPerSM} of ${o.maxWarpsPerSM} warps) per SM, limited by ${o.limiters.join(' and ')}`,
    );
    lines.push(
      `  per-SM limits: warps ${o.limits.warps}, registers ${o.limits.registers}, shared memory ${o.limits['shared memory'] > 1e9 ? '∞' : o.limits['shared memory']}, blocks ${o.limits['blocks per SM']}`,
    );
  }
  if (v.waves !== null) lines.push(`Waves: ${v.waves.toFixed(2)} (full device passes of blocks)`);
  if (v.suggestedBlockSize) lines.push(`Suggested block size: ${v.suggestedBlockSize} (highest occupancy, as cuOccupancyMaxPotentialBlockSize picks it)`);
  lines.push(v.ok ? '✓ This launch would work.' : '✗ This launch would fail.');
  return lines.join('\n');
}
