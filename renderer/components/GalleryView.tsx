import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { Gallery } from '../store/gallery-slice';
import type { WorkbenchStore } from '../store/store';
import { focusEditorSoon } from './EditorPane';

/** The failure gallery: each class of failure with its expected diagnosis; opens into the editor and the run form. */
export function GalleryView({ store, onOpened }: { store: WorkbenchStore; onOpened: () => void }) {
  const listGallery = useStore(store, (s) => s.listGallery);
  const [gallery, setGallery] = useState<Gallery | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    listGallery().then(setGallery, (e: Error) => setError(e.message));
  }, [listGallery]);
  const open = async (name: string, variant: 'broken' | 'fixed') => {
    try {
      if (!(await store.getState().openGallerySample(name, variant))) return;
      // The view this button was in goes away: the focus goes where the person works next, the sample's file.
      focusEditorSoon();
      onOpened();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <main className="gallery" data-testid="gallery">
      <h2>Failure gallery</h2>
      <p className="muted">Each sample has a broken and a fixed kernel, a launch plan, and the diagnosis the broken one must produce.</p>
      {error && <p className="status-fail">{error}</p>}
      {gallery?.map((s) => (
        <article key={s.name} data-testid={`sample-${s.name}`}>
          <h3>{s.title}</h3>
          <p>{s.summary}</p>
          <p className="muted mono">expect: {[s.expect.broken.kind, s.expect.broken.error, s.expect.broken.kernel].filter(Boolean).join(' · ')}</p>
          <button onClick={() => void open(s.name, 'broken')} aria-label={`Open broken: ${s.title}`}>
            Open broken
          </button>{' '}
          <button onClick={() => void open(s.name, 'fixed')} aria-label={`Open fixed: ${s.title}`}>
            Open fixed
          </button>
        </article>
      ))}
    </main>
  );
}
