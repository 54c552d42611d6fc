#!/usr/bin/env bash
# s37 call 1 (H100), issue 21: consumer 1 starting each whole tile GH_LAG K steps after consumer 0 (so the two
# consumers' epilogues stop falling together and the other's wgmmas run during each), c0-P4 and 128x256 4 stages
# E2 P4 at lag 0/1/2 (and 3 for the 4-stage one); probes built with NVCC=nvcc -DGH_LAG=L; then which kernel cuBLAS
# (torch.matmul) runs at the two shapes.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
bash bench/card.sh
C0="128 256 64 3 2 1 1 1 4 16 1"; C4="128 256 64 4 2 1 1 1 4 16 2"
for L in 0 1 2; do SHAPES="257x520x200 3000x5000x1000 4096x4096x72" PROBES=.probesL$L bash bench/gemm_hopper_probe.sh "$C0" "$C4" | grep -c "^ok"; done
SHAPES="3000x5000x1000" PROBES=.probesL3 bash bench/gemm_hopper_probe.sh "$C4" | grep -c "^ok"
for round in 1 2; do
  echo "#### round $round"
  for L in 0 1 2; do echo "## lag $L"; SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probesL$L timeout 100 bash bench/gemm_hopper_probe.sh "$C0" "$C4" | grep -v "^NVIDIA\|max active"; done
  echo "## lag 3"; SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probesL3 timeout 60 bash bench/gemm_hopper_probe.sh "$C4" | grep -v "^NVIDIA\|max active"
done
for L in 0 1 2; do echo "## lag $L 8192^3"; SHAPES=8192x8192x8192 REGIMES="burst" PROBES=.probesL$L timeout 60 bash bench/gemm_hopper_probe.sh "$C0" "$C4" | grep -v "^NVIDIA\|max active"; done
timeout 60 python3 - <<'PY'
import torch
from torch.profiler import profile, ProfilerActivity
for (m, n, k) in [(8192, 14336, 4096), (8192, 8192, 8192), (4096, 4096, 4096)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    torch.matmul(a, b); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a, b); torch.cuda.synchronize()
    print(m, n, k, [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA])
PY
