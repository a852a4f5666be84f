/**
 * What nvcc says it can build for: `nvcc --list-gpu-code` (the real architectures it writes machine code, SASS,
 * for: sm_75, sm_90, …) and `nvcc --list-gpu-arch` (the virtual ones it writes PTX for: compute_75, …), one name a
 * line, as CUDA 11.0 and newer print them. Read as data: a line that is not a name is set aside, never trusted.
 */

/** Most architectures kept from one list (CUDA 13.0 lists 12). */
export const MAX_LISTED_ARCHS = 256;

/** The architectures a list names, in its order and each once ("sm_90" and "sm_90a" are both 90), and the lines that name none. */
export function parseNvccArchList(text: string, prefix: 'sm' | 'compute'): { archs: number[]; unreadable: string[] } {
  const name = new RegExp(`^${prefix}_(\\d{2,4})[a-z]?$`);
  const archs: number[] = [];
  const unreadable: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const m = name.exec(line);
    if (!m) {
      if (unreadable.length < 8) unreadable.push(line.slice(0, 200));
      continue;
    }
    const arch = Number(m[1]);
    if (!archs.includes(arch) && archs.length < MAX_LISTED_ARCHS) archs.push(arch);
  }
  return { archs, unreadable };
}
