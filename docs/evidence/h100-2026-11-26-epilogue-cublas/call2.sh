#!/usr/bin/env bash
# s31 call 2 (H100): what cuBLAS runs at gemm_hopper's shapes (cuBLASLt heuristic candidates,
# torch.matmul's kernel names), and EPILOGUE 2's probes (built from 25994fe) against c0 on the H100.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
for s in "4096 4096 4096" "8192 8192 8192" "8192 14336 4096" "16 4096 14336"; do
  timeout 60 .probes/cublas_algos $s 8 >> $R/algos.txt 2>&1
done
el "algos"
timeout 120 python3 - > $R/torch_kernels.txt 2>&1 <<'PY'
import torch
from torch.profiler import profile, ProfilerActivity
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
for (M, N, K) in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (16, 4096, 14336)]:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a, b)
        torch.cuda.synchronize()
    names = sorted({e.key for e in p.key_averages() if e.device_type.name == "CUDA" or "gemm" in e.key})
    print(f"M={M} N={N} K={K}:", " | ".join(names))
PY
el "torch kernels rc $?"
SHAPES="8192x14336x4096 8192x8192x8192" REGIMES="sustained burst" PROBES=$PWD/.probes timeout 200 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 4 2 1 1 1 1 16 2" "128 256 64 4 2 1 1 1 3 16 2" "128 256 64 4 2 1 2 1 1 16 2" "128 256 64 3 2 1 1 1 1 16 2" > $R/probe_e2.log 2>&1
el "probe e2 rc $?"
cd $OUT && rm -rf r
