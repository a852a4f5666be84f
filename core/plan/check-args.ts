import type { KernelParam } from '../compile/kernel-signature';
import { formatBytes, plural } from '../format';
import { elementSize, isFloatType, type ElementType } from './element-types';
import { bytesOf, type LaunchPlan } from './plan-schema';

/**
 * The launch arguments of a plan against each kernel's parameter list, before anything runs: a wrong
 * count or a wrong kind of argument would otherwise reach cuLaunchKernel as misread bytes — a crash or
 * a silently wrong result, never a clear error.
 */
export function checkLaunchArgs(plan: LaunchPlan, paramsByKernel: ReadonlyMap<string, KernelParam[] | null>): string[] {
  const problems: string[] = [];
  const buffers = new Map(plan.buffers.map((b) => [b.name, b]));
  plan.steps.forEach((step, index) => {
    if (step.op !== 'launch') return;
    const params = paramsByKernel.get(step.kernel);
    if (!params) return; // unknown (e.g. a kernel the source parser could not read): the driver decides
    const entry = plan.kernels.find((k) => k.id === step.kernel)?.entry ?? step.kernel;
    const where = `Step ${index + 1} (launch ${entry})`;
    const signature = `${entry}(${params.map((p) => `${p.type} ${p.name}`).join(', ')})`;
    if (step.args.length !== params.length) {
      problems.push(`${where} passes ${plural(step.args.length, 'argument')}, but ${signature} takes ${params.length}.`);
      return;
    }
    step.args.forEach((arg, i) => {
      const p = params[i]!;
      const what = `argument ${i + 1} (${p.type} ${p.name})`;
      const depth = (p.type.match(/\*/g) ?? []).length;
      if ('buffer' in arg) {
        const b = buffers.get(arg.buffer);
        if (!p.pointer) {
          problems.push(`${where}: ${what} is a value, but the plan passes buffer ${arg.buffer}; give a scalar.`);
        } else if (b && depth === 1 && p.elementType && !sameRepresentation(p.elementType, b.type)) {
          problems.push(`${where}: ${what} points to ${p.elementType}, but buffer ${arg.buffer} holds ${b.type}; the kernel would misread every element.`);
        }
        return;
      }
      const s = arg.scalar;
      if (p.pointer) {
        // A raw 64-bit address is how a plan passes a deliberate null (or foreign) pointer.
        if (s.type !== 'u64' && s.type !== 'i64') problems.push(`${where}: ${what} is a pointer; give a buffer (or a u64 address), not a ${s.type} value.`);
        return;
      }
      if (p.elementType && !sameRepresentation(p.elementType, s.type)) {
        problems.push(`${where}: ${what} takes ${p.elementType}, but the plan gives a ${s.type} (${String(s.value)}); the kernel would read the wrong bytes.`);
      }
    });
  });
  return problems;
}

/** Same size and the same kind (integer or floating point): signedness alone is not a misreading. */
function sameRepresentation(a: ElementType, b: ElementType): boolean {
  if (a === b) return true;
  if (isFloatType(a) || isFloatType(b)) return false;
  return elementSize(a) === elementSize(b);
}

/**
 * Buffers the host must hold in memory (to upload, or after reading back) against the host's free
 * memory: a plan that cannot fit is refused before any device memory is touched.
 */
export function checkHostMemory(plan: LaunchPlan, freeHostBytes: number): string[] {
  const staged = new Set(plan.steps.flatMap((s) => (s.op === 'upload' || s.op === 'download' ? [s.buffer] : [])));
  const usable = freeHostBytes * 0.8;
  const problems: string[] = [];
  let total = 0;
  for (const b of plan.buffers) {
    if (!staged.has(b.name)) continue;
    const bytes = bytesOf(b);
    total += bytes;
    if (bytes > usable) {
      problems.push(
        `Buffer ${b.name} (${b.type}[${b.count}]) needs ${formatBytes(bytes)} of host memory, but this machine has ${formatBytes(freeHostBytes)} free.`,
      );
    }
  }
  if (!problems.length && total > usable) {
    problems.push(
      `The buffers this plan uploads and reads back need ${formatBytes(total)} of host memory together, but this machine has ${formatBytes(freeHostBytes)} free.`,
    );
  }
  return problems;
}
