import { useMemo } from 'react';
import { useStore } from 'zustand';

import type { CompileResult, KernelFacts } from '../../core/compile/compile-result';
import { shownCompile } from '../../core/compile/shown-compile';
import { parseDim3 } from '../../core/dims';
import { planFromForm } from '../../core/plan/form-plan';
import { parseSharedBytes, planWithDocumentSource, planWithLaunch } from '../../core/plan/plan-launch';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import { profileBlockers, runBlockers, type RunBlocker, type RunReadinessInput } from '../../core/plan/run-readiness';
import { fail, ok, type Result } from '../../core/result';
import { deviceLimits, type DeviceLimits } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { checkPlan, launchRefusals, memoryRefusals, type LaunchCheck, type PlanCheck } from '../../core/validate/plan-check';
import { orderRefusals } from '../../core/validate/plan-order';
import type { KernelLimits } from '../../core/validate/occupancy';
import { validateLaunch, type Validation } from '../../core/validate/validate-launch';
import { getModel } from '../editor/models';
import { chosenProfile, gpuPresence, type ProfileEntry } from '../store/devices-slice';
import type { DocumentState } from '../store/editor-slice';
import { documentRun, type DocumentRun } from '../store/run-slice';
import type { WorkbenchStore } from '../store/store';

/**
 * One computation of what the active document will run and what the validator says about it, shared by
 * the launch panel and the Run section so that both show the same truth: the plan that Run would start.
 */
export interface LaunchView {
  doc: DocumentState | null;
  /** The compile the panels show: the latest, or the last good one (stale) while the text does not compile. */
  compile: { result: CompileResult | null; stale: boolean; status: 'ok' | 'compiling' | 'failed' | 'none' };
  kernels: KernelFacts[];
  /** The kernel the panel checks: the attached plan's, or the one chosen. */
  kernel: KernelFacts | null;
  profile: ProfileEntry | null;
  device: DeviceLimits | null;
  limits: KernelLimits | null;
  run: DocumentRun;
  fields: { grid: Result<readonly [number, number, number]>; block: Result<readonly [number, number, number]>; smem: Result<number> };
  validation: Validation | null;
  /** The plan Run would start, with the panel's launch and the editor's text; or why there is none. */
  plan: Result<unknown>;
  /** That plan as the schema reads it (what will run); null when there is none or it is not valid. */
  runnable: LaunchPlan | null;
  checks: LaunchCheck[];
  /** The validator on the whole plan: every launch, the steps' order, every allocation against the device's memory and the host's. */
  planCheck: PlanCheck | null;
  blockers: RunBlocker[];
  /** Why Profile is off (Run's reasons, a plan with no launch, no GPU in Profile's words); empty when it can profile. */
  profileBlockers: RunBlocker[];
}

