import { dirnameOf } from './paths';

export interface TabDocument {
  id: string;
  name: string;
  path: string | null;
}

/** A tab's label: the file's name, and for a name that several tabs share, the folder that tells it apart. */
export interface TabLabel {
  name: string;
  folder: string | null;
}

const folders = (doc: TabDocument): string[] =>
  doc.path
    ? dirnameOf(doc.path)
        .split(/[\\/]+/)
        .filter(Boolean)
    : [];

/**
 * As VS Code does: tabs whose files share a name show as much of their folders (from the end) as it takes
 * to tell them apart: "broken.cu  device-assert", "broken.cu  trap"; a document never saved says so.
 */
export function tabLabels(docs: TabDocument[]): Map<string, TabLabel> {
  const labels = new Map<string, TabLabel>();
  const byName = new Map<string, TabDocument[]>();
  for (const d of docs) byName.set(d.name, [...(byName.get(d.name) ?? []), d]);
  for (const group of byName.values()) {
    if (group.length === 1) {
      labels.set(group[0]!.id, { name: group[0]!.name, folder: null });
      continue;
    }
    const parts = group.map(folders);
    const saved = parts.filter((p) => p.length);
    // The last k folders; a path shorter than that in full, from the root.
    const shown = (p: string[], k: number) => (p.length > k ? p.slice(-k).join('/') : `/${p.join('/')}`);
    const deepest = Math.max(1, ...parts.map((p) => p.length));
    let depth = 1;
    while (depth < deepest && new Set(saved.map((p) => shown(p, depth).replace(/^\//, ''))).size < saved.length) depth++;
    group.forEach((d, i) => labels.set(d.id, { name: d.name, folder: d.path ? shown(parts[i]!, depth) : 'not saved' }));
  }
  return labels;
}
