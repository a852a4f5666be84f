import { isAbsolute } from 'node:path';
import { ApiError } from '../../core/api/channels';
import { exportBundle, gatherBundle, previewOf } from '../bundle/bundle-service';
import { openBundleInReader } from '../readers/open-in-reader';
import { fullPathToWrite } from '../services/write-path';
import type { Workbench } from '../workbench';
import { type HandlerGroup, bundleRequest, userBundle } from './handler-support';

/** Diagnostic bundles: a preview, an export, a bundle opened read-only in a reader process. */
export function bundleHandlers(workbench: Pick<Workbench, 'compiler'>): HandlerGroup<'bundle.preview' | 'bundle.export' | 'bundle.open'> {
  return {
    'bundle.preview': (request, { signal }) =>
      userBundle(async () => previewOf(await gatherBundle(bundleRequest(request), { compiler: workbench.compiler }, { signal }), bundleRequest(request))),
    'bundle.export': (request, { signal, emit }) =>
      userBundle(() => exportBundle(fullPathToWrite(request.path), bundleRequest(request), { compiler: workbench.compiler }, { signal, onEvent: emit })),
    // Read into memory within the bundle limits; nothing is written, compiled or run.
    'bundle.open': ({ path }) => {
      if (!isAbsolute(path))
        throw new ApiError(
          `Give the bundle's full path (starting with /): "${path}" is relative to the folder the workbench host was started in (${process.cwd()}).`,
          'RELATIVE_PATH',
        );
      return userBundle(() => openBundleInReader(path));
    },
  };
}
