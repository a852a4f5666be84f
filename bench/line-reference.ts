import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * The raw program in its line-driven mode (bench/raw/launch_ref.cu, `stdin`): one measurement per
 * request, so the bench can alternate it with the workbench's and both sides meet the same machine.
 */
export class LineReference {
  private readonly lines: AsyncIterator<string>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  static async start(program: string, args: string[]): Promise<LineReference> {
    const child = spawn(program, ['stdin', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const reference = new LineReference(child);
    const first = await reference.lines.next();
    if (first.done || first.value !== 'ready') throw new Error(`the raw reference did not start: ${stderr.trim() || first.value}`);
    child.on('exit', (code) => {
      if (code) console.error(`the raw reference exited with ${code}: ${stderr.trim()}`);
    });
    return reference;
  }

  /** Milliseconds the raw program took for one `run` (the loaded kernel again), or a code or comment `edit` then compile, load, run. */
  async measure(what: 'run' | 'edit' | 'comment'): Promise<number> {
    this.child.stdin.write(`${what}\n`);
    const line = await this.lines.next();
    const ms = line.done ? NaN : Number(line.value);
    if (!Number.isFinite(ms)) throw new Error(`the raw reference answered ${JSON.stringify(line.value)} to "${what}"`);
    return ms;
  }

  close(): void {
    this.child.stdin.end();
  }
}
