import * as z from 'zod';

import { MAX_SOURCE_BYTES } from '../limits';
import { schemaFor } from './typed-schema';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../plan/plan-schema';

/**
 * The plan attached to a document (a sample's, a plan file's, a bundle's copy), kept beside it: a reload or a
 * restart brings back the plan that would run and the launch panel as typed, or says why it could not.
 */
export const keptPlanSchema = z
  .object({
    /** As the Run section names it: "block-too-large (broken)", or the plan file's path. */
    label: z.string().min(1).max(4096),
    planPath: z.string().max(4096).nullable(),
    sourcePaths: z.array(z.string().max(4096)).max(16),
    /**
     * The plan as edited in the Run section, as large as a plan file may be; checked against the plan schema when it
     * comes back (never trusted), so that a plan not valid yet is kept too and its problem said on return.
     */
    plan: z.unknown().refine((plan) => (JSON.stringify(plan) ?? '').length <= MAX_SOURCE_BYTES, 'a plan kept with its file is at most 16 MiB'),
    /** The launch step the launch panel shows (a plan launching a kernel twice, or a step moved); absent in drafts kept before steps could move. */
    launchStep: z.number().int().min(0).max(10_000).nullable().optional(),
    /** The launch panel's fields as typed (a half-typed value stays as it was). */
    launch: z.object({ kernel: z.string().max(1024), grid: z.string().max(256), block: z.string().max(256), smem: z.string().max(256) }).strict(),
  })
  .strict();
export type KeptPlan = z.infer<typeof keptPlanSchema>;

/** An open editor document as persisted between runs of the app. */
export const draftSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  /** The file it belongs to; null for a document never saved. */
  path: z.string().max(4096).nullable(),
  name: z.string().min(1).max(256),
  text: z.string().max(MAX_SOURCE_BYTES),
  /** The text as last saved (or opened): text !== savedText means unsaved edits. */
  savedText: z.string().max(MAX_SOURCE_BYTES).nullable(),
  savedMtimeMs: z.number().nullable(),
  order: z.number().int().min(0).max(10_000),
  /** The plan attached to it, if any. */
  plan: keptPlanSchema.nullable().optional(),
});
export type Draft = z.infer<typeof draftSchema>;

/** A plan that came back whole: the plan schema's own parse of it. */
export type RestoredPlan = Omit<KeptPlan, 'plan'> & { plan: LaunchPlan };

/** A draft as it comes back: its plan checked, or dropped with the reason (the file's text is never lost for its plan). */
export type RestoredDraft = Omit<Draft, 'plan'> & { plan?: RestoredPlan | null; planProblem?: string };

/** What drafts.list answers: each draft, its plan whole (checked by the plan schema) or dropped with why. */
export const restoredDraftSchema = schemaFor<RestoredDraft>()(
  draftSchema.omit({ plan: true }).extend({
    plan: keptPlanSchema.extend({ plan: launchPlanSchema }).nullable().optional(),
    planProblem: z.string().optional(),
  }),
);

/**
 * A draft read back from the state folder, which is data from outside like any other: the draft checked, then its
 * plan checked on its own with the plan schema. Null when the draft itself is not one.
 */
export function restoreDraft(raw: unknown): RestoredDraft | null {
  const draft = draftSchema.safeParse(raw);
  if (!draft.success) {
    // A plan that is not even shaped as one must not cost the file its text.
    const bare = draftSchema.safeParse(typeof raw === 'object' && raw !== null ? { ...raw, plan: null } : raw);
    if (!bare.success) return null;
    return { ...bare.data, plan: null, planProblem: describeIssues(draft.error) };
  }
  const { plan: kept, ...rest } = draft.data;
  if (!kept) return rest;
  const plan = launchPlanSchema.safeParse(kept.plan);
  if (!plan.success) return { ...rest, plan: null, planProblem: describeIssues(plan.error) };
  return { ...rest, plan: { ...kept, plan: plan.data } };
}
