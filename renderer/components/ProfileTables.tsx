import type { Profile } from '../../core/kernel-profile/profile';
import type { ProfileFinding } from '../../core/kernel-profile/profile-findings';
import { accessWords, kernelFigures, lineRows, orderedFindings, type AccessCell, type LineRow } from '../../core/kernel-profile/profile-view';
import { thousands } from '../../core/format';
import { Prose } from './Prose';

/** Opens the profile's file at a line. */
type OpenLine = (line: number) => void;

function LineLink({ line, open, fileName }: { line: number; open: OpenLine; fileName: string }) {
  return (
    <button className="link mono" onClick={() => open(line)} title={`Open ${fileName} at line ${line}`} data-testid="profile-line-link">
      {fileName}:{line}
    </button>
  );
}

/** A finding's severity and headline; one about a line opens it, as a sanitizer finding's row does. */
function FindingHead({ finding: f, open, fileName }: { finding: ProfileFinding; open: OpenLine; fileName: string }) {
  const head = (
    <span className="finding-head">
      <span className={f.severity === 'problem' ? 'status-fail' : 'muted'}>{f.severity === 'problem' ? 'problem' : 'note'}</span> <Prose text={f.headline} />
    </span>
  );
  if (f.line === null) return <div className="finding-main">{head}</div>;
  const line = f.line;
  return (
    <button className="finding-main" onClick={() => open(line)} title={`Open ${fileName} at line ${line}`} data-testid="profile-finding-open">
      {head}
    </button>
  );
}

/** What the numbers mean, the problems (what to fix) first. */
export function ProfileFindings({ profile, open, fileName }: { profile: Profile; open: OpenLine; fileName: string }) {
  const findings = orderedFindings(profile).filter((f) => f.id !== 'no-counters');
  if (!findings.length) return null;
  return (
    <ul className="findings profile-findings" aria-label="What the profile says" data-testid="profile-findings">
      {findings.map((f: ProfileFinding, i) => (
        <li key={i} className={`finding finding-${f.severity === 'problem' ? 'error' : 'info'}`} data-testid="profile-finding" data-id={f.id}>
          <FindingHead finding={f} open={open} fileName={fileName} />
          <p className="finding-meta">
            <Prose text={f.detail} />
          </p>
        </li>
      ))}
    </ul>
  );
}

/** The kernel's figures, each beside what it is measured against. */
export function ProfileFigures({ profile }: { profile: Profile }) {
  const figures = kernelFigures(profile);
  if (!figures.length) return null;
  return (
    <table className="profile-figures" data-testid="profile-figures">
      <caption>The kernel</caption>
      <tbody>
        {figures.map((f) => (
          <tr key={f.name} data-name={f.name}>
            <th scope="row">{f.name}</th>
            <td className="mono">{f.value}</td>
            <td className="muted">{f.beside}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Access({ cell, bad }: { cell: AccessCell | null; bad: boolean }) {
  if (!cell) return <td className="muted">—</td>;
  return (
    <td className={bad ? 'status-fail' : undefined} title={`${thousands(cell.requests)} requests`}>
      {accessWords(cell)}
      {bad ? ' (uncoalesced)' : ''}
    </td>
  );
}

function LineRowView({ row, open, fileName }: { row: LineRow; open: OpenLine; fileName: string }) {
  return (
    <tr data-testid="profile-line" data-line={row.line} className={row.uncoalesced.length ? 'profile-line-uncoalesced' : undefined}>
      <td>
        <LineLink line={row.line} open={open} fileName={fileName} />
      </td>
      <td className="profile-share">
        <span className={`profile-heat profile-heat-${row.heat}`} aria-hidden="true" /> {(row.share * 100).toFixed(1)}%
      </td>
      <Access cell={row.loads} bad={row.uncoalesced.includes('loads')} />
      <Access cell={row.stores} bad={row.uncoalesced.includes('stores')} />
      <td>{row.stalls.length ? row.stalls.map((s) => `${(s.share * 100).toFixed(0)}% ${s.words}`).join('; ') : <span className="muted">—</span>}</td>
    </tr>
  );
}

/** A row per source line: its share of the samples, sectors per request of its loads and stores beside the ideal, where its warps wait. */
export function ProfileLines({ profile, open, fileName }: { profile: Profile; open: OpenLine; fileName: string }) {
  const rows = lineRows(profile);
  if (!rows.length) return null;
  return (
    <table className="profile-lines" data-testid="profile-lines">
      <caption>By source line (each opens the editor there)</caption>
      <thead>
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Samples</th>
          <th scope="col">Load sectors per request</th>
          <th scope="col">Store sectors per request</th>
          <th scope="col">Where its warps wait</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <LineRowView key={r.line} row={r} open={open} fileName={fileName} />
        ))}
      </tbody>
    </table>
  );
}
