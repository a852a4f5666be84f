import { z } from 'zod';

import { BUNDLE_SCHEMA } from './bundle-limits';

/** manifest.json, the first thing read from a bundle: what made it and what it holds. */
export const bundleManifestSchema = z
  .object({
    schema: z.number().int().min(1),
    createdAt: z.string().max(64),
    workbench: z.object({ version: z.string().max(64) }).strict(),
    /** Whether user and host names, home paths and GPU serials were hidden when it was written. */
    redacted: z.boolean().default(false),
    /** Entries by role: a plan, a run result, sources, and what export adds. Each named must exist in the zip. */
    contents: z
      .object({
        plan: z.string().max(1024).nullable().default(null),
        result: z.string().max(1024).nullable().default(null),
        sources: z.array(z.string().max(1024)).max(256).default([]),
        environment: z.string().max(1024).nullable().default(null),
        doctor: z.string().max(1024).nullable().default(null),
        devices: z.string().max(1024).nullable().default(null),
        sanitizer: z.string().max(1024).nullable().default(null),
        /** The standalone repro/ (repro.cu and its build files). */
        repro: z.array(z.string().max(1024)).max(16).default([]),
      })
      .strict(),
  })
  .strict();
export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** Every entry the manifest names, by role. */
export function namedEntries(manifest: BundleManifest): string[] {
  const c = manifest.contents;
  return [c.plan, c.result, c.environment, c.doctor, c.devices, c.sanitizer, ...c.sources, ...c.repro].filter((n): n is string => n !== null);
}

/** A newer schema is refused with what to do, not misread. */
export function schemaProblem(schema: number): string | null {
  return schema > BUNDLE_SCHEMA
    ? `it was made by a newer GPU Workbench (bundle schema ${schema}); this version reads schema ${BUNDLE_SCHEMA}: update the workbench to open it`
    : null;
}
