#!/usr/bin/env bash
# Records, on the GPU machine, what `diagnose` reads from real programs before its rules are written: each
# program sample run as it is, with CUDA_LAUNCH_BLOCKING=1, with Python's fault handler, under memcheck,
# racecheck or initcheck, and with the allocator-history shim; the Python probe; nvidia-smi's view. Each
# run's output and exit status (and wall time) in <sample>.<step>.txt; the tools' XML and snapshots beside.
#   RECORD_DIR=/tmp/rec bash test/gpu/programs/record_diagnose.sh   (from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../../.."
work="${RECORD_DIR:-$(mktemp -d)}"
mkdir -p "$work"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
shim=$(mktemp -d); cp main/diagnose/python/sitecustomize.py "$shim/"
timed() { local txt=$1; shift; local t0; t0=$(date +%s%N); timeout 180 "$@" >"$txt" 2>&1; echo "exit $? in $(( ($(date +%s%N)-t0)/1000000 )) ms" >>"$txt"; }
python3 main/diagnose/python/probe.py >"$work/probe.json" 2>&1
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv >"$work/gpus.csv" 2>&1
p=samples/programs
run() { local name=$1 file=$2; shift 2; timed "$work/$name.$file" "$@"; }
for s in pytorch-oom-too-large/join.py pytorch-oom-other-process/hog.py pytorch-device-assert/embed.py ctypes-segfault/peek.py pytorch-tensor-on-cpu/classify.py cupy-out-of-bounds/oob.py cupy-race/reduce.py ctypes-leak/leak.py; do
  name=${s%%/*}
  run "$name" as-is.txt python3 "$p/$s"
done
timed "$work/cuda-visible-devices.as-is.txt" env CUDA_VISIBLE_DEVICES=7 python3 "$p/cuda-visible-devices/train.py"
run pytorch-device-assert blocking.txt env CUDA_LAUNCH_BLOCKING=1 python3 "$p/pytorch-device-assert/embed.py"
run pytorch-device-assert memcheck.txt "$san" --tool memcheck --print-limit 100 --xml --save "$work/pytorch-device-assert.memcheck.xml" python3 "$p/pytorch-device-assert/embed.py"
run pytorch-device-assert memcheck-text.txt env CUDA_LAUNCH_BLOCKING=1 "$san" --tool memcheck --print-limit 20 python3 "$p/pytorch-device-assert/embed.py"
run ctypes-segfault faulthandler.txt env PYTHONFAULTHANDLER=1 python3 "$p/ctypes-segfault/peek.py"
run ctypes-segfault memcheck.txt "$san" --tool memcheck --print-limit 100 --xml --save "$work/ctypes-segfault.memcheck.xml" python3 "$p/ctypes-segfault/peek.py"
run cupy-out-of-bounds memcheck.txt env CUDA_LAUNCH_BLOCKING=1 CUPY_CACHE_DIR="$work/cupy-cache" CUPY_CACHE_SAVE_CUDA_SOURCE=1 "$san" --tool memcheck --leak-check full --print-limit 100 --xml --save "$work/cupy-out-of-bounds.memcheck.xml" python3 "$p/cupy-out-of-bounds/oob.py"
run cupy-out-of-bounds memcheck-text.txt env CUDA_LAUNCH_BLOCKING=1 "$san" --tool memcheck --leak-check full --print-limit 20 python3 "$p/cupy-out-of-bounds/oob.py"
run cupy-race racecheck.txt env CUPY_CACHE_DIR="$work/cupy-cache2" CUPY_CACHE_SAVE_CUDA_SOURCE=1 "$san" --tool racecheck --print-limit 100 --xml --save "$work/cupy-race.racecheck.xml" python3 "$p/cupy-race/reduce.py"
run cupy-race memcheck.txt "$san" --tool memcheck --leak-check full --print-limit 100 --xml --save "$work/cupy-race.memcheck.xml" python3 "$p/cupy-race/reduce.py"
run ctypes-leak memcheck.txt "$san" --tool memcheck --leak-check full --print-limit 100 --xml --save "$work/ctypes-leak.memcheck.xml" python3 "$p/ctypes-leak/leak.py"
for s in pytorch-oom-too-large/join.py pytorch-oom-other-process/hog.py; do
  name=${s%%/*}
  timed "$work/$name.history.txt" env PYTHONPATH="$shim" GPU_WORKBENCH_SNAPSHOT="$work/$name.pickle" GPU_WORKBENCH_SHIM_NOTES="$work/$name.notes.jsonl" python3 "$p/$s"
done
run pytorch-oom-too-large memcheck.txt "$san" --tool memcheck --leak-check full --print-limit 20 python3 "$p/pytorch-oom-too-large/join.py"
# the shim leaves a program that does not OOM alone
timed "$work/shim-clean.txt" env PYTHONPATH="$shim" GPU_WORKBENCH_SNAPSHOT="$work/clean.pickle" GPU_WORKBENCH_SHIM_NOTES="$work/clean.notes.jsonl" python3 -c "import torch; x = torch.ones(10, device='cuda'); print(x.sum().item())"
ls -la "$work" > "$work/listing.txt"

# the monitor's view of a program whose child holds the GPU
if command -v node >/dev/null 2>&1; then
  node dist/main/cli.js monitor --json --interval 50 -- python3 "$p/pytorch-oom-other-process/hog.py" >"$work/monitor-hog.json" 2>"$work/monitor-hog.stderr.txt"
  node dist/main/cli.js monitor --json --interval 50 -- python3 "$p/ctypes-leak/leak.py" >"$work/monitor-ctypes-leak.json" 2>"$work/monitor-ctypes-leak.stderr.txt"
  node dist/main/cli.js doctor --json >"$work/doctor.json" 2>&1
fi
echo "recorded into $work"
