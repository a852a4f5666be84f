import type { StateCreator } from 'zustand';

import type { WorkbenchState } from './store';

/** The Explain view's paste, kept in the store so that it survives a switch to another view and back. */
export interface ExplainSlice {
  explainText: string;
  setExplainText(text: string): void;
}

export const createExplainSlice: StateCreator<WorkbenchState, [], [], ExplainSlice> = (set) => ({
  explainText: '',
  setExplainText: (explainText) => set({ explainText }),
});
