import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { describeGroup } from '../../core/sanitizer/group';

/** A sanitizer run as a person reads it: the verdict, one line per place, the program's own output. */
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
  if (report.outputDroppedBytes) lines.push(`  (${report.outputDroppedBytes.toLocaleString('en-US')} bytes of output in the middle were not kept)`);
  if (report.groups.length) {
    lines.push('', 'Findings, one line per place:');
    report.groups.slice(0, shownGroups).forEach((g, i) => {
      lines.push(`${String(i + 1).padStart(3)}. ${describeGroup(g, report.summary)}`);
      if (g.addressNamed) lines.push(`     The address: ${g.addressNamed}.`);
    });
    if (report.groups.length > shownGroups) lines.push(`     … and ${report.groups.length - shownGroups} more places (--json has them all)`);
  }
  lines.push('', `${report.verdict === 'clean' ? '' : report.verdict === 'found' ? '✗ ' : '! '}${report.headline}`);
  lines.push(...report.details.map((d) => `  ${d}`));
  return lines.join('\n');
}
