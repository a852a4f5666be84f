#!/usr/bin/env bash
# Records what Nsight Compute says about the profile samples, as fixtures for the profile parser (issue 28):
# bare ncu on a plain program (bench/raw/profile_ref.cu) and ncu around the workbench's own runner.
# Run on the GPU machine with dist/ built and carried; everything goes to $OUT/ncu.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
R=/tmp/ncu-rec; rm -rf $R; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
$NCU --version > $R/version.txt 2>&1
METRICS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum.per_second
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis"
build() { nvcc -O3 -lineinfo -arch=native -DKERNEL_SOURCE="\"$PWD/$1\"" -D$2 -o $R/$3 bench/raw/profile_ref.cu; }
build samples/uncoalesced-access/broken.cu TRANSPOSE ref-broken
build samples/uncoalesced-access/fixed.cu TRANSPOSE ref-fixed
build samples/vector-add/vector_add.cu VECADD ref-stream
for v in broken fixed; do
  g="64 256"; [ $v = fixed ] && g="64 64"
  $R/ref-$v 2048 2048 $g 32 8 20 > $R/events-$v.json
  /usr/bin/time -f "%e s" $NCU --metrics $METRICS --csv $R/ref-$v 2048 2048 $g 32 8 1 > $R/bare-$v.csv 2> $R/bare-$v.time
  $NCU $SECTIONS --metrics $METRICS --import-source yes -f -o $R/full-$v $R/ref-$v 2048 2048 $g 32 8 1 > $R/full-$v.log 2>&1
done
$R/ref-stream 67108864 0 262144 1 256 1 20 > $R/events-stream.json
$NCU --metrics $METRICS --csv $R/ref-stream 67108864 0 262144 1 256 1 1 > $R/bare-stream.csv 2>&1
$NCU --metrics $METRICS --clock-control none --csv $R/ref-stream 67108864 0 262144 1 256 1 1 > $R/bare-stream-noclock.csv 2>&1
for f in full-broken full-fixed; do
  $NCU -i $R/$f.ncu-rep --csv --page raw > $R/$f-raw.csv 2>&1
  $NCU -i $R/$f.ncu-rep --csv --page details > $R/$f-details.csv 2>&1
  $NCU -i $R/$f.ncu-rep --csv --page source --print-source cuda > $R/$f-source-cuda.csv 2>&1
  $NCU -i $R/$f.ncu-rep --csv --page source --print-source sass > $R/$f-source-sass.csv 2>&1
  $NCU -i $R/$f.ncu-rep --csv --page source --print-source cuda,sass > $R/$f-source-cudasass.csv 2>&1
done
# Around the workbench's runner (Node, NVRTC with -lineinfo through the CLI): does ncu follow it, and name lines?
/usr/bin/time -f "%e s" $NCU --target-processes all -k regex:transpose -c 1 $SECTIONS --metrics $METRICS --import-source yes -f -o $R/runner-broken \
  node dist/main/cli.js run --sample uncoalesced-access --no-determinism-check > $R/runner-broken.log 2>&1
$NCU -i $R/runner-broken.ncu-rep --csv --page raw > $R/runner-broken-raw.csv 2>&1
$NCU -i $R/runner-broken.ncu-rep --csv --page source --print-source cuda,sass > $R/runner-broken-source.csv 2>&1
$NCU -i $R/runner-broken.ncu-rep --csv --page details > $R/runner-broken-details.csv 2>&1
$NCU --list-sections > $R/sections.txt 2>&1
rm -f $R/ref-broken $R/ref-fixed $R/ref-stream
ls -la $R
tar -czf $OUT/ncu.tar.gz -C $R .
