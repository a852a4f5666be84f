import type { editor } from 'monaco-editor/editor/editor.api';

import type { CompileResult } from '../../core/compile/compile-result';
import type { Diagnostic } from '../../core/compile/diagnostics';
import { findKernelSymbol } from '../../core/cubin';
import { monaco } from './monaco-setup';

const SEVERITY = { error: 8, warning: 4, info: 2 } as const; // monaco.MarkerSeverity

/** Where a diagnostic belongs in this document: its own line, or (ptxas) the kernel it names. */
export function diagnosticPosition(d: Diagnostic, result: CompileResult): { line: number; column: number } | null {
  if (d.line > 0) return { line: d.line, column: Math.max(1, d.column) };
  const symbol = /'([^']+)'/.exec(d.message)?.[1];
  if (!symbol) return null;
  const kernel = result.kernels.find((k) => k.symbol === symbol || findKernelSymbol([symbol], k.name) === symbol);
  return kernel ? { line: kernel.line, column: kernel.column } : null;
}

export function setDiagnostics(model: editor.ITextModel, result: CompileResult | null): void {
  if (!result) {
    monaco.editor.setModelMarkers(model, 'compiler', []);
    return;
  }
  const markers: editor.IMarkerData[] = [];
  for (const d of result.diagnostics) {
    const at = diagnosticPosition(d, result);
    if (!at || at.line > model.getLineCount()) continue;
    const word = model.getWordAtPosition({ lineNumber: at.line, column: at.column });
    const end = word && word.startColumn === at.column ? word.endColumn : Math.min(at.column + 1, model.getLineMaxColumn(at.line));
    markers.push({
      severity: SEVERITY[d.severity],
      message: d.message,
      code: d.code ?? undefined,
      source: d.source === 'ptxas' ? 'ptxas' : result.backend,
      startLineNumber: at.line,
      startColumn: at.column,
      endLineNumber: at.line,
      endColumn: Math.max(end, at.column + 1),
    });
  }
  monaco.editor.setModelMarkers(model, 'compiler', markers);
}
