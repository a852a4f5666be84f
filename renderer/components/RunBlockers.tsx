import { Prose } from './Prose';

/** Why a run cannot start, each reason with its details: the same list before Run and after a refused one. */
export function RunBlockers({ blockers }: { blockers: { reason: string; details: string[] }[] }) {
  return (
    <ul>
      {blockers.map((b, i) => (
        <li key={i}>
          <Prose text={b.reason} />
          {b.details.length > 0 && (
            <ul>
              {b.details.map((d, j) => (
                <li key={j}>
                  <Prose text={d} />
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}
