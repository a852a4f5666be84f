/** What a step's kernels printed (device printf) and the messages of device-side asserts that failed. */
export interface DeviceOutput {
  stepIndex: number;
  text: string;
  /** Bytes past the kept text, counted and dropped: a kernel printing in a loop can write megabytes. */
  droppedBytes: number;
}

/** One failed device-side assert, as the CUDA runtime prints it for each thread that failed it. */
export interface DeviceAssert {
  file: string;
  line: number;
  function: string;
  block: [number, number, number];
  thread: [number, number, number];
  condition: string;
}

// file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `condition` failed.
const ASSERT_LINE = /^(.+?):(\d+): (.+?): block: \[(\d+),(\d+),(\d+)\], thread: \[(\d+),(\d+),(\d+)\] Assertion `(.*)` failed\.\s*$/;

export function parseDeviceAsserts(text: string): DeviceAssert[] {
  const out: DeviceAssert[] = [];
  for (const line of text.split('\n')) {
    const m = ASSERT_LINE.exec(line);
    if (!m) continue;
    const n = (i: number) => Number(m[i]);
    out.push({ file: m[1]!, line: n(2), function: m[3]!, block: [n(4), n(5), n(6)], thread: [n(7), n(8), n(9)], condition: m[10]! });
  }
  return out;
}
