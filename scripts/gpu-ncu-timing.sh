#!/usr/bin/env bash
# Where ncu's time goes when a report's pages are read (issue 28's bench): each export alone, two at once, and
# whether a profiling run can print its raw page while it writes its report. GPU machine only; prints timings.
set -uo pipefail
cd "$(dirname "$0")/.."
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
R=/tmp/ncu-timing; rm -rf $R; mkdir -p $R
nvcc -O3 -lineinfo -arch=native -DKERNEL_SOURCE="\"$PWD/samples/uncoalesced-access/broken.cu\"" -DTRANSPOSE -o $R/ref bench/raw/profile_ref.cu
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t() { local s=$(date +%s%N); "$@" > $R/out.txt 2>&1; echo "$(ms $s) ms: ${*: -12} ($(wc -c < $R/out.txt) bytes)"; }
t $NCU $S -f -o $R/rep $R/ref 2048 2048 64 256 32 8 1
t $NCU $S -f -o $R/rep2 --csv --page raw $R/ref 2048 2048 64 256 32 8 1
head -c 120 $R/out.txt; echo
t $NCU $S --csv --page raw $R/ref 2048 2048 64 256 32 8 1
t $NCU $S --csv --page source --print-source cuda,sass $R/ref 2048 2048 64 256 32 8 1
head -c 120 $R/out.txt; echo
t $NCU -i $R/rep.ncu-rep --csv --page raw
t $NCU -i $R/rep.ncu-rep --csv --page source --print-source cuda,sass
t $NCU -i $R/rep.ncu-rep --csv --page source --print-source sass
s=$(date +%s%N); $NCU -i $R/rep.ncu-rep --csv --page raw >/dev/null & $NCU -i $R/rep.ncu-rep --csv --page source --print-source cuda,sass > /dev/null; wait; echo "both at once: $(ms $s) ms"
t $NCU $S -f -o $R/rep3 --csv --page source --print-source cuda,sass --log-file $R/log.txt $R/ref 2048 2048 64 256 32 8 1
echo "log-file: $(wc -c < $R/log.txt) bytes; stdout $(wc -c < $R/out.txt) bytes"; head -c 200 $R/log.txt; echo; grep -c Line $R/log.txt
ls /tmp | grep -i nsight; ls -la ~/.config/NVIDIA* 2>/dev/null | head -3
