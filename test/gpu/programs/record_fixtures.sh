#!/usr/bin/env bash
# Records, on the GPU machine, what issues 13-15 need as fixtures before their parsers and views are
# written: compute-sanitizer's XML and text from all four tools (the classic cases, the workbench's own
# gallery runs under the sanitizer, and the two program samples), PyTorch memory snapshots (one with an
# OOM, one of a leak), and the environment facts the doctor reads. Everything lands in $RECORD_DIR
# (default: a new temporary folder), written as it goes, so a time limit keeps what was done; the caller
# packs it. Parts by priority: RECORD_PARTS="ipc cases programs gallery limits snapshots env" (default all).
#   RECORD_DIR=/tmp/rec bash test/gpu/programs/record_fixtures.sh    (from the repository root; needs dist/ and .gpu)
set -uo pipefail
cd "$(dirname "$0")/../../.."
work="${RECORD_DIR:-$(mktemp -d)}"
parts=" ${RECORD_PARTS:-ipc cases programs gallery limits snapshots env} "
mkdir -p "$work/sanitizer" "$work/snapshots" "$work/env"
if ! command -v node >/dev/null 2>&1 && [ -f .gpu/node.xz ]; then
  mkdir -p /tmp/n && xz -dc .gpu/node.xz >/tmp/n/node && chmod +x /tmp/n/node && export PATH=/tmp/n:$PATH
fi
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$san" --version >"$work/sanitizer/version.txt" 2>&1
has() { [[ "$parts" == *" $1 "* ]]; }
# Each sanitizer run: its text, its exit status and its wall time in one .txt beside the .xml.
timed() { local txt=$1; shift; local t0; t0=$(date +%s%N); timeout 120 "$@" >"$txt" 2>&1; echo "exit $? in $(( ($(date +%s%N)-t0)/1000000 )) ms" >>"$txt"; }

