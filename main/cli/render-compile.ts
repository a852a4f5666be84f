import type { CompileResult } from '../../core/compile/compile-result';
import { formatBytes } from '../../core/format';

/** The terminal view of a compile: the same diagnostics and kernel facts the editor shows. */
export function renderCompile(result: CompileResult, sourceName: string): string {
  const lines: string[] = [];
  for (const d of result.diagnostics) {
    const where = d.line ? `${d.file || sourceName}:${d.line}${d.column ? `:${d.column}` : ''}` : d.source;
    lines.push(`${where}: ${d.severity}${d.code ? ` ${d.code}` : ''}: ${d.message}`);
  }
  if (!result.ok && result.diagnostics.length === 0) lines.push(result.log.trim() || 'The compiler failed without a message.');
  for (const k of result.ok ? result.kernels : []) {
    if (k.registers === null) {
      lines.push(`${k.display}: ${k.symbol ? 'no resource report' : 'not compiled (a template with no instantiation?)'}`);
      continue;
    }
    const spills = k.spillStoreBytes || k.spillLoadBytes ? `, SPILLS ${k.spillStoreBytes} B stores / ${k.spillLoadBytes} B loads` : '';
    lines.push(
      `${k.display}  [${k.symbol}]\n  ${k.registers} registers/thread, ${formatBytes(k.sharedBytes ?? 0)} static shared, ${formatBytes(k.localBytes ?? 0)} local/thread${spills}, max ${k.maxThreadsPerBlock} threads/block (${k.maxThreadsSource === 'launch-bounds' ? '__launch_bounds__' : k.maxThreadsSource === 'driver' ? 'from the driver' : 'register-limited'})`,
    );
  }
  lines.push(
    `${result.ok ? '✓' : '✗'} ${result.backend} (${result.compilerVersion}) for ${result.arch} in ${result.ms.toFixed(result.cached ? 1 : 0)} ms${result.cached ? ' (cache hit)' : ''}`,
  );
  lines.push(`  ${result.command}`);
  return lines.join('\n');
}
