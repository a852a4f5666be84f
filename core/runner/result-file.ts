/**
 * Why a JSON file the user opened as a run result is not one, in words: what it looks like instead and
 * what to do, never the schema checker's dump.
 */
export function describeNotAResult(value: unknown, path: string, problems: string[]): string {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (!record) {
    const kind = Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
    return `${path} is not a GPU Workbench run result: it holds ${kind}, where a result is an object with a status and a diagnosis. Open a file written by Save result (or by \`gpu-workbench run --json\`).`;
  }
  if ('steps' in record && 'kernels' in record && !('diagnosis' in record))
    return `${path} is a launch plan, not a run result. Load it with Load plan in the Run section, or run it with \`gpu-workbench run --plan ${path}\`.`;
  if ('device' in record && 'driverVersion' in record && !('diagnosis' in record))
    return `${path} is a device profile, not a run result. Shipped profiles are chosen under Device in the Launch panel.`;
  if (!('status' in record) && !('diagnosis' in record))
    return `${path} is not a GPU Workbench run result: it has neither a "status" nor a "diagnosis". Open a file written by Save result (or by \`gpu-workbench run --json\`).`;
  const shown = problems.slice(0, 3).join('; ');
  return `${path} is not a GPU Workbench run result that this version can read: ${shown}${problems.length > 3 ? `; and ${problems.length - 3} more` : ''}. It may be damaged, or written by another version: run the plan again and save its result.`;
}