# 0. The IPC a runner under the sanitizer needs: does a Node fork channel survive compute-sanitizer in between?
if has ipc; then
node - "$san" >"$work/sanitizer/ipc-probe.txt" 2>&1 <<'JS'
const { spawn } = require('node:child_process');
const t0 = Date.now();
const child = spawn(process.argv[2], ['--tool', 'memcheck', process.execPath, '-e', 'process.send({ pid: process.pid, ppid: process.ppid }); process.on("message", (m) => { process.send({ echo: m }); process.disconnect(); })'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
let out = '';
child.stdout.on('data', (d) => (out += d)); child.stderr.on('data', (d) => (out += d));
child.on('message', (m) => { console.log('message', JSON.stringify(m), Date.now() - t0, 'ms'); if (m.pid) child.send('ping'); });
child.on('exit', (code, sig) => { console.log('exit', code, sig, Date.now() - t0, 'ms'); console.log(out); clearTimeout(timer); });
const timer = setTimeout(() => { console.log('timeout'); child.kill('SIGKILL'); }, 30000);
JS
fi

# 1. The classic cases, every tool, XML (what the parser reads) and text (what a person reads).
nvcc -lineinfo -o /tmp/cases test/gpu/programs/sanitizer_cases.cu
if has cases; then
  for tool in memcheck racecheck initcheck synccheck; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    for case in oob race uninit null sync syncwarp leak clean; do
      timed "$work/sanitizer/$tool-$case.xml.txt" "$san" --tool "$tool" "${extra[@]}" --print-limit 100 --error-exitcode 99 --xml --save "$work/sanitizer/$tool-$case.xml" /tmp/cases "$case"
    done
  done
  for pair in memcheck:oob memcheck:leak memcheck:null racecheck:race initcheck:uninit synccheck:sync synccheck:syncwarp; do
    tool=${pair%%:*}; case=${pair#*:}
    extra=(); [ "$tool" = memcheck ] && extra=(--leak-check full)
    timed "$work/sanitizer/$tool-$case.txt" "$san" --tool "$tool" "${extra[@]}" --error-exitcode 99 /tmp/cases "$case"
  done
fi

# 2. The program samples: CuPy with a RawKernel off by one, and ctypes exiting without cudaFree.
if has programs; then
  timed "$work/sanitizer/program-cupy-oob.xml.txt" "$san" --tool memcheck --error-exitcode 99 --xml --save "$work/sanitizer/program-cupy-oob.xml" --target-processes all python3 samples/programs/cupy-out-of-bounds/oob.py
  timed "$work/sanitizer/program-cupy-oob.txt" "$san" --tool memcheck --error-exitcode 99 --target-processes all python3 samples/programs/cupy-out-of-bounds/oob.py
  timed "$work/sanitizer/program-ctypes-leak.xml.txt" "$san" --tool memcheck --leak-check full --error-exitcode 99 --xml --save "$work/sanitizer/program-ctypes-leak.xml" --target-processes all python3 samples/programs/ctypes-leak/leak.py
  timed "$work/sanitizer/program-ctypes-leak.txt" "$san" --tool memcheck --leak-check full --error-exitcode 99 --target-processes all python3 samples/programs/ctypes-leak/leak.py
  t0=$(date +%s%N); python3 samples/programs/cupy-out-of-bounds/oob.py >"$work/sanitizer/program-cupy-oob.bare.txt" 2>&1; echo "exit $? in $(( ($(date +%s%N)-t0)/1000000 )) ms" >>"$work/sanitizer/program-cupy-oob.bare.txt"
fi

# 3. Workbench gallery runs under the sanitizer (the runner is a child process: --target-processes all),
#    and the new sample's plain runs.
if has gallery; then
  for v in broken fixed; do node dist/main/cli.js run --sample divergent-barrier $([ $v = fixed ] && echo --fixed) --json >"$work/divergent-barrier-$v.json" 2>&1; done
  for pair in oob-off-by-one:memcheck null-pointer:memcheck uninitialised-read:initcheck shared-memory-race:racecheck divergent-barrier:synccheck divergent-barrier:synccheck:fixed oob-off-by-one:memcheck:fixed; do
    IFS=: read -r sample tool variant <<<"$pair"
    variant=${variant:-broken}
    timed "$work/sanitizer/gallery-$sample-$variant.txt" "$san" --tool "$tool" --target-processes all --xml --save "$work/sanitizer/gallery-$sample-$variant-%p.xml" \
      node dist/main/cli.js run --sample "$sample" $([ "$variant" = fixed ] && echo --fixed) --no-determinism-check
  done
  t0=$(date +%s%N); node dist/main/cli.js run --sample oob-off-by-one --no-determinism-check >"$work/sanitizer/gallery-bare.txt" 2>&1; echo "exit $? in $(( ($(date +%s%N)-t0)/1000000 )) ms" >>"$work/sanitizer/gallery-bare.txt"
fi

# 4. What --print-limit cuts off and how each tool says so; no -lineinfo; the tool's own failures.
if has limits; then
  timed "$work/sanitizer/memcheck-many-limit10.xml.txt" "$san" --tool memcheck --print-limit 10 --xml --save "$work/sanitizer/memcheck-many-limit10.xml" /tmp/cases many
  timed "$work/sanitizer/memcheck-many-limit10.txt" "$san" --tool memcheck --print-limit 10 /tmp/cases many
  timed "$work/sanitizer/memcheck-many-unlimited.xml.txt" "$san" --tool memcheck --print-limit 0 --xml --save "$work/sanitizer/memcheck-many-unlimited.xml" /tmp/cases many
  timed "$work/sanitizer/racecheck-race-report-all.xml.txt" "$san" --tool racecheck --racecheck-report all --xml --save "$work/sanitizer/racecheck-race-report-all.xml" /tmp/cases race
  timed "$work/sanitizer/racecheck-race-report-all.txt" "$san" --tool racecheck --racecheck-report all /tmp/cases race
  nvcc -o /tmp/cases-nolines test/gpu/programs/sanitizer_cases.cu
  timed "$work/sanitizer/memcheck-oob-nolineinfo.xml.txt" "$san" --tool memcheck --xml --save "$work/sanitizer/memcheck-oob-nolineinfo.xml" /tmp/cases-nolines oob
  timed "$work/sanitizer/missing-target.txt" "$san" --tool memcheck --xml --save "$work/sanitizer/missing-target.xml" /nonexistent/program
  timed "$work/sanitizer/bad-tool.txt" "$san" --tool nosuchtool /tmp/cases oob
  "$san" --help >"$work/sanitizer/help.txt" 2>&1
fi

# 5. PyTorch memory snapshots: an OOM, and a leak that grows.
if has snapshots; then
PYTHONUNBUFFERED=1 timeout 300 python3 - "$work/snapshots" <<'PY'
import sys, torch
out = sys.argv[1]
torch.cuda.memory._record_memory_history(max_entries=100000)
keep = [torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda") for _ in range(8)]
del keep[::2]
try:
    torch.empty(10 * 2**40, dtype=torch.uint8, device="cuda")
except torch.OutOfMemoryError as e:
    open(f"{out}/oom-message.txt", "w").write(str(e))
torch.cuda.memory._dump_snapshot(f"{out}/oom.pickle")
torch.cuda.memory._record_memory_history(enabled=None)
torch.cuda.empty_cache()
torch.cuda.memory._record_memory_history(max_entries=100000)
leaked = []
for step in range(50):
    leaked.append(torch.randn(1024, 1024, device="cuda"))  # kept by mistake: grows 4 MiB a step
torch.cuda.memory._dump_snapshot(f"{out}/leak.pickle")
print("snapshots written", torch.__version__)
PY
fi

# 6. Environment facts the doctor reads, as the machine reports them.
if has env; then
  nvidia-smi -q -x >"$work/env/nvidia-smi-q.xml" 2>&1
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,persistence_mode,compute_mode,mig.mode.current,ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.active --format=csv >"$work/env/query.csv" 2>&1
  env | grep -E '^(CUDA|LD_LIBRARY_PATH|PYTORCH|NVIDIA)' >"$work/env/env.txt" 2>&1
  node dist/main/cli.js doctor --json --facts-out "$work/env/doctor-facts.json" >"$work/env/doctor.json" 2>&1
  node dist/main/cli.js devices --json >"$work/env/devices.json" 2>&1
fi
echo "recorded into $work"
