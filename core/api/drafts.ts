import { z } from 'zod';

import { MAX_SOURCE_BYTES } from '../limits';

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
});
export type Draft = z.infer<typeof draftSchema>;
