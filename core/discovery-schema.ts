/**
 * The schemas of the doctor's checks and of a problem in words, apart from core/discovery.ts: a command that only
 * reports what it found (a diagnosis) then builds no schema when it starts.
 */
import * as z from 'zod';

import { DOCTOR_AREAS } from './discovery';

export const doctorCheckSchema = z.object({
  id: z.string(),
  status: z.enum(['ok', 'warn', 'fail', 'not-run']),
  title: z.string(),
  detail: z.string(),
  remedy: z.string().nullable(),
  area: z.enum(DOCTOR_AREAS).optional(),
  searched: z.array(z.string()).optional(),
});

/** A user-facing problem (core/discovery.ts Problem), as a message carries it. */
export const problemSchema = z.object({ title: z.string(), detail: z.string(), remedy: z.string(), searched: z.array(z.string()).optional() });
