import { isAbsolute } from 'node:path';

import { ApiError } from '../../core/api/channels';

/**
 * A write from the UI names its full path: a relative one would land in whatever folder the host was
 * started in, which the person at the browser cannot see.
 */
export function fullPathToWrite(path: string): string {
  if (isAbsolute(path)) return path;
  throw new ApiError(
    `Give a full path to save to (starting with /): "${path}" is relative, and would be written into the folder the workbench host was started in (${process.cwd()}).`,
    'RELATIVE_PATH',
  );
}
