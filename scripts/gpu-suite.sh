#!/usr/bin/env bash
# Runs the GPU suite on the GPU machine, which has no Node.js and no registry: everything it needs is
# built here and carried (dist/, native/build/Release, and .gpu/node.xz from ../shared/gpu/pack-node.sh).
# Usage there: bash scripts/gpu-suite.sh          (results and fixtures go to $OUT when it is set)
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
node scripts/run-tests.mjs gpu "$@" 2>&1 | tee ${OUT:+"$OUT/suite.log"}
