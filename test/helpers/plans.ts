import { planFromArgs } from '../../core/plan/arg-syntax';
import type { LaunchPlanInput } from '../../core/plan/plan-schema';

/** samples/null-pointer writing through a null device pointer: always CUDA_ERROR_ILLEGAL_ADDRESS (700). */
export function nullPointerPlan(source: string): LaunchPlanInput {
  return planFromArgs({
    source,
    sourceName: 'kernel.cu',
    kernel: 'writeThrough',
    grid: [1, 1, 1],
    block: [32, 1, 1],
    sharedBytes: 0,
    args: [
      { kind: 'scalar', name: 'out', type: 'u64', value: '0' },
      { kind: 'scalar', name: 'n', type: 'i32', value: 32 },
    ],
  });
}
