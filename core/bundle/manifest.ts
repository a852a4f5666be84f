import * as z from 'zod';

import { BUNDLE_SCHEMA, type BundleRole } from './bundle-limits';

const entry = z.string().max(1024);

/** manifest.json, the first thing read from a bundle: what made it and what it holds. */
export const bundleManifestSchema = z
  .object({
    schema: z.number().int().min(1),
    createdAt: z.string().max(64),
    workbench: z.object({ version: z.string().max(64) }).strict(),
    /** Whether user and host names, home paths and GPU serials were hidden when it was written. */
    redacted: z.boolean().default(false),
    /** Whether the kernels' sources went in (schema 2; a schema 1 bundle says so by its sources list). */
    sources: z.boolean().optional(),
    /**
     * Entries by role: a plan, a run result, sources, and what export adds. Each named must exist in the zip.
     * Roles added after schema 1 default to absent, so a schema 1 bundle reads as one that lacks them.
     */
    contents: z
      .object({
        plan: entry.nullable().default(null),
        result: entry.nullable().default(null),
        sources: z.array(entry).max(256).default([]),
        environment: entry.nullable().default(null),
        doctor: entry.nullable().default(null),
        devices: entry.nullable().default(null),
        sanitizer: entry.nullable().default(null),
        /** The standalone repro/ (repro.cu and its build files). */
        repro: z.array(entry).max(16).default([]),
        /** Schema 2: each kernel's compile (options, command, log, diagnostics) and where its PTX is. */
        compile: entry.nullable().default(null),
        /** Schema 2: the PTX of each kernel (ptx/<kernel>.ptx). */
        ptx: z.array(entry).max(256).default([]),
        /** Schema 2: the validator's findings for each launch of the plan. */
        validation: entry.nullable().default(null),
        /** Schema 2: device memory sampled through NVML while the run ran (a SampleSeries). */
        samples: entry.nullable().default(null),
        /** Schema 2: what compute-sanitizer itself wrote: its text, its XML reports (bounded). */
        sanitizerRaw: z.array(entry).max(64).default([]),
        /** Schema 3: a program's diagnosis (`gpu-workbench diagnose`), and the allocator history's snapshot it recorded. */
        diagnosis: entry.nullable().default(null),
        diagnosisSnapshot: entry.nullable().default(null),
        /** Schema 4: the kernel profile made with the run (core/kernel-profile/profile.ts). */
        profile: entry.nullable().default(null),
      })
      .strict(),
  })
  .strict();
export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** Every entry the manifest names, with its role (an entry named twice is here twice). */
export function roleEntries(manifest: BundleManifest): [string, BundleRole][] {
  const c = manifest.contents;
  const single = [
    'plan',
    'result',
    'environment',
    'doctor',
    'devices',
    'sanitizer',
    'compile',
    'validation',
    'samples',
    'diagnosis',
    'diagnosisSnapshot',
    'profile',
  ] as const;
  const lists = ['sources', 'repro', 'ptx', 'sanitizerRaw'] as const;
  return [
    ...single.flatMap((role) => (c[role] === null ? [] : [[c[role], role] as [string, BundleRole]])),
    ...lists.flatMap((role) => c[role].map((name) => [name, role] as [string, BundleRole])),
  ];
}

/** Every entry the manifest names, by role. */
export function namedEntries(manifest: BundleManifest): string[] {
  return roleEntries(manifest).map(([name]) => name);
}

/** A newer schema is refused with what to do, not misread. */
export function schemaProblem(schema: number): string | null {
  return schema > BUNDLE_SCHEMA
    ? `it was made by a newer GPU Workbench (bundle schema ${schema}); this version reads schema ${BUNDLE_SCHEMA}: update the workbench to open it`
    : null;
}
