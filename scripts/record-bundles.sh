#!/usr/bin/env bash
# On the GPU machine: runs gallery samples for real — with NVML sampling the device while each runs, and
# compute-sanitizer on the race — and exports each as a diagnostic bundle, to commit as fixtures the e2e and
# integration suites then open (test/fixtures/bundles/recorded/*.zip; test/integration/bundle-open.test.ts opens
# every bundle there).
#
#   npm ci && npm run bundle && scripts/record-bundles.sh [OUT_DIR]     (default: test/fixtures/bundles/recorded)
#
# Needs the NVIDIA driver (libcuda, NVML) and a CUDA toolkit with compute-sanitizer; takes about a minute.
# Carry back OUT_DIR (the .zip files, and record-bundles.log beside them).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-test/fixtures/bundles/recorded}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
log="$out/record-bundles.log"
: >"$log"
cli() { node bin/gpu-workbench.js "$@"; }
say() { echo "$*" | tee -a "$log"; }

if ! cli devices --json >"$work/devices.json" 2>>"$log"; then
  say "✗ No CUDA device here (see $log): run this on the GPU machine."
  exit 2
fi
failed=0
for sample in oob-off-by-one never-frees allocation-too-large shared-memory-race; do
  say "== $sample"
  # --trace samples device memory every 10 ms while it runs: the outcome then carries the series (its "samples").
  # A failing sample exits 1 (its diagnosis is an error): that is the point, so the exit status is not checked.
  cli run --sample "$sample" --json --trace "$work/$sample.trace.json" >"$work/$sample.result.json" 2>>"$log"
  extra=()
  if ! node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(o.samples && o.samples.samples.length ? 0 : 1)' "$work/$sample.result.json"; then
    say "✗ $sample: the run carries no NVML samples (see $log)"
    failed=1
  fi
  tool=""
  case "$sample" in
    shared-memory-race) tool=racecheck ;;
    oob-off-by-one) tool=memcheck ;;
  esac
  if [ -n "$tool" ]; then
    # { report, run }: the report keeps a bounded copy of the tool's XML, which the bundle carries under sanitizer/.
    # The report is read once the tool has written it, also after a sticky fault (memcheck's off-by-one ends in 719):
    # a report without its XML is a failure to record, not a fixture.
    cli sanitize --tool "$tool" --sample "$sample" --json >"$work/$sample.$tool.json" 2>>"$log"
    if [ -s "$work/$sample.$tool.json" ]; then
      extra+=(--sanitizer "$work/$sample.$tool.json")
      if ! node -e '
        const { report } = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const kept = (report.rawXml || []).length;
        console.log(`${process.argv[2]}: ${report.xmlFiles.length} XML file(s), ${kept} kept, findings from ${report.findingsFrom}, tool exit ${report.exitCode}`);
        process.exit(kept > 0 && report.findingsFrom === "xml" ? 0 : 1);
      ' "$work/$sample.$tool.json" "$tool" | tee -a "$log"; then
        say "✗ $sample: $tool's report holds none of the tool's XML (see $log): the bundle would carry only its text"
        failed=1
      fi
    else
      say "✗ $sample: $tool wrote no report (see $log)"
      failed=1
    fi
  fi
  if cli bundle export --sample "$sample" --result "$work/$sample.result.json" "${extra[@]}" --out "$out/$sample.zip" 2>&1 | tee -a "$log"; then
    cli bundle inspect "$out/$sample.zip" | tee -a "$log"
    if [ -n "$tool" ] && ! cli bundle inspect "$out/$sample.zip" --json | node -e '
      const { entries } = JSON.parse(require("fs").readFileSync(0, "utf8"));
      process.exit(entries.some((e) => /^sanitizer\/.*\.xml$/.test(e.name)) ? 0 : 1);
    '; then
      say "✗ $sample: the bundle carries no sanitizer/*.xml"
      failed=1
    fi
  else
    say "✗ $sample: the bundle was not written"
    failed=1
  fi
done
exit $failed
