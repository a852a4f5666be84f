import { joinTyped, stringifyTyped } from '../../core/api/typed-wire';

/** A value as it reaches the host from a reader process: JSON with its typed arrays as bytes beside it (core/api/typed-wire.ts). */
export function acrossReader<T>(value: T): T {
  const { text, refs, body } = stringifyTyped(value);
  return joinTyped(JSON.parse(text), refs, body) as T;
}
