import type { WorkspaceSettings } from '../../core/api/workspace';
import type { Workbench } from '../workbench';
import type { HandlerGroup } from './handler-support';

/** What the host keeps for the UI: unsaved drafts and the workspace's settings. */
export function stateHandlers(
  workbench: Pick<Workbench, 'drafts' | 'workspace'>,
): HandlerGroup<'drafts.list' | 'drafts.save' | 'drafts.discard' | 'workspace.get' | 'workspace.set'> {
  return {
    'drafts.list': () => workbench.drafts.list(),
    'drafts.save': async (draft) => {
      await workbench.drafts.save(draft);
      return { saved: true as const };
    },
    'drafts.discard': async ({ id }) => {
      await workbench.drafts.discard(id);
      return { discarded: true as const };
    },
    'workspace.get': () => workbench.workspace.get(),
    // The schema has checked it (recentFiles entry by entry, so its declared input is unknown).
    'workspace.set': (change) => workbench.workspace.set(change as Partial<WorkspaceSettings>),
  };
}
