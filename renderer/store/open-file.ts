import { withRecentFile, type RecentFile } from '../../core/api/workspace';
import { FILE_KIND_PLACES, type FileKind } from '../../core/workspace/file-kind';
import { dirnameOf } from '../../core/workspace/paths';
import type { WorkbenchStore } from './store';

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The folder the last file was opened from, by any dialog: every file box starts there (else in app.info's
 * startDir), so a person who went to a folder once does not walk there again in the next dialog.
 */
let lastFolder: string | null = null;

export const rememberFolderOf = (path: string): void => {
  lastFolder = dirnameOf(path);
};

/** Where a file box starts: the last folder a file was opened from, else the host's start folder. */
export const startFolder = (store: WorkbenchStore): string => lastFolder ?? store.getState().info?.startDir ?? '/';

/** What a typed relative path is resolved against: the folder the host runs in (serve's cwd), as the host resolves it. */
export const workFolder = (store: WorkbenchStore): string => store.getState().info?.workDir ?? store.getState().info?.startDir ?? '/';

/** The recent files, as kept with the workspace settings (none when they cannot be read). */
export const recentFiles = (store: WorkbenchStore): Promise<RecentFile[]> =>
  store
    .getState()
    .api.invoke('workspace.get', {})
    .then(
      (s) => s.recentFiles ?? [],
      () => [],
    );

/** `opened` first in the recent files, kept with the workspace settings; a failure to keep it costs only the list. */
export async function rememberRecent(store: WorkbenchStore, opened: RecentFile): Promise<void> {
  rememberFolderOf(opened.path);
  try {
    const recent = await recentFiles(store);
    await store.getState().api.invoke('workspace.set', { recentFiles: withRecentFile(recent, opened) });
  } catch {
    // The file is open; only the list of recent files is not updated.
  }
}

/** What the caller shows next, where the store cannot: a bundle's view, the Diagnose view. */
export interface OpenHooks {
  onBundle?: () => void;
  onDiagnosis?: () => void;
}

/** Why a kind that has no place to open says so, in words. */
const NO_PLACE: Partial<Record<FileKind, (path: string) => string>> = {
  binary: (path) =>
    `${path} is a binary file that no view of the workbench reads. Open a source (.cu), a launch plan, result or kernel profile (.json), a sanitizer report (.xml), a PyTorch snapshot (.pickle) or a bundle (.zip).`,
};

/**
 * The text compute-sanitizer printed: with its XML when that sits beside it (report.xml.txt → report.xml), else on its
 * own, its findings read from the text.
 */
async function openSanitizerText(store: WorkbenchStore, path: string): Promise<string | null> {
  const xml = path.replace(/\.(txt|log)$/i, '');
  const beside =
    xml !== path
      ? await store
          .getState()
          .api.invoke('files.sniff', { path: xml })
          .catch(() => null)
      : null;
  return store.getState().openSanitizerReport(beside?.kind === 'sanitizer-xml' ? beside.path : null, path);
}

/** Opens `full` (a sniffed `kind`) where it belongs; null when it opened, else why not. */
async function openAs(store: WorkbenchStore, full: string, kind: FileKind, hooks: OpenHooks): Promise<string | null> {
  const s = store.getState();
  switch (kind) {
    case 'source':
    case 'json':
      return (await s.openPath(full)) ? null : (store.getState().notice?.text ?? `${full} could not be opened.`);
    case 'plan':
      return s.openPlanFile(full).then(
        () => null,
        (error: unknown) => message(error),
      );
    case 'result':
      await s.openOutcome(full);
      return store.getState().runError;
    case 'diagnosis': {
      const failed = await s.openDiagnosis(full);
      if (!failed) hooks.onDiagnosis?.();
      return failed;
    }
    case 'sanitizer-xml':
      return s.openSanitizerReport(full, null);
    case 'profile':
      return s.openKernelProfile(full);
    case 'sanitizer-text':
      return openSanitizerText(store, full);
    case 'snapshot':
    case 'trace':
      return s.openMemoryFile(full, 'file');
    case 'bundle': {
      const failed = await s.openBundle(full);
      if (!failed) hooks.onBundle?.();
      return failed;
    }
    default:
      return NO_PLACE[kind]?.(full) ?? `${full} cannot be opened here.`;
  }
}

/**
 * Open…: what the file is, told by the host from its first bytes (files.sniff), then opened where it belongs: a
 * source in the editor, a plan in the Run section, a result in the Run tab, a sanitizer report in the Sanitizer tab,
 * a kernel profile in the Profile tab (and on its file's lines), a snapshot or a Chrome trace in the Memory tab, a bundle in
 * its view, a diagnosis in the Diagnose view. A result is never an editor
 * tab (so it never comes back as one after a reload). Null when it opened, else why not, in words.
 */
export async function openAnyFile(store: WorkbenchStore, path: string, hooks: OpenHooks = {}): Promise<string | null> {
  let sniffed: { path: string; kind: FileKind };
  try {
    sniffed = await store.getState().api.invoke('files.sniff', { path });
  } catch (error) {
    return message(error);
  }
  const failed = await openAs(store, sniffed.path, sniffed.kind, hooks);
  if (!failed) await rememberRecent(store, { path: sniffed.path, kind: sniffed.kind });
  return failed;
}

/** A recent file's line in the Open dialog: its name's kind, in words. */
export const kindWords = (kind: FileKind): string => FILE_KIND_PLACES[kind];
