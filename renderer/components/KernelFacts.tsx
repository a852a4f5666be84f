import type { CompileResult } from '../../core/compile/compile-result';
import { formatBytes } from '../../core/format';
import { revealPosition } from './EditorPane';
import { StaleNote } from './StaleNote';

/** Per kernel: what it takes and what it costs, from the compiler's own report (the last good one, marked stale, while the text does not compile). */
export function KernelFacts({ result, stale = false }: { result: CompileResult | null; stale?: boolean }) {
  if (!result) return <p className="muted">Compiling…</p>;
  if (result.kernels.length === 0) return <p className="muted">No __global__ function in this file.</p>;
  return (
    <div data-testid="kernel-facts" className={stale ? 'stale' : ''}>
      {stale && <StaleNote what="These resources are" />}
      {result.kernels.map((k) => {
        const spills = (k.spillStoreBytes ?? 0) + (k.spillLoadBytes ?? 0) > 0;
        return (
          <section key={k.name} className="kernel" data-kernel={k.name}>
            <h3 onClick={() => revealPosition(k.line, k.column)} className="kernel-name">
              {k.display}
            </h3>
            {k.symbol && <div className="mono muted">{k.symbol}</div>}
            {k.registers === null ? (
              <p className="muted">{result.ok ? 'Not compiled: a template with no instantiation in this file.' : 'Fix the errors to see its resources.'}</p>
            ) : (
              <table>
                <tbody>
                  <tr>
                    <td>Registers / thread</td>
                    <td className="num" data-testid="registers">
                      {k.registers}
                    </td>
                  </tr>
                  <tr>
                    <td>Static shared / block</td>
                    <td className="num" data-testid="shared">
                      {formatBytes(k.sharedBytes ?? 0)}
                    </td>
                  </tr>
                  <tr className={spills ? 'status-warn' : ''}>
                    <td>Local / thread (stack)</td>
                    <td className="num">{formatBytes(k.localBytes ?? 0)}</td>
                  </tr>
                  <tr className={spills ? 'status-warn' : ''}>
                    <td>Spill stores / loads</td>
                    <td className="num">
                      {k.spillStoreBytes ?? 0} B / {k.spillLoadBytes ?? 0} B
                    </td>
                  </tr>
                  <tr>
                    <td>Constant</td>
                    <td className="num">{formatBytes(k.constantBytes ?? 0)}</td>
                  </tr>
                  <tr>
                    <td>Max threads / block</td>
                    <td className="num">
                      {k.maxThreadsPerBlock}{' '}
                      <span className="muted">
                        (
                        {k.maxThreadsSource === 'launch-bounds'
                          ? '__launch_bounds__'
                          : k.maxThreadsSource === 'driver'
                            ? 'from the driver'
                            : 'register-limited'}
                        )
                      </span>
                    </td>
                  </tr>
                </tbody>
              </table>
            )}
            <div className="muted params">{k.params.map((p) => `${p.name}: ${p.type}`).join(' · ') || 'no parameters'}</div>
          </section>
        );
      })}
    </div>
  );
}
