set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,serial,driver_version,clocks.max.sm --format=csv,noheader
NEW=("128 256 64 3 2 1 1 1 4 16 1" "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 4 16 3" "128 320 64 3 2 1 1 1 1 16 2" "128 256 64 4 2 1 1 1 4 16 2" "128 320 64 3 2 1 1 1 1 8 3")
OLD=("128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1")
echo "#### correctness, new kernel"
SHAPES="257x520x200 3x136x72 1000x1000x1000 2113x1800x1000 16x4096x14336 4096x4096x72" PROBES=.probes13 bash bench/gemm_hopper_probe.sh "${NEW[@]}"
for round in 1 2; do
  echo "#### round $round new"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes13 bash bench/gemm_hopper_probe.sh "${NEW[@]}"
  echo "#### round $round old"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes13old bash bench/gemm_hopper_probe.sh "${OLD[@]}"
done
