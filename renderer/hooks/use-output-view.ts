import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { WorkbenchStore } from '../store/store';

export const OUTPUT_VIEWS = ['Problems', 'Run', 'Check', 'Profile', 'Memory', 'Sanitizer', 'Log', 'PTX', 'SASS', 'Command'] as const;
export type OutputView = (typeof OUTPUT_VIEWS)[number];

/**
 * The output panel's tab, and what brings one forward: a run result (or an opened one) the Run tab, unless Profile
 * made it; a profile, a sanitizer report, Check everything, a memory file or monitoring their own tab — each when it
 * starts, answers or fails. Leaving the Memory tab gives its timeline's room back.
 */
export function useOutputView(store: WorkbenchStore, onMemoryHeight?: (px: number | null) => void): [OutputView, (view: OutputView) => void] {
  const [view, setView] = useState<OutputView>('Problems');
  const outcome = useStore(store, (s) => s.outcome);
  const refused = useStore(store, (s) => s.runRefused);
  const profiled = useStore(store, (s) => s.outcomeOrigin?.profiled ?? false);
  useEffect(() => {
    if ((outcome && !profiled) || refused) setView('Run');
  }, [outcome, refused]);
  const profileSeq = useStore(store, (s) => s.kernelProfileSeq);
  const sanitizeSeq = useStore(store, (s) => s.sanitizeSeq);
  const checkSeq = useStore(store, (s) => s.checkSeq);
  const memorySeq = useStore(store, (s) => s.memorySeq);
  useEffect(() => {
    if (profileSeq > 0) setView('Profile');
  }, [profileSeq]);
  useEffect(() => {
    if (sanitizeSeq > 0) setView('Sanitizer');
  }, [sanitizeSeq]);
  useEffect(() => {
    if (checkSeq > 0) setView('Check');
  }, [checkSeq]);
  useEffect(() => {
    if (memorySeq > 0) setView('Memory');
  }, [memorySeq]);
  useEffect(() => {
    if (view !== 'Memory') onMemoryHeight?.(null);
  }, [view, onMemoryHeight]);
  return [view, setView];
}
