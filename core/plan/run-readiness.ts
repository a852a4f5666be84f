/** What Run needs before it may start, and the reasons it may not, in the order a person fixes them. */
export interface RunReadinessInput {
  /** The editor's file as it is now: compiled, still compiling, or failing. */
  compile: 'ok' | 'compiling' | 'failed' | 'none';
  documentName: string;
  /** Why no plan can be built (a field that does not parse, no kernel yet); null when there is one. */
  planProblem: string | null;
  /** The validator's errors for the plan's launches against the chosen device or profile. */
  refusals: string[];
  /** The validator's errors for the plan's steps out of order: a buffer used before it is allocated (none when absent). */
  orderRefusals?: string[];
  /** The validator's errors for the plan's buffers against the device's memory and the host's (none when absent). */
  memoryRefusals?: string[];
  deviceLabel: string | null;
  /** null while the devices are being looked for; otherwise whether there is one, and why not. */
  gpu: { present: true } | { present: false; reason: string } | null;
}

/** One reason Run is off, with the details that belong to it (each finding of a launch that would fail). */
export interface RunBlocker {
  reason: string;
  details: string[];
}

export function runBlockers(input: RunReadinessInput): RunBlocker[] {
  const out: RunBlocker[] = [];
  const say = (reason: string, details: string[] = []) => out.push({ reason, details });
  if (input.compile === 'failed') say(`${input.documentName} does not compile: fix the errors under Problems first.`);
  if (input.planProblem) say(input.planProblem);
  if (input.refusals.length) say(`The launch would fail${input.deviceLabel ? ` on ${input.deviceLabel}` : ''}:`, input.refusals);
  if (input.orderRefusals?.length) say('The plan uses a buffer where no step has allocated it:', input.orderRefusals);
  if (input.memoryRefusals?.length)
    say(
      `The plan asks for more memory than there is${input.deviceLabel ? ` (checked against ${input.deviceLabel} and this machine)` : ''}:`,
      input.memoryRefusals,
    );
  if (input.gpu === null) say('Looking for a CUDA device…');
  else if (!input.gpu.present)
    say(
      `Run needs an NVIDIA GPU, and this machine has none: ${input.gpu.reason} Compiling, checking launches against a profile and opening recorded results still work.`,
    );
  return out;
}

/**
 * Why Profile is off: Run's reasons but the GPU's (a plan that cannot run cannot be profiled), a plan that launches
 * no kernel, and the GPU's in Profile's words, with what works without one: a profile recorded elsewhere opens here.
 */
export function profileBlockers(input: RunReadinessInput, launches: number | null): RunBlocker[] {
  const out = runBlockers({ ...input, gpu: input.gpu && { present: true } });
  if (launches === 0) out.push({ reason: 'The plan launches no kernel: there is nothing to profile.', details: [] });
  if (input.gpu && !input.gpu.present)
    out.push({
      reason: `Profile runs the launch under Nsight Compute on an NVIDIA GPU, and this machine has none: ${input.gpu.reason} A profile recorded on a GPU machine (\`gpu-workbench profile --save\`, or one in a bundle) opens here: use Open…`,
      details: [],
    });
  return out;
}

/** The reasons as plain lines (a tooltip, a note). */
export const blockerLines = (blockers: RunBlocker[]): string[] => blockers.flatMap((b) => [b.reason, ...b.details.map((d) => `  ${d}`)]);
