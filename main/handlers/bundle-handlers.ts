import { isAbsolute } from 'node:path';
import { ApiError } from '../../core/api/channels';
import { exportBundle, gatherBundle, previewOf } from '../bundle/bundle-service';
import { openBundleInReader } from '../readers/open-in-reader';
import { fullPathToWrite } from '../services/write-path';
import type { HeldResults } from '../services/held-results';
import type { Workbench } from '../workbench';
import { type HandlerGroup, bundleRequest, userBundle } from './handler-support';

/** Diagnostic bundles: a preview, an export, a bundle opened read-only in a reader process. */
export function bundleHandlers(workbench: Pick<Workbench, 'compiler'>, held: HeldResults): HandlerGroup<'bundle.preview' | 'bundle.export' | 'bundle.open'> {
  return {
    'bundle.preview': (request, { signal }) =>
      userBundle(async () => {
        const asked = bundleRequest(request, held);
        return previewOf(await gatherBundle(asked, { compiler: workbench.compiler }, { signal }), asked);
      }),
    'bundle.export': (request, { signal, emit }) =>
      userBundle(() => exportBundle(fullPathToWrite(request.path), bundleRequest(request, held), { compiler: workbench.compiler }, { signal, onEvent: emit })),
    // Read into memory within the bundle limits; nothing is written, compiled or run.
    'bundle.open': ({ path }) => {
      if (!isAbsolute(path))
        throw new ApiError(
          `Give the bundle's full path (starting with /): "${path}" is relative to the folder the workbench host was started in (${process.cwd()}).`,
          'RELATIVE_PATH',
        );
      return userBundle(async () => {
        const { outcome, ...view } = await openBundleInReader(path);
        return { ...view, outcome: outcome && held.holdOutcome(outcome), timelineIds: held.holdTimelines(view.timelines) };
      });
    },
  };
}
