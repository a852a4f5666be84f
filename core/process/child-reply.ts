import * as z from 'zod';

/** A failure as it crosses a process boundary: the library and call that failed, the code and its name. */
export const childErrorSchema = z.object({ library: z.string(), api: z.string(), code: z.number(), name: z.string(), message: z.string() });

/**
 * The one reply envelope every child (runner, compile worker, sanitizer runner) sends: ready with its
 * status, ok with a request's result, or error (sticky: the child exits after sending it).
 */
export const childReplySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), status: z.custom<object>((v) => typeof v === 'object' && v !== null) }),
  z.object({ type: z.literal('ok'), id: z.number(), result: z.unknown() }),
  z.object({ type: z.literal('error'), id: z.number().nullable(), error: childErrorSchema, sticky: z.boolean().default(false) }),
]);
export type ChildReply = z.infer<typeof childReplySchema>;

/** A child's protocol: for each request type, the body the host sends (without id and type) and the result. */
export type ChildProtocol = Record<string, { request: object; result: unknown }>;
