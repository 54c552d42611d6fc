set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader
C2=("128 256 64 3 2 1 1 1 4 16 1" "128 320 64 3 2 1 1 1 1 16 2" "128 320 64 3 2 1 2 1 1 16 2" "128 320 64 3 2 1 1 2 1 16 2" "128 320 64 3 2 1 2 1 1 16 3" "128 320 64 3 2 1 1 1 1 8 2" "128 320 64 3 2 1 1 2 1 8 2" "128 320 64 3 2 2 1 1 1 16 2" "128 320 64 3 2 1 1 1 3 16 2")
echo "#### correctness"
SHAPES="257x520x200 2113x1800x1000 3x136x72" PROBES=.probes14 bash bench/gemm_hopper_probe.sh "${C2[@]}" | grep -v "^ok" 
for round in 1 2; do
  echo "#### round $round"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes14 bash bench/gemm_hopper_probe.sh "${C2[@]}"
done
