import type { Problem } from '../../core/discovery';

/** What the user sees when there is no usable driver: what happened, where we looked, what to do. */
export function NoDriverPanel({ problem }: { problem: Problem }) {
  return (
    <div className="problem" role="alert" data-testid="no-driver">
      <h2>{problem.title}</h2>
      <p>{problem.detail}</p>
      <p>
        <strong>What to do:</strong> {problem.remedy}
      </p>
      {problem.searched && problem.searched.length > 0 && (
        <>
          <h3>Searched</h3>
          <ul className="mono" data-testid="searched">
            {problem.searched.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
