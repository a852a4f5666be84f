/**
 * A check of the Chrome Trace Event format, as Perfetto and chrome://tracing read it (the "JSON Object Format":
 * { traceEvents: [...] }): every event has a known phase, a name, integer pid and tid; timed events a finite
 * ts ≥ 0; complete events ("X") a finite dur ≥ 0, and on one thread they nest or follow each other (spans that
 * overlap without nesting are dropped or misdrawn); counters ("C") numeric args; instants ("i") a scope of
 * g, p or t; metadata ("M") process_name / thread_name with args.name, or a sort index. Returns the events by phase.
 */
export interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  s?: string;
  args?: Record<string, unknown>;
}

export function validateChromeTrace(text: string): Map<string, TraceEvent[]> {
  const doc = JSON.parse(text) as { traceEvents?: unknown };
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.traceEvents)) throw new Error('no traceEvents array');
  const byPhase = new Map<string, TraceEvent[]>();
  const spans = new Map<string, { ts: number; end: number }[]>();
  doc.traceEvents.forEach((raw: unknown, i: number) => {
    const e = raw as TraceEvent;
    const where = `event ${i} (${JSON.stringify(e).slice(0, 120)})`;
    if (typeof e !== 'object' || e === null) throw new Error(`${where}: not an object`);
    if (typeof e.name !== 'string' || !e.name) throw new Error(`${where}: no name`);
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) throw new Error(`${where}: pid and tid must be integers`);
    if (!['X', 'C', 'i', 'M'].includes(e.ph)) throw new Error(`${where}: phase ${e.ph} is not one this export writes`);
    if (e.ph !== 'M' && !(typeof e.ts === 'number' && Number.isFinite(e.ts) && e.ts >= 0)) throw new Error(`${where}: ts must be a finite number ≥ 0`);
    if (e.ph === 'X') {
      if (!(typeof e.dur === 'number' && Number.isFinite(e.dur) && e.dur >= 0)) throw new Error(`${where}: dur must be a finite number ≥ 0`);
      const key = `${e.pid}/${e.tid}`;
      if (!spans.has(key)) spans.set(key, []);
      spans.get(key)!.push({ ts: e.ts!, end: e.ts! + e.dur });
    }
    if (e.ph === 'C') {
      const values = Object.values(e.args ?? {});
      if (!values.length || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error(`${where}: counter args must be numbers`);
    }
    if (e.ph === 'i' && !['g', 'p', 't'].includes(e.s ?? 't')) throw new Error(`${where}: instant scope must be g, p or t`);
    if (e.ph === 'M') {
      if (e.name === 'process_name' || e.name === 'thread_name') {
        if (typeof e.args?.['name'] !== 'string') throw new Error(`${where}: ${e.name} needs args.name`);
      } else if (!/_sort_index$/.test(e.name)) throw new Error(`${where}: unknown metadata ${e.name}`);
    }
    if (!byPhase.has(e.ph)) byPhase.set(e.ph, []);
    byPhase.get(e.ph)!.push(e);
  });
  for (const [key, list] of spans) {
    list.sort((a, b) => a.ts - b.ts || b.end - a.end);
    const open: number[] = [];
    for (const s of list) {
      while (open.length && open[open.length - 1]! <= s.ts) open.pop();
      if (open.length && s.end > open[open.length - 1]!) throw new Error(`thread ${key}: complete events overlap without nesting at ts ${s.ts}`);
      open.push(s.end);
    }
  }
  return byPhase;
}
