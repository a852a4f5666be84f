import type { PasteExplanation } from '../../core/explain/explain-paste';

export function renderExplanation(e: PasteExplanation): string {
  const lines = [e.recognized ? `${e.title}` : '? Not recognised as a CUDA error'];
  if (e.error?.sticky && !e.explanation) lines.push('  Sticky: the CUDA context is dead after this error; only a new process recovers.');
  if (e.explanation) {
    lines.push(
      '',
      e.explanation.summary,
      '',
      'Likely causes:',
      ...e.explanation.causes.map((c) => `  - ${c}`),
      '',
      'What to do:',
      ...e.explanation.next.map((n) => `  - ${n}`),
    );
  } else if (e.error) {
    lines.push('', e.error.doc);
  }
  if (e.specifics.length) lines.push('', ...(e.recognized ? ['In this message:'] : []), ...e.specifics.map((s) => `  ${s}`));
  return lines.join('\n');
}
