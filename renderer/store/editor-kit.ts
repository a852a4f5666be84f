import type { StateCreator } from 'zustand';

import type { EditorSlice } from './editor-slice';
import type { WorkbenchState } from './store';

/** What the editor slice's groups of actions share: the store's set and get, a new document's id, an error's words, the debounce. */
export type EditorSet = Parameters<StateCreator<WorkbenchState, [], [], EditorSlice>>[0];
export type EditorGet = () => WorkbenchState;

export const newId = () => Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
export const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

const timers = new Map<string, ReturnType<typeof setTimeout>>();
/** Runs `run` after `ms`, unless called again with the same key first (a draft to keep, a compile to start). */
export const debounce = (key: string, ms: number, run: () => void) => {
  clearTimeout(timers.get(key));
  timers.set(key, setTimeout(run, ms));
};
/** Calls off what waits under the key. */
export const cancelDebounce = (key: string) => clearTimeout(timers.get(key));
