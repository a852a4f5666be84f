import { planFromArgs } from '../../core/plan/arg-syntax';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { CompiledModule } from '../../core/runner/protocol';

/**
 * The warm-up kernel, as PTX the driver JIT-compiles for the GPU it runs on: `out[i] = i` for i < n. Its target is
 * Volta (sm_70), so it runs on Volta and newer; on an older GPU its load fails, which the runner says in its status
 * and goes on without.
 */
const WARM_UP_PTX = `.version 7.0
.target sm_70
.address_size 64
.visible .entry gpu_workbench_warm_up(.param .u64 out, .param .u32 n)
{
  .reg .pred p;
  .reg .b32 r<3>;
  .reg .b64 rd<4>;
  ld.param.u64 rd1, [out];
  ld.param.u32 r1, [n];
  mov.u32 r2, %tid.x;
  setp.ge.u32 p, r2, r1;
  @p bra DONE;
  cvta.to.global.u64 rd2, rd1;
  mul.wide.u32 rd3, r2, 4;
  add.s64 rd2, rd2, rd3;
  st.global.u32 [rd2], r2;
DONE:
  ret;
}
`;

const COUNT = 256;

/** The runner's argument that turns the warm-up off (RunnerPoolOptions.warmUp). */
export const NO_WARM_UP = '--no-warm-up';

/** The module of the warm-up kernel, as a compiled one reaches the runner. */
export const warmUpModule = (): CompiledModule => ({ kernel: 'main', symbol: 'gpu_workbench_warm_up', image: new TextEncoder().encode(WARM_UP_PTX) });

/**
 * The smallest plan that takes every path a run takes: a guarded, poisoned allocation, an upload, a launch of a
 * module loaded for it, the guard and poison checks, the determinism re-run, a download and a free. A spare runner
 * runs it once after opening its context, so that the first run a user sends it (the run right after a fault) does
 * not pay the driver's first calls in a new context or V8 compiling the run path for the first time.
 */
export function warmUpPlan(ordinal: number): LaunchPlan {
  return launchPlanSchema.parse(
    planFromArgs({
      source: WARM_UP_PTX,
      sourceName: 'warm-up.ptx',
      kernel: 'gpu_workbench_warm_up',
      grid: [1, 1, 1],
      block: [COUNT, 1, 1],
      sharedBytes: 0,
      device: ordinal,
      args: [
        { kind: 'buffer', buffer: { name: 'out', type: 'u32', count: COUNT, init: { kind: 'zeros' } } },
        { kind: 'scalar', name: 'n', type: 'u32', value: COUNT },
      ],
    }),
  );
}
