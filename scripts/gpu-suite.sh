#!/usr/bin/env bash
# Runs the GPU suite on the GPU machine, which has no Node.js and no registry: everything it needs is
# built here and carried (dist/, native/build/Release, and .gpu/node.xz from ../shared/gpu/pack-node.sh).
# Usage there: bash scripts/gpu-suite.sh          (results and fixtures go to $OUT when it is set)
#              bash scripts/gpu-suite.sh --split  (two GPUs: the suite in two halves at once, about 7 minutes)
#              bash scripts/gpu-suite.sh --part first, then --part second  (one GPU, two commands of 5 and 6.5 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1; then
  [ -f .gpu/node.xz ] || { echo "No node and no .gpu/node.xz: run ../shared/gpu/pack-node.sh here first, and carry .gpu" >&2; exit 2; }
  mkdir -p /tmp/gpu-workbench-node
  xz -dc .gpu/node.xz > /tmp/gpu-workbench-node/node
  chmod +x /tmp/gpu-workbench-node/node
  export PATH=/tmp/gpu-workbench-node:$PATH
fi
[ -f dist/main/cli.js ] && [ -f native/build/Release/gpu_workbench_native.node ] || { echo "Build first (npm run build) and carry dist and native/build/Release" >&2; exit 2; }
# The fixtures are many files: they go to a folder here and come back as one archive (the device tool
# returns at most 8 files from $OUT), beside the suite's log.
if [ -n "${OUT:-}" ]; then
  export GPU_WORKBENCH_FIXTURES_OUT=/tmp/gpu-workbench-fixtures
  rm -rf "$GPU_WORKBENCH_FIXTURES_OUT" && mkdir -p "$GPU_WORKBENCH_FIXTURES_OUT"
  trap 'tar -czf "$OUT/fixtures.tar.gz" -C "$GPU_WORKBENCH_FIXTURES_OUT" .' EXIT
fi
node --version
set -o pipefail
late='/(check|repro|monitor)\.test\.js$'
suite() { NODE_ENV=test node --enable-source-maps --test --test-concurrency=1 --test-reporter=spec "$@"; }
# --part first | --part second, on one GPU whose commands may run 10 minutes at most: every file but check and repro
# (about 5 minutes, the monitor's tests last), then check and repro (about 6.5 minutes).
if [ "${1:-}" = --part ]; then
  case "${2:-}" in
    first) files="$(ls dist/test/gpu/*.test.js | grep -v -E "$late") dist/test/gpu/monitor.test.js" ;;
    second) files="dist/test/gpu/check.test.js dist/test/gpu/repro.test.js" ;;
    *) echo "--part takes first or second" >&2; exit 64 ;;
  esac
  # shellcheck disable=SC2086
  suite $files 2>&1 | tee ${OUT:+"$OUT/suite-$2.log"}
  exit
fi
if [ "${1:-}" != --split ]; then
  node scripts/run-tests.mjs gpu "$@" 2>&1 | tee ${OUT:+"$OUT/suite.log"}
  exit
fi
# --split, on a host with two GPUs: check and repro (about 6 minutes) on the second GPU while every other file runs on
# the first, then monitor.test alone (its 100 Hz sampler reads every GPU, and NVML waits on one under ncu). The
# "nothing left behind" checks count only their own test process's children (test/helpers/own-processes-tag.ts).
gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c "^GPU " || true)
[ "$gpus" -ge 2 ] || { echo "--split needs two GPUs; this host has $gpus" >&2; exit 2; }
logs=${OUT:-$(mktemp -d)}
first=$(ls dist/test/gpu/*.test.js | grep -v -E "$late")
set +e
(CUDA_VISIBLE_DEVICES=0 suite $first >"$logs/suite-a.log" 2>&1; echo $? >"$logs/suite-a.rc") &
(CUDA_VISIBLE_DEVICES=1 suite dist/test/gpu/check.test.js dist/test/gpu/repro.test.js >"$logs/suite-b.log" 2>&1; echo $? >"$logs/suite-b.rc") &
wait
CUDA_VISIBLE_DEVICES=0 suite dist/test/gpu/monitor.test.js >"$logs/suite-monitor.log" 2>&1
echo $? >"$logs/suite-monitor.rc"
status=0
for part in a b monitor; do
  echo "suite-$part: exit $(cat "$logs/suite-$part.rc"); $(grep -E '^ℹ (tests|pass|fail) ' "$logs/suite-$part.log" | tr '\n' ' ')"
  grep -E '^✖ ' "$logs/suite-$part.log" | grep -v 'failing tests' | sort -u
  [ "$(cat "$logs/suite-$part.rc")" = 0 ] || status=1
done
exit $status
