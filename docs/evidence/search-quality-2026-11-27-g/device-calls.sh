# The device calls of 2026-11-27 (sixteenth session), run from the repository root on the GPU
# machine with build-gpu/amk-v4s (this build) and .device-libs carried; see README.md here.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
A=build-gpu/amk-v4s
T0=$(date +%s); DEADLINE=${DEADLINE:-560}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv
if [ "${TESTS:-0}" = 1 ]; then
  echo "== check_gpu_gpu"; timeout 240 build-gpu/check_gpu_gpu 2>&1 | tail -25
  echo "== probe"
  $A propose gemm_hopper --quiet > /tmp/d.json
  for i in 1 2; do $A evaluate /tmp/d.json --backend gpu --results /tmp/ev.tsv --quiet | python3 -c 'import json,sys; v=json.load(sys.stdin); print("evaluate: cost_s", v["cost_s"], "setup_s", v["setup_s"])'; done
  $A loop gemm_hopper --strategy random --budget 16 --batch 8 --seed 3 --results /tmp/l.tsv --quiet | python3 -c 'import json,sys; v=json.load(sys.stdin); print("loop: elapsed_s", v["elapsed_s"], "setup_s", v["setup_s"])'
  awk -F'\t' 'NR>2{printf "%s ", $35} END {print ""}' /tmp/l.tsv
fi
mkdir -p sweeps
for k in $KERNELS; do
  name=${k%%:*}; shape=${k#*:}
  l=$(left); (( l > 90 )) || { echo "== $name: no time left"; continue; }
  lim=$(( l - 60 )); [ -n "${CAP:-}" ] && (( lim > CAP )) && lim=$CAP
  echo "== $name ($shape) --time-limit $lim"
  AMK=$A OUT=$OUT bash bench/record_sweeps.sh $name $shape --time-limit $lim 2>&1 | tail -4
done
echo "== done after $(( $(date +%s) - T0 )) s"
