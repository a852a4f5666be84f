import { POISON_BYTE } from '../../../../core/plan/guards';
import { allocStepsUploadedBeforeUse, scanPoison } from '../../../../core/plan/poison';
import type { BufferSpec, LaunchPlan } from '../../../../core/plan/plan-schema';
import type { RunResult } from '../../../../core/runner/run-result';
import type { Allocation, AllocLayout } from '../recorded-device';
import type { RunCheck } from '../run-check';

/**
 * Poison (core/plan/poison.ts): memory a kernel could read before the plan writes it is allocated filled with
 * 0xFF bytes, and each read-back says how much of the pattern is left (NaN for floats), so reads of memory
 * nothing wrote show instead of passing silently. An upload before any use makes the fill moot: none then.
 */
export class PoisonCheck implements RunCheck {
  private readonly uploadedBeforeUse: Set<number>;
  /** Buffers allocated with the pattern and not uploaded since: whatever of it a kernel left shows. */
  private readonly poisoned = new Set<string>();

  constructor(plan: LaunchPlan) {
    this.uploadedBeforeUse = allocStepsUploadedBeforeUse(plan);
  }

  allocLayout(stepIndex: number): Partial<AllocLayout> {
    return this.uploadedBeforeUse.has(stepIndex) ? {} : { fill: POISON_BYTE };
  }

  afterAlloc(buffer: string, allocation: Allocation): void {
    if (allocation.fill === POISON_BYTE) this.poisoned.add(buffer);
  }

  afterUpload(buffer: string): void {
    this.poisoned.delete(buffer);
  }

  summary(spec: BufferSpec, data: Uint8Array, summary: RunResult['buffers'][number]): RunResult['buffers'][number] {
    return { ...summary, poison: scanPoison(spec.type, data, summary.nanCount, this.poisoned.has(spec.name)) };
  }
}
