import { elementSize } from '../../../../core/plan/element-types';
import { findGuardDamage, GUARD_PATTERN } from '../../../../core/plan/guards';
import type { AllocLayout } from '../recorded-device';
import type { LaunchDone, RunCheck } from '../run-check';
import type { RunState } from '../run-state';

/**
 * Guard bytes (core/plan/guards.ts): every buffer is allocated with `bytes` of known pattern before and after
 * it, and after each launch the guards of every buffer it was given are read back in one copy. Damage is
 * reported as the launch's, and the pattern restored, so the next launch's damage is its own.
 */
export class GuardCheck implements RunCheck {
  constructor(
    private readonly run: RunState,
    private readonly bytes: number,
  ) {}

  allocLayout(): Partial<AllocLayout> {
    return { guardBytes: this.bytes };
  }

  async afterLaunch({ stepIndex, step, entry, passed }: LaunchDone): Promise<void> {
    const names = [...new Set(passed)].filter((name) => this.run.allocations.has(name));
    if (!names.length) return;
    const guard = this.bytes;
    const pointers = names.flatMap((name) => {
      const a = this.run.allocations.get(name)!;
      return [a.base, a.pointer + BigInt(a.bytes)];
    });
    const data = await this.run.device.readGuards(pointers, guard);
    for (const [i, name] of names.entries()) {
      const spec = this.run.spec(name);
      const a = this.run.allocations.get(name)!;
      const before = data.subarray(2 * i * guard, (2 * i + 1) * guard);
      const after = data.subarray((2 * i + 1) * guard, (2 * i + 2) * guard);
      const damage = findGuardDamage(before, after, elementSize(spec.type), spec.count);
      for (const d of damage) {
        this.run.checks.guardViolations.push({ stepIndex, kernel: step.kernel, entry, buffer: name, type: spec.type, count: spec.count, damage: d });
      }
      if (damage.some((d) => d.side === 'before')) await this.restore(name, a.base);
      if (damage.some((d) => d.side === 'after')) await this.restore(name, a.pointer + BigInt(a.bytes));
    }
  }

  private restore(buffer: string, at: bigint): Promise<void> {
    return this.run.device.memset(buffer, at, this.bytes, GUARD_PATTERN, 'guard');
  }
}
