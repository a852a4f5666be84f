import * as z from 'zod';

import { FILE_KIND_PLACES, type FileKind } from '../workspace/file-kind';

/** How many opened files the Open dialog lists. */
export const MAX_RECENT_FILES = 10;

const recentFileSchema = z
  .object({
    path: z.string().min(1).max(4096),
    kind: z.enum(Object.keys(FILE_KIND_PLACES) as [FileKind, ...FileKind[]]),
  })
  .strict();
export type RecentFile = z.infer<typeof recentFileSchema>;

/**
 * The recent files as read from disk: each entry checked alone, and a bad one dropped, so one damaged entry
 * costs itself, not the list or the rest of the settings; at most MAX_RECENT_FILES, no path twice.
 */
const recentFilesSchema = z.preprocess((value) => {
  if (!Array.isArray(value)) return undefined;
  const seen = new Set<string>();
  return value
    .map((entry) => recentFileSchema.safeParse(entry))
    .flatMap((parsed) => (parsed.success && !seen.has(parsed.data.path) && seen.add(parsed.data.path) ? [parsed.data] : []))
    .slice(0, MAX_RECENT_FILES);
}, z.array(recentFileSchema).max(MAX_RECENT_FILES).optional());

/**
 * What the workbench remembers for a workspace beside its drafts: the device or profile launches are
 * checked against, and the files last opened. Kept on the host, with the drafts: a browser's storage belongs to an origin, and serve's
 * origin changes with its port (a new one at each start, another through each SSH tunnel).
 */
export const workspaceSettingsSchema = z
  .object({
    /** A profiles.list id: "device:0", "shipped:nvidia-h200.json", "user:mine.json"; null before any choice. */
    profileId: z.string().min(1).max(300).nullable(),
    /** Re-run a run that fails under the compute-sanitizer tool its diagnosis names, without being asked. Absent: off. */
    autoSanitize: z.boolean().optional(),
    /** The files last opened with Open… (any kind), newest first. Absent: none yet. */
    recentFiles: recentFilesSchema,
  })
  .strict();
export type WorkspaceSettings = z.infer<typeof workspaceSettingsSchema>;

export const DEFAULT_WORKSPACE_SETTINGS: WorkspaceSettings = { profileId: null };

/** `opened` put first in `recent`, its earlier entry dropped, the list kept to MAX_RECENT_FILES. */
export function withRecentFile(recent: readonly RecentFile[], opened: RecentFile): RecentFile[] {
  return [opened, ...recent.filter((r) => r.path !== opened.path)].slice(0, MAX_RECENT_FILES);
}
