import { readRunOutcomeInReader } from '../readers/open-in-reader';
import { listFolder, readTextFile, sniffFile, writeTextFile } from '../services/file-service';
import { readPlanFile, writeJsonFile, writeResultFile } from '../services/plan-files';
import { listProfiles } from '../services/profile-service';
import { listGallery, loadSample } from '../services/sample-service';
import type { HeldResults } from '../services/held-results';
import type { PathPolicy } from '../services/workspace-paths';
import { fullPathToWrite } from '../services/write-path';
import { type HandlerGroup, listSamples, userFile } from './handler-support';

/** Files the user names: sources, plans, results, the samples and the saved device profiles. The paths were confined to the host's policy before a handler sees them (main/request-paths.ts). */
export function fileHandlers(
  paths: PathPolicy,
  held: HeldResults,
): HandlerGroup<
  | 'files.read'
  | 'files.sniff'
  | 'files.write'
  | 'files.list'
  | 'samples.list'
  | 'profiles.list'
  | 'run.open'
  | 'run.save'
  | 'plans.read'
  | 'plans.write'
  | 'gallery.list'
  | 'gallery.load'
> {
  return {
    'files.read': ({ path }) => readTextFile(path),
    'files.sniff': ({ path }) => sniffFile(path),
    'files.write': ({ path, text, expectedMtimeMs }) => writeTextFile(fullPathToWrite(path), text, expectedMtimeMs),
    'files.list': ({ dir }) => listFolder(dir, paths),
    'samples.list': () => listSamples(),
    'profiles.list': () => listProfiles(),
    'run.open': ({ path }) => userFile(async () => held.holdOutcome(await readRunOutcomeInReader(path))),
    'run.save': ({ path, outcomeId }) => userFile(() => writeResultFile(fullPathToWrite(path), held.outcome(outcomeId, 'save it'))),
    'plans.read': ({ path }) => userFile(async () => ({ plan: (await readPlanFile(path, {}, paths)).plan, path })),
    'plans.write': ({ path, plan }) => userFile(() => writeJsonFile(fullPathToWrite(path), plan)),
    'gallery.list': () => userFile(async () => (await listGallery()).map((s) => ({ name: s.name, ...s.manifest }))),
    'gallery.load': ({ name, variant }) =>
      userFile(async () => {
        const s = await loadSample(name, variant);
        return { plan: s.plan, planPath: s.planPath, sourcePath: s.sourcePath };
      }),
  };
}
