import { parseDim3, type Dim3 } from '../dims';
import { fail, ok, type Result } from '../result';

/**
 * The launch panel and a plan's launch step, both ways: a plan that is opened fills the panel, and what
 * the panel says is what the plan runs with.
 */

/** The launch panel's fields as typed: text, so a half-typed value stays as the person typed it. */
export interface LaunchForm {
  kernel: string;
  grid: string;
  block: string;
  smem: string;
}

export const DEFAULT_LAUNCH_FORM: LaunchForm = { kernel: '', grid: '4', block: '256', smem: '0' };

/** One launch step of a plan, read from the plan as it came (a plan file is schema-checked only when it runs). */
export interface PlanLaunch {
  stepIndex: number;
  kernelId: string;
  entry: string;
  /** The file the kernel's source came from, by name ("broken.cu"); null when the plan does not say. */
  sourceName: string | null;
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDimPart = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 0xffffffff;

function dimOf(value: unknown): Dim3 | null {
  if (!Array.isArray(value) || value.length < 1 || value.length > 3 || !value.every(isDimPart)) return null;
  const [x, y = 1, z = 1] = value as number[];
  return [x!, y, z];
}

/** Every launch step of a plan with well-formed dimensions, in step order. */
export function planLaunches(plan: unknown): PlanLaunch[] {
  if (!isRecord(plan) || !Array.isArray(plan['steps'])) return [];
  const kernels = Array.isArray(plan['kernels']) ? plan['kernels'].filter(isRecord) : [];
  const out: PlanLaunch[] = [];
  plan['steps'].forEach((step, stepIndex) => {
    if (!isRecord(step) || step['op'] !== 'launch' || typeof step['kernel'] !== 'string') return;
    const grid = dimOf(step['grid']);
    const block = dimOf(step['block']);
    if (!grid || !block) return;
    const kernel = kernels.find((k) => k['id'] === step['kernel']);
    const shared = step['sharedBytes'];
    out.push({
      stepIndex,
      kernelId: step['kernel'],
      entry: typeof kernel?.['entry'] === 'string' ? kernel['entry'] : step['kernel'],
      sourceName: typeof kernel?.['sourceName'] === 'string' ? kernel['sourceName'] : null,
      grid,
      block,
      sharedBytes: typeof shared === 'number' && Number.isInteger(shared) && shared >= 0 ? shared : 0,
    });
  });
  return out;
}

/** The launch a document's panel shows: the first that launches a kernel from that file, else the plan's first. */
export function launchForDocument(plan: unknown, documentName: string): PlanLaunch | null {
  const launches = planLaunches(plan);
  return launches.find((l) => l.sourceName === documentName) ?? launches[0] ?? null;
}

/** A Dim3 as the panel's field takes it: "64,32" (trailing 1s dropped), never the "(64,32)" of a label. */
export const dimInput = (d: Dim3): string => (d[2] !== 1 ? d.join(',') : d[1] !== 1 ? `${d[0]},${d[1]}` : String(d[0]));

export function formFromLaunch(launch: Pick<PlanLaunch, 'entry' | 'grid' | 'block' | 'sharedBytes'>): LaunchForm {
  return { kernel: launch.entry, grid: dimInput(launch.grid), block: dimInput(launch.block), smem: String(launch.sharedBytes) };
}

/** Dynamic shared memory as typed: a whole number of bytes that fits the launch's 32-bit field. */
export function parseSharedBytes(text: string): Result<number> {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed) || Number(trimmed) > 0xffffffff) return fail('Shared memory is a whole number of bytes (at most 4294967295).');
  return ok(Number(trimmed));
}

/** The panel's launch, parsed; the first field that does not parse says why. */
export function parseLaunchForm(form: LaunchForm): Result<{ grid: Dim3; block: Dim3; sharedBytes: number }> {
  const grid = parseDim3(form.grid, 'Grid');
  if (!grid.ok) return grid;
  const block = parseDim3(form.block, 'Block');
  if (!block.ok) return block;
  const shared = parseSharedBytes(form.smem);
  if (!shared.ok) return shared;
  return ok({ grid: grid.value, block: block.value, sharedBytes: shared.value });
}

/** A copy of the plan whose launch step holds the panel's grid, block and shared memory: what will run is what the panel shows. */
export function planWithLaunch(plan: unknown, stepIndex: number, form: LaunchForm): Result<unknown> {
  const launch = parseLaunchForm(form);
  if (!launch.ok) return launch;
  if (!isRecord(plan) || !Array.isArray(plan['steps']) || !isRecord(plan['steps'][stepIndex]) || plan['steps'][stepIndex]['op'] !== 'launch')
    return fail(`The plan has no launch at step ${stepIndex + 1}.`);
  const copy = JSON.parse(JSON.stringify(plan)) as { steps: Record<string, unknown>[] };
  const step = copy.steps[stepIndex]!;
  step['grid'] = [...launch.value.grid];
  step['block'] = [...launch.value.block];
  step['sharedBytes'] = launch.value.sharedBytes;
  return ok(copy);
}

/** A recorded step's label back into its launch: "launch addMatrices<<<(8,16), (64,32)>>>", "launch k<<<4, 256, 1024>>>". */
export function launchFromStepLabel(label: string): Pick<PlanLaunch, 'entry' | 'grid' | 'block' | 'sharedBytes'> | null {
  const m = /^launch (.+?)<<<(.+)>>>$/.exec(label.trim());
  if (!m) return null;
  const parts = m[2]!.match(/\([^)]*\)|\d+/g) ?? [];
  if (parts.length < 2 || parts.length > 3) return null;
  const dim = (text: string) => parseDim3(text.replace(/[()]/g, ''), 'dim');
  const grid = dim(parts[0]!);
  const block = dim(parts[1]!);
  if (!grid.ok || !block.ok) return null;
  return { entry: m[1]!, grid: grid.value, block: block.value, sharedBytes: parts[2] ? Number(parts[2]) : 0 };
}

/** A copy of the plan whose kernels from the named file hold the editor's text: the run compiles what is on screen. */
export function planWithDocumentSource(plan: unknown, documentName: string, text: string): unknown {
  if (!isRecord(plan) || !Array.isArray(plan['kernels'])) return plan;
  const copy = JSON.parse(JSON.stringify(plan)) as { kernels: unknown[] };
  for (const k of copy.kernels) if (isRecord(k) && k['sourceName'] === documentName) k['source'] = text;
  return copy;
}
