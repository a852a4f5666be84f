import { compileOptionsSchema } from '../../core/compile/compile-options';
import type { KernelFacts } from '../../core/compile/compile-result';
import { smArch, type DeviceInfo } from '../../core/devices';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import { deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { checkPlan, type PlanCheck } from '../../core/validate/plan-check';
import { completeKernelFacts } from '../services/kernel-facts-service';
import { machineMemory } from '../services/plan-check-service';
import type { Workbench } from '../workbench';
import { EXIT } from './exit-codes';
import { renderPlanCheck } from './render-validation';

/** Each kernel's compiled resources for the device (null where the compile failed or did not say), and why not. */
async function kernelFacts(
  workbench: Workbench,
  plan: LaunchPlan,
  arch: string,
  live: boolean,
): Promise<{ facts: Map<string, KernelFacts | null>; notes: string[] }> {
  const facts = new Map<string, KernelFacts | null>();
  const notes: string[] = [];
  for (const k of plan.kernels) {
    const compiled = await workbench.compiler
      .compile({ source: k.source, sourceName: k.sourceName, options: compileOptionsSchema.parse({ ...k.options, arch }), backend: 'auto' })
      .catch((error: unknown) => ({ ok: false as const, error: error instanceof Error ? error.message : String(error) }));
    const result = 'error' in compiled ? compiled : live ? await completeKernelFacts(compiled, workbench.pool) : compiled;
    const found = 'kernels' in result ? (result.kernels.find((f) => f.name === k.entry) ?? null) : null;
    facts.set(k.id, found && found.registers !== null && found.sharedBytes !== null ? found : null);
    const only = facts.get(k.id) ? '' : `: ${k.entry}'s launches are checked against the device's limits only`;
    if (!result.ok) notes.push(`${k.sourceName} does not compile for ${arch}${only}.`);
    else if (only) notes.push(`The compiler did not report ${k.entry}'s resources${only}.`);
  }
  return { facts, notes };
}

/**
 * `gpu-workbench validate --plan … | --sample …`: the whole plan against a device before it runs — every launch,
 * with each kernel's compiled resources, and every allocation against the device's memory (total always, free from
 * NVML on this machine's device) and the host's (core/validate/plan-check.ts, the check the launch panel and Run
 * make). Exit 1 when it would fail, 64 when the plan is not valid.
 */
export async function validatePlan(
  workbench: Workbench,
  input: unknown,
  planPath: string | null,
  target: { profile: DeviceProfile; device: DeviceInfo | null },
  json: boolean,
): Promise<number> {
  const parsed = launchPlanSchema.safeParse(input);
  if (!parsed.success) {
    console.error(`✗ The launch plan${planPath ? ` ${planPath}` : ''} is not valid:\n${describeIssues(parsed.error)}`);
    return EXIT.usage;
  }
  const plan = parsed.data;
  const device = deviceLimits(target.profile.device);
  const arch = smArch(target.profile.device);
  const { facts, notes } = await kernelFacts(workbench, plan, arch, target.device !== null);
  const sources = new Map(plan.kernels.map((k) => [k.id, k.source]));
  const check: PlanCheck = checkPlan(plan, device, await machineMemory(target.device), (launch) => {
    const known = facts.get(launch.kernelId);
    return known ? kernelLimitsFromFacts(known, device, sources.get(launch.kernelId)) : null;
  });
  if (json)
    console.log(
      JSON.stringify({ device: device.name, plan: planPath, ok: check.ok, launches: check.launches, order: check.order, memory: check.memory, notes }, null, 2),
    );
  else console.log(renderPlanCheck(check, device.name, planPath, notes));
  return check.ok ? EXIT.ok : EXIT.failed;
}
