import { z } from 'zod';

import { BUNDLE_SCHEMA } from './bundle-limits';

/** manifest.json, the first thing read from a bundle: what made it and what it holds. */
export const bundleManifestSchema = z
  .object({
    schema: z.number().int().min(1),
    createdAt: z.string().max(64),
    workbench: z.object({ version: z.string().max(64) }).strict(),
    /** Entries by role: a plan, a run result, sources. Each must exist in the zip. */
    contents: z
      .object({
        plan: z.string().max(1024).nullable().default(null),
        result: z.string().max(1024).nullable().default(null),
        sources: z.array(z.string().max(1024)).max(256).default([]),
      })
      .strict(),
  })
  .strict();
export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** A newer schema is refused with what to do, not misread. */
export function schemaProblem(schema: number): string | null {
  return schema > BUNDLE_SCHEMA
    ? `it was made by a newer GPU Workbench (bundle schema ${schema}); this version reads schema ${BUNDLE_SCHEMA}: update the workbench to open it`
    : null;
}
