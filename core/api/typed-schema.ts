import * as z from 'zod';

/** The fields of T that the schema S does not name: zod drops (and never checks) a field it does not name. */
type Unnamed<T, S extends z.ZodType> = Exclude<keyof T, keyof z.output<S>>;

/**
 * A schema for a type written by hand (an interface the code uses everywhere): TypeScript checks that what the schema
 * passes is a T and that it names every field of T, and those who read it see T itself.
 */
export const schemaFor =
  <T>() =>
  <S extends z.ZodType<T>>(schema: Unnamed<T, S> extends never ? S : { unnamed: Unnamed<T, S> }): z.ZodType<T> =>
    schema as S;

const isRecord = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A T as the reader of such files from outside checks it (a saved result, a bundle's entries): the value must pass the
 * reader's schema, whose problems are named by path, and is typed as T, which that schema describes as far as the
 * views read it.
 */
export const readAs = <T>(what: string, reader: z.ZodType) =>
  z.custom<T>(isRecord, { message: `expected ${what} (an object)` }).superRefine((value, context) => {
    const read = reader.safeParse(value);
    if (!read.success) for (const issue of read.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  });
