#!/usr/bin/env bash
# Records, on the GPU machine, what issues 13-15 need as fixtures before their parsers and views are
# written: compute-sanitizer's XML and text from all four tools (the classic cases, the workbench's own
# gallery runs under the sanitizer, and the two program samples), PyTorch memory snapshots (one with an
# OOM, one of a leak), and the environment facts the doctor reads. Everything lands in $OUT as one tgz.
#   bash test/gpu/programs/record_fixtures.sh      (from the repository root; needs dist/ and .gpu carried)
set -uo pipefail
cd "$(dirname "$0")/../../.."
out="${OUT:-/tmp/record}"
work=$(mktemp -d)
mkdir -p "$work/sanitizer" "$work/snapshots" "$work/env"
if ! command -v node >/dev/null 2>&1 && [ -f .gpu/node.xz ]; then
  mkdir -p /tmp/n && xz -dc .gpu/node.xz >/tmp/n/node && chmod +x /tmp/n/node && export PATH=/tmp/n:$PATH
fi
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$san" --version >"$work/sanitizer/version.txt" 2>&1

# 1. The classic cases, every tool, text and XML.
nvcc -lineinfo -o "$work/cases" test/gpu/programs/sanitizer_cases.cu
for tool in memcheck racecheck initcheck synccheck; do
  for case in oob race uninit null sync leak clean; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    timeout 120 "$san" --tool "$tool" "${extra[@]}" --print-limit 100 --error-exitcode 99 "$work/cases" "$case" >"$work/sanitizer/$tool-$case.txt" 2>&1
    echo "exit $?" >>"$work/sanitizer/$tool-$case.txt"
    timeout 120 "$san" --tool "$tool" "${extra[@]}" --xml yes --save "$work/sanitizer/$tool-$case.xml" --print-limit 100 "$work/cases" "$case" >/dev/null 2>&1
  done
done
# A racecheck run with many hazards, to see what --print-limit cuts off.
timeout 120 "$san" --tool racecheck --print-limit 10 --xml yes --save "$work/sanitizer/racecheck-race-limit10.xml" "$work/cases" race >/dev/null 2>&1

# 2. The program samples: CuPy with a RawKernel off by one, and ctypes exiting without cudaFree.
timeout 180 "$san" --tool memcheck --xml yes --save "$work/sanitizer/program-cupy-oob.xml" --target-processes all python3 samples/programs/cupy-out-of-bounds/oob.py >"$work/sanitizer/program-cupy-oob.txt" 2>&1
timeout 180 "$san" --tool memcheck --leak-check full --xml yes --save "$work/sanitizer/program-ctypes-leak.xml" --target-processes all python3 samples/programs/ctypes-leak/leak.py >"$work/sanitizer/program-ctypes-leak.txt" 2>&1
timeout 180 "$san" --tool memcheck --leak-check full --target-processes all python3 samples/programs/ctypes-leak/leak.py >"$work/sanitizer/program-ctypes-leak.text.txt" 2>&1

# 3. Workbench gallery runs under the sanitizer (the runner is a child process: --target-processes all).
for sample in oob-off-by-one missing-bounds-check null-pointer misaligned-access use-after-free uninitialised-read shared-memory-race; do
  tool=memcheck
  [ "$sample" = uninitialised-read ] && tool=initcheck
  [ "$sample" = shared-memory-race ] && tool=racecheck
  timeout 300 "$san" --tool "$tool" --target-processes all --xml yes --save "$work/sanitizer/gallery-$sample-%p.xml" \
    node dist/main/cli.js run --sample "$sample" --no-determinism-check >"$work/sanitizer/gallery-$sample.txt" 2>&1
done

# 4. PyTorch memory snapshots: an OOM, and a leak that grows.
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

# 5. Environment facts the doctor reads, as the machine reports them.
nvidia-smi -q -x >"$work/env/nvidia-smi-q.xml" 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,persistence_mode,compute_mode,mig.mode.current,ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.active --format=csv >"$work/env/query.csv" 2>&1
env | grep -E '^(CUDA|LD_LIBRARY_PATH|PYTORCH|NVIDIA)' >"$work/env/env.txt" 2>&1
node dist/main/cli.js doctor --json >"$work/env/doctor.json" 2>&1
node dist/main/cli.js devices --json >"$work/env/devices.json" 2>&1

tar czf "$out/recorded-fixtures.tgz" -C "$work" .
ls -la "$out"
