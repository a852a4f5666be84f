import * as z from 'zod';

/** One compiler message, placed on the source where the compiler put it. */
export interface Diagnostic {
  file: string;
  /** 1-based; 0 when the message is not about a line (ptxas, the driver). */
  line: number;
  /** 1-based; 0 when unknown. */
  column: number;
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** The compiler's own code, e.g. "177-D", where it gives one. */
  code: string | null;
  source: 'frontend' | 'preprocessor' | 'ptxas' | 'compiler';
}

export const diagnosticSchema = z.object({
  file: z.string(),
  line: z.number().int().min(0),
  column: z.number().int().min(0),
  severity: z.enum(['error', 'warning', 'info']),
  message: z.string(),
  code: z.string().nullable(),
  source: z.enum(['frontend', 'preprocessor', 'ptxas', 'compiler']),
});
export const diagnosticsSchema = z.array(diagnosticSchema);

const EDG = /^(.+?)\((\d+)\): (error|warning|remark|catastrophic error|fatal error|internal error)( #([\w-]+))?: (.*)$/;
const GCC = /^(.+?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$/;
const PTXAS = /^ptxas (error|warning|fatal)\s*: (.*)$/;
const NVCC_FATAL = /^nvcc (fatal|error)\s*: (.*)$/;

const severityOf = (word: string): Diagnostic['severity'] => (/error/.test(word) ? 'error' : word === 'warning' ? 'warning' : 'info');

/**
 * Parses NVRTC and nvcc logs (the EDG front end, the host preprocessor, ptxas) into diagnostics. The
 * front end prints the offending line (with its indentation rewritten) and a caret under the column;
 * given the source, the column is recovered by lining the printed text up with the real line.
 */
export function parseCompilerLog(log: string, sources: Record<string, string> = {}): Diagnostic[] {
  const lines = log.replace(/\r\n/g, '\n').split('\n');
  const out: Diagnostic[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const edg = EDG.exec(text);
    if (edg) {
      const [, file, line, word, , code, message] = edg as unknown as [string, string, string, string, string, string | undefined, string];
      const lineNo = Number(line);
      let column = 0;
      const printed = lines[i + 1];
      const caret = lines[i + 2];
      if (printed !== undefined && caret !== undefined && /^\s*\^\s*$/.test(caret)) {
        column = caretColumn(printed, caret.indexOf('^'), sourceLine(sources, file, lineNo));
        i += 2;
      }
      out.push({ file, line: lineNo, column, severity: severityOf(word), message: message.trim(), code: code ?? null, source: 'frontend' });
      continue;
    }
    const gcc = GCC.exec(text);
    if (gcc) {
      const [, file, line, column, word, message] = gcc as unknown as [string, string, string, string, string, string];
      if (word === 'note') continue;
      out.push({ file, line: Number(line), column: Number(column), severity: severityOf(word), message: message.trim(), code: null, source: 'preprocessor' });
      continue;
    }
    const ptxas = PTXAS.exec(text);
    if (ptxas) {
      out.push({
        file: '',
        line: 0,
        column: 0,
        severity: ptxas[1] === 'warning' ? 'warning' : 'error',
        message: ptxas[2]!.trim(),
        code: null,
        source: 'ptxas',
      });
      continue;
    }
    const fatal = NVCC_FATAL.exec(text);
    if (fatal) out.push({ file: '', line: 0, column: 0, severity: 'error', message: fatal[2]!.trim(), code: null, source: 'compiler' });
  }
  return out;
}

function sourceLine(sources: Record<string, string>, file: string, line: number): string | null {
  const text = sources[file] ?? Object.entries(sources).find(([name]) => file.endsWith(name) || name.endsWith(file))?.[1];
  return text?.split('\n')[line - 1] ?? null;
}

/** 1-based column of the caret, in the real source line when we have it. */
function caretColumn(printed: string, caretIndex: number, original: string | null): number {
  const printedIndent = printed.length - printed.trimStart().length;
  const offsetInText = caretIndex - printedIndent;
  if (original !== null) {
    const originalIndent = original.length - original.trimStart().length;
    if (original.trimStart().replace(/\t/g, ' ').startsWith(printed.trimStart().slice(0, 20).replace(/\t/g, ' ').trimEnd())) {
      return originalIndent + Math.max(0, offsetInText) + 1;
    }
  }
  return Math.max(1, offsetInText + 1);
}

/** Standard headers whose use in device code NVRTC covers with built-ins, though it ships no such file. */
const BUILT_IN_UNDER_NVRTC: Record<string, string> = {
  cassert: 'assert()',
  'assert.h': 'assert()',
  cstdio: 'printf()',
  'stdio.h': 'printf()',
  cmath: 'the math functions (sqrtf, expf, …)',
  'math.h': 'the math functions (sqrtf, expf, …)',
};
const MISSING_HEADER = /could not open source file "([^"]+)"/;

/**
 * NVRTC has no C or C++ standard library headers, so `#include <cassert>` stops the compile although
 * assert() itself works under NVRTC. Each such error gets a note saying so and how to keep the include
 * for nvcc.
 */
export function nvrtcHeaderNotes(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.flatMap((d) => {
    const header = d.severity === 'error' ? MISSING_HEADER.exec(d.message)?.[1] : undefined;
    const builtIn = header ? BUILT_IN_UNDER_NVRTC[header] : undefined;
    if (!header || !builtIn) return [];
    return [
      {
        ...d,
        severity: 'info' as const,
        code: 'nvrtc-std-header',
        source: 'compiler' as const,
        message: `NVRTC ships no <${header}>, but ${builtIn} needs no include under it: remove the include, or keep it for nvcc inside #ifndef __CUDACC_RTC__ … #endif.`,
      },
    ];
  });
}
