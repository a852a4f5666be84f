import * as z from 'zod';

/** What bundle.preview answers and bundle.export streams and answers (core/api/channels.ts); made in main/bundle/bundle-service.ts. */

/** What a bundle would hold, exactly: its files with their sizes, the environment as it goes in, and what it lacks. */
export interface BundlePreview {
  files: { name: string; bytes: number }[];
  environment: Record<string, string>;
  redacted: boolean;
  sources: boolean;
  /** What the bundle will lack, one sentence each (no PTX for a kernel, no device profile, no samples). */
  notes: string[];
}

/** The export's steps: checking the request, the doctor, the device's profile, PTX, building the entries, writing the zip. */
export type BundlePhase = 'check' | 'doctor' | 'devices' | 'ptx' | 'pack' | 'write';

export type BundleExportEvent = { kind: 'phase'; phase: BundlePhase } | { kind: 'progress'; written: number; entries: number; totalEntries: number };

export interface BundleExportResult {
  path: string;
  bytes: number;
  files: { name: string; bytes: number }[];
  notes: string[];
}

const files = z.array(z.object({ name: z.string(), bytes: z.number().int().min(0) }));
export const bundlePreviewSchema = z.object({
  files,
  environment: z.record(z.string(), z.string()),
  redacted: z.boolean(),
  sources: z.boolean(),
  notes: z.array(z.string()),
});
export const bundleExportResultSchema = z.object({ path: z.string(), bytes: z.number().int().min(0), files, notes: z.array(z.string()) });
// What passes the schemas is what the types say.
const _isPreview = (p: z.infer<typeof bundlePreviewSchema>): BundlePreview => p;
const _isResult = (r: z.infer<typeof bundleExportResultSchema>): BundleExportResult => r;
void [_isPreview, _isResult];

export const BUNDLE_PHASE_WORDS: Record<BundlePhase, string> = {
  check: 'Checking the run and its plan',
  doctor: 'Asking the doctor about this machine',
  devices: 'Finding the profile of the run’s device',
  ptx: 'Getting each kernel’s PTX',
  pack: 'Putting the files together',
  write: 'Writing the zip',
};
