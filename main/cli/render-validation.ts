import type { Dim3 } from '../../core/dims';
import { formatDim3 } from '../../core/dims';
import type { PlanCheck } from '../../core/validate/plan-check';
import type { Validation } from '../../core/validate/validate-launch';

const ICON = { error: '✗', warning: '!', note: '·' } as const;

/** A finding's lines: the icon and message, the driver and runtime errors it would cause, and its fix. */
function findingLines(
  f: {
    severity: keyof typeof ICON;
    message: string;
    fix: string | null;
    driverError: { name: string; code: number } | null;
    runtimeError: { name: string; code: number } | null;
  },
  indent = '',
): string[] {
  const errors = f.driverError ? ` → ${f.driverError.name} (${f.driverError.code}) / ${f.runtimeError?.name} (${f.runtimeError?.code})` : '';
  return [`${indent}${ICON[f.severity]} ${f.message}${errors}`, ...(f.fix ? [`${indent}    fix: ${f.fix}`] : [])];
}

/** A whole plan's check: each launch step and what the validator says of it, steps out of order, then the plan's memory, then the verdict. */
export function renderPlanCheck(check: PlanCheck, deviceName: string, planPath: string | null, notes: string[]): string {
  const lines = [planPath ? `The plan ${planPath} on ${deviceName}` : `The plan on ${deviceName}`];
  for (const c of check.launches) {
    const errors = c.findings.filter((f) => f.severity === 'error').length;
    lines.push(`Step ${c.stepIndex + 1}: ${c.label}${c.checkedWith === 'device' ? ' (the device’s limits only)' : ''}  ${errors ? '✗' : '✓'}`);
    for (const f of c.findings) lines.push(...findingLines(f, '  '));
  }
  if (check.order.length) lines.push('Steps:');
  for (const f of check.order) lines.push(...findingLines(f, '  '));
  lines.push(check.memory.length ? 'Memory:' : 'Memory: every buffer fits.');
  for (const f of check.memory) lines.push(...findingLines(f, '  '));
  for (const n of notes) lines.push(`(${n})`);
  lines.push(check.ok ? `✓ The plan would run on ${deviceName}.` : `✗ The plan would fail on ${deviceName}.`);
  return lines.join('\n');
}

export function renderValidation(v: Validation, deviceName: string, kernel: string, config: { grid: Dim3; block: Dim3; sharedBytes: number }): string {
  const lines = [
    `${kernel}<<<${formatDim3(config.grid)}, ${formatDim3(config.block)}${config.sharedBytes ? `, ${config.sharedBytes}` : ''}>>> on ${deviceName}`,
  ];
  for (const f of v.findings) lines.push(...findingLines(f));
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
