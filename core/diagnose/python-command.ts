/** Launchers that start Python programs: the program is Python even though the command does not name python. */
const PYTHON_LAUNCHERS = new Set(['torchrun', 'accelerate', 'deepspeed', 'pytest', 'ipython', 'jupyter', 'streamlit', 'uvicorn', 'gunicorn', 'lightning']);
/** Runners that run the rest of the command in a Python environment of theirs: `uv run …`, `conda run -n env …`. */
const RUNNERS: Record<string, { words: number; optionsWithValue: Set<string> }> = {
  uv: { words: 2, optionsWithValue: new Set(['--with', '--python', '-p', '--project', '--directory']) },
  poetry: { words: 2, optionsWithValue: new Set() },
  pipenv: { words: 2, optionsWithValue: new Set() },
  pdm: { words: 2, optionsWithValue: new Set() },
  hatch: { words: 2, optionsWithValue: new Set() },
  conda: { words: 2, optionsWithValue: new Set(['-n', '--name', '-p', '--prefix']) },
  mamba: { words: 2, optionsWithValue: new Set(['-n', '--name', '-p', '--prefix']) },
  micromamba: { words: 2, optionsWithValue: new Set(['-n', '--name', '-p', '--prefix']) },
};

const base = (word: string) => word.split('/').pop() ?? word;

/**
 * How to start the program's own Python (for the probe that asks which PyTorch and CuPy it loads), or null when the
 * program is not Python: `python3.12 x.py` → [python3.12]; `./train.py` → [python3]; `env A=1 python3 x.py` →
 * [python3]; `uv run train.py` → [uv, run, python]; `torchrun --nproc 8 train.py` → [python3].
 */
export function pythonCommandOf(argv: readonly string[]): string[] | null {
  let i = 0;
  if (base(argv[0] ?? '') === 'env') for (i = 1; i < argv.length && (/^[A-Za-z_]\w*=/.test(argv[i]!) || argv[i]!.startsWith('-')); i++);
  const runner = RUNNERS[base(argv[i] ?? '')];
  let prefix: string[] = [];
  if (runner && argv[i + 1] === 'run') {
    prefix = argv.slice(i, i + runner.words) as string[];
    for (i += runner.words; i < argv.length && argv[i]!.startsWith('-'); i++) {
      if (runner.optionsWithValue.has(argv[i]!)) prefix.push(argv[i]!, argv[++i] ?? '');
      else prefix.push(argv[i]!);
    }
  }
  const program = argv[i];
  if (program === undefined) return null;
  const name = base(program);
  if (/^python[\d.]*$/.test(name)) return [...prefix, program];
  if (/\.py$/.test(program) || PYTHON_LAUNCHERS.has(name)) return [...prefix, prefix.length ? 'python' : 'python3'];
  return null;
}
