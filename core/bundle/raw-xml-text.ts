/**
 * How much of compute-sanitizer's raw XML a report keeps, and the bounded copy it is kept as: apart from the bundle's
 * schemas (core/bundle/bundle-sanitizer.ts), for the tool's runs, which only collect it.
 */

/** The raw XML a report keeps for its bundle, per file and in files (the report crosses the wire to the UI and back). */
export const RAW_XML_KEPT_CHARS = 1024 ** 2;
export const RAW_XML_KEPT_FILES = 4;

/** Collects streamed text keeping its first and last `max / 2` characters, for a bounded copy of a file read once. */
export function headTail(max: number): { push(text: string): void; text(): string } {
  const half = Math.floor(max / 2);
  let head = '';
  let tail = '';
  let total = 0;
  return {
    push(chunk) {
      total += chunk.length;
      if (head.length < half) {
        const room = half - head.length;
        head += chunk.slice(0, room);
        chunk = chunk.slice(room);
      }
      if (chunk) tail = (tail + chunk).slice(-half);
    },
    text() {
      const left = total - head.length - tail.length;
      return left > 0 ? `${head}\n… ${left} characters left out by GPU Workbench …\n${tail}` : head + tail;
    },
  };
}
