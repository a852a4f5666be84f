import type { StateCreator } from 'zustand';

import type { AppInfo, WorkbenchApi } from '../../core/api/channels';
import type { WorkbenchState } from './store';

export interface AppSlice {
  api: WorkbenchApi;
  info: AppInfo | null;
  loadInfo(): Promise<void>;
}

export const createAppSlice =
  (api: WorkbenchApi): StateCreator<WorkbenchState, [], [], AppSlice> =>
  (set) => ({
    api,
    info: null,
    loadInfo: async () => {
      try {
        set({ info: await api.invoke('app.info', {}) });
      } catch {
        // the devices view reports the connection problem
      }
    },
  });
