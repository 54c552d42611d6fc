#!/usr/bin/env bash
# s30 call 2: stream-K variants through the probe (identical interleaved timing with cuBLAS)
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
labels=("c0 P1" "c0 P3 fullwave zero" "c0 P3 onewave zero" "c0 P3 onewave nozero" "c0 P3 fullwave nozero" "c1 P1" "c1 P3 onewave nozero")
for j in 0 1 2 3 4 5 6; do
  echo "== $j ${labels[$j]}" >> $R/probe.log
  for s in 8192x14336x4096 8192x8192x8192 4096x4096x4096; do
    IFS=x read -r m n k <<<"$s"
    for r in sustained burst; do timeout 40 .probes/probe$j $m $n $k $r >> $R/probe.log 2>&1 || echo "exit $? $s $r" >> $R/probe.log; done
  done
  el "probe $j"
done
cd $OUT && rm -rf r
