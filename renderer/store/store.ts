import { create } from 'zustand';

import type { WorkbenchApi } from '../../core/api/channels';
import { createAppSlice, type AppSlice } from './app-slice';
import { createBundleSlice, type BundleSlice } from './bundle-slice';
import { createCheckSlice, type CheckSlice } from './check-slice';
import { createDevicesSlice, type DevicesSlice } from './devices-slice';
import { createDiagnoseSlice, type DiagnoseSlice } from './diagnose-slice';
import { createEditorSlice, type EditorSlice } from './editor-slice';
import { createExplainSlice, type ExplainSlice } from './explain-slice';
import { createGallerySlice, type GallerySlice } from './gallery-slice';
import { createKernelProfileSlice, type KernelProfileSlice } from './kernel-profile-slice';
import { createMemorySlice, type MemorySlice } from './memory-slice';
import { createRunSlice, type RunSlice } from './run-slice';
import { createSanitizerSlice, type SanitizerSlice } from './sanitizer-slice';

export type WorkbenchState = AppSlice &
  DevicesSlice &
  EditorSlice &
  RunSlice &
  SanitizerSlice &
  ExplainSlice &
  MemorySlice &
  BundleSlice &
  DiagnoseSlice &
  KernelProfileSlice &
  CheckSlice &
  GallerySlice;

/** One slice per file, combined here once. */
export const createWorkbenchStore = (api: WorkbenchApi) =>
  create<WorkbenchState>()((...a) => ({
    ...createAppSlice(api)(...a),
    ...createDevicesSlice(...a),
    ...createEditorSlice(...a),
    ...createRunSlice(...a),
    ...createSanitizerSlice(...a),
    ...createExplainSlice(...a),
    ...createMemorySlice(...a),
    ...createBundleSlice(...a),
    ...createDiagnoseSlice(...a),
    ...createKernelProfileSlice(...a),
    ...createCheckSlice(...a),
    ...createGallerySlice(...a),
  }));

export type WorkbenchStore = ReturnType<typeof createWorkbenchStore>;
