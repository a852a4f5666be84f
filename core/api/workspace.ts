import { z } from 'zod';

/**
 * What the workbench remembers for a workspace beside its drafts: the device or profile launches are
 * checked against. Kept on the host, with the drafts: a browser's storage belongs to an origin, and serve's
 * origin changes with its port (a new one at each start, another through each SSH tunnel).
 */
export const workspaceSettingsSchema = z
  .object({
    /** A profiles.list id: "device:0", "shipped:nvidia-h200.json", "user:mine.json"; null before any choice. */
    profileId: z.string().min(1).max(300).nullable(),
    /** Re-run a run that fails under the compute-sanitizer tool its diagnosis names, without being asked. Absent: off. */
    autoSanitize: z.boolean().optional(),
  })
  .strict();
export type WorkspaceSettings = z.infer<typeof workspaceSettingsSchema>;

export const DEFAULT_WORKSPACE_SETTINGS: WorkspaceSettings = { profileId: null };