export function useLaunchView(store: WorkbenchStore): LaunchView {
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId) ?? null);
  const compileState = useStore(store, (s) => (s.activeId ? s.compiles[s.activeId] : undefined));
  const run = useStore(store, (s) => documentRun(s, s.activeId));
  const profiles = useStore(store, (s) => s.profiles);
  const profileId = useStore(store, (s) => s.profileId);
  const devices = useStore(store, (s) => s.devices);
  const compileOptions = useStore(store, (s) => s.compileOptions);
  // A bundle's file is checked against the bundle's device, never this machine's choice.
  const bundleProfile = useStore(store, (s) => (s.bundle && doc?.readOnly?.bundle === s.bundle.view.path ? s.bundle.profile : null));
  const hostMemBytes = useStore(store, (s) => s.info?.hostMemBytes ?? null);

  return useMemo(() => {
    const shown = shownCompile(compileState?.result ?? null, compileState?.lastGood ?? null);
    const latest = compileState?.result ?? null;
    const status = compileState?.status === 'compiling' ? 'compiling' : !latest ? 'none' : latest.ok ? 'ok' : 'failed';
    const kernels = (shown.result?.kernels ?? []).filter((k) => k.registers !== null);
    const attachedEntry = run.plan ? run.launch.kernel : null;
    const kernel = kernels.find((k) => k.name === (attachedEntry ?? run.launch.kernel)) ?? (attachedEntry ? null : (kernels[0] ?? null));
    const profile = doc?.readOnly ? bundleProfile : chosenProfile({ profiles, profileId });
    const device = profile ? deviceLimits(profile.profile.device) : null;
    const text = doc ? (getModel(doc.id)?.getValue() ?? '') : '';
    const limitsOf = (k: KernelFacts | null) => (k && device ? kernelLimitsFromFacts(k, device, text) : null);
    const limits = limitsOf(kernel);
    const fields = { grid: parseDim3(run.launch.grid, 'Grid'), block: parseDim3(run.launch.block, 'Block'), smem: parseSharedBytes(run.launch.smem) };
    const validation =
      device && fields.grid.ok && fields.block.ok && fields.smem.ok && (limits || run.plan)
        ? validateLaunch(
            device,
            limits ?? {
              numRegs: 0,
              sharedSizeBytes: 0,
              localSizeBytes: 0,
              maxThreadsPerBlock: device.maxThreadsPerBlock,
              maxDynamicSharedSizeBytes: device.sharedPerBlock,
            },
            { grid: fields.grid.value, block: fields.block.value, sharedBytes: fields.smem.value, raisesDynamicSharedLimit: true },
          )
        : null;

    let plan: Result<unknown>;
    if (!doc) plan = fail('Open a file to run it.');
    else if (run.plan) {
      const launched = run.plan.launchStep === null ? ok(run.plan.plan) : planWithLaunch(run.plan.plan, run.plan.launchStep, run.launch);
      plan = launched.ok ? ok(planWithDocumentSource(launched.value, doc.name, text)) : launched;
    } else {
      const rows = run.argRows && kernel && run.argRows.kernel === kernel.name ? run.argRows.rows : null;
      const firstError = [fields.grid, fields.block, fields.smem].find((f) => !f.ok);
      if (firstError && !firstError.ok) plan = fail(firstError.error);
      else if (!kernel || !rows) plan = fail('Compile a kernel to build its arguments.');
      else
        plan = ok(
          planFromForm({
            source: text,
            sourceName: doc.name,
            kernel: kernel.name,
            grid: fields.grid.ok ? fields.grid.value : [1, 1, 1],
            block: fields.block.ok ? fields.block.value : [1, 1, 1],
            sharedBytes: fields.smem.ok ? fields.smem.value : 0,
            rows,
            options: compileOptions,
          }),
        );
    }
    // The whole plan, as the host will take it: the schema first, then every launch and every allocation.
    const parsed = plan.ok ? launchPlanSchema.safeParse(plan.value) : null;
    const runnable = parsed?.success ? parsed.data : null;
    const memory = {
      freeBytes: profile?.source === 'device' && devices?.ok ? (devices.memory?.find((m) => m.uuid === profile.profile.device.uuid)?.freeBytes ?? null) : null,
      hostBytes: hostMemBytes,
    };
    const planCheck =
      runnable && device
        ? checkPlan(runnable, device, memory, (l) =>
            doc && (l.sourceName === null || l.sourceName === doc.name) ? limitsOf(kernels.find((k) => k.name === l.entry) ?? null) : null,
          )
        : null;
    const checks = planCheck?.launches ?? [];
    const gpu = gpuPresence({ devices });
    const readiness: RunReadinessInput = {
      compile: status,
      documentName: doc?.name ?? 'The file',
      planProblem: !plan.ok ? plan.error : parsed && !parsed.success ? `The plan is not valid: ${describeIssues(parsed.error)}` : null,
      refusals: launchRefusals(checks),
      orderRefusals: orderRefusals(planCheck?.order ?? []),
      memoryRefusals: memoryRefusals(planCheck?.memory ?? []),
      deviceLabel: profile?.label ?? null,
      gpu,
    };
    const blockers = runBlockers(readiness);
    const launches = runnable ? runnable.steps.filter((st) => st.op === 'launch').length : null;
    return {
      doc,
      compile: { ...shown, status },
      kernels,
      kernel,
      profile,
      device,
      limits,
      run,
      fields,
      validation,
      plan,
      runnable,
      checks,
      planCheck,
      blockers,
      profileBlockers: profileBlockers(readiness, launches),
    };
  }, [doc, compileState, run, profiles, profileId, devices, compileOptions, bundleProfile, hostMemBytes]);
}
