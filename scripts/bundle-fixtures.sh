#!/usr/bin/env bash
# Builds the diagnostic-bundle fixtures (test/fixtures/bundles/*.zip) the e2e and integration suites open, with
# the CLI, from data recorded on a real GPU: the H100 run results in test/fixtures/runs/ (with their event logs),
# the H100's doctor facts and device list (test/fixtures/env/h100/), and compute-sanitizer's own reports of the
# same gallery samples on the H100 (test/fixtures/sanitizer/h100/). Nothing here needs a GPU; nothing is made up.
#
#   npm run bundle && scripts/bundle-fixtures.sh
#
# Bundles recorded end to end on the GPU machine (with NVML samples) come from scripts/record-bundles.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=test/fixtures/bundles
mkdir -p "$out"
env_dir=test/fixtures/env/h100
san=test/fixtures/sanitizer/h100
export_bundle() {
  local sample=$1
  shift
  node bin/gpu-workbench.js bundle export --sample "$sample" --result "test/fixtures/runs/$sample.json" \
    --devices "$env_dir/devices.json" --doctor-facts "$env_dir/doctor-facts.json" --out "$out/$sample.zip" "$@"
}
export_bundle oob-off-by-one --sanitizer-xml "$san/gallery-oob-off-by-one-broken-1855.xml" --sanitizer-text "$san/gallery-oob-off-by-one-broken.txt" --sanitizer-tool memcheck
export_bundle shared-memory-race --sanitizer-xml "$san/gallery-shared-memory-race-broken-2131.xml" --sanitizer-text "$san/gallery-shared-memory-race-broken.txt" --sanitizer-tool racecheck
export_bundle never-frees
export_bundle allocation-too-large
ls -l "$out"
