import type { StateCreator } from 'zustand';

import type { ChannelResponse } from '../../core/api/channels';
import type { WorkbenchState } from './store';

export type Gallery = ChannelResponse<'gallery.list'>;

/** The shipped samples: the failure gallery, and the sources the Open dialog lists. Each rejects with the host's words. */
export interface GallerySlice {
  /** The samples' sources (folder/file.cu), for Open…. */
  listSamples(): Promise<{ name: string; path: string }[]>;
  listGallery(): Promise<Gallery>;
  /** Opens a sample's kernel file with its plan attached to it (its launch in that file's panel); false when the file did not open (a notice says why). */
  openGallerySample(name: string, variant: 'broken' | 'fixed'): Promise<boolean>;
}

export const createGallerySlice: StateCreator<WorkbenchState, [], [], GallerySlice> = (_set, get) => ({
  listSamples: () => get().api.invoke('samples.list', {}),
  listGallery: () => get().api.invoke('gallery.list', {}),
  openGallerySample: async (name, variant) => {
    const loaded = await get().api.invoke('gallery.load', { name, variant });
    const docId = await get().openPath(loaded.sourcePath);
    if (!docId) return false;
    // The plan belongs to the sample's kernel file: its launch fills that file's launch panel.
    get().attachPlan(docId, { label: `${name} (${variant})`, plan: loaded.plan, planPath: loaded.planPath, sourcePaths: [loaded.sourcePath] });
    return true;
  },
});
