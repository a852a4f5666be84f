import { thousands } from '../../core/format';
import type { FindingGroup } from '../../core/sanitizer/findings';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { describeFollowers, describeFrame, describeGroup } from '../../core/sanitizer/group';

/**
 * A sanitizer run as a person reads it: the program's own output, one line per place, the verdict. Memory an
 * allocator held at exit is not a place: the details under the verdict say it apart, and why it is not counted.
 */
export function renderSanitize(report: SanitizeReport, shownGroups = 20): string {
  const lines: string[] = [];
  lines.push(`${report.tool} (compute-sanitizer ${report.sanitizer.version ?? '?'}): ${report.command.join(' ')}`);
  lines.push(`  in ${report.cwd}; ${(report.durationMs / 1000).toFixed(1)} s; exit ${report.exitCode ?? report.signal ?? '?'}`);
  if (report.programOutput.trim()) {
    lines.push('', 'The program printed:');
    lines.push(
      ...report.programOutput
        .trimEnd()
        .split('\n')
        .slice(-40)
        .map((l) => `  | ${l}`),
    );
  }
  if (report.outputDroppedBytes) lines.push(`  (${thousands(report.outputDroppedBytes)} bytes of output in the middle were not kept)`);
  if (report.groups.length) {
    lines.push('', 'Findings, one line per place:');
    report.groups.slice(0, shownGroups).forEach((g, i) => {
      lines.push(`${String(i + 1).padStart(3)}. ${describeGroup(g, report.summary)}`, ...groupDetails(g).map((d) => `     ${d}`));
    });
    if (report.groups.length > shownGroups) lines.push(`     … and ${report.groups.length - shownGroups} more places (--json has them all)`);
  }
  lines.push('', `${report.verdict === 'clean' ? '' : report.verdict === 'found' ? '✗ ' : '! '}${report.headline}`);
  lines.push(...report.details.map((d) => `  ${d}`));
  return lines.join('\n');
}

/** The lines under a group's sentence: the buffer an address is in, CuPy's copy of the kernel, the launching line, what followed. */
function groupDetails(g: FindingGroup): string[] {
  const out: string[] = [];
  if (g.addressNamed) out.push(`The address: ${g.addressNamed}.`);
  const mapped = [g.sourceMapped, g.raceSourceMapped?.first, g.raceSourceMapped?.second].filter((m) => !!m);
  const copies = [...new Set(mapped.map((m) => `${m.cachePath}:${m.cacheLine}`))];
  if (copies.length) out.push(`CuPy compiled it as ${copies.join(', ')}.`);
  if (g.where !== null && g.userFrame !== null && g.example.hostStackAt === 'kernel launch time') out.push(`Launched from ${describeFrame(g.userFrame)}.`);
  const followers = describeFollowers(g);
  if (followers) out.push(followers);
  return out;
}
