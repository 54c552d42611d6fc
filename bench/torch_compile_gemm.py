#!/usr/bin/env python3
"""Issue 22's target: amk.torch's gemm_hopper (bf16 8192^3 by default) inside a torch.compile'd
function runs within 2 % of the same config launched by `amk evaluate`, and correctly.

  PYTHONPATH=<the package> python3 bench/torch_compile_gemm.py [--amk build/amk] [--M 8192 ...]

The config is the spec's default at the shape (what amk.torch runs without a tuned database).
The two sides are timed by different harnesses, so each is taken against cuBLAS timed beside
it in the same regime (sustained), and the ratios are compared: `amk evaluate`'s vs_peer
(amk's run worker, cublasGemmEx interleaved) and the compiled function against torch.matmul
(bench/peers.py sustained_pair). Prints one JSON line.
"""
import argparse
import json
import os
import subprocess
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import l2_flush_buffer, sustained_pair  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--amk", default=os.environ.get("AMK", "build/amk"))
    ap.add_argument("--M", type=int, default=8192)
    ap.add_argument("--N", type=int, default=8192)
    ap.add_argument("--K", type=int, default=8192)
    a = ap.parse_args(argv)
    shape = {"M": a.M, "N": a.N, "K": a.K, "dtype": "bf16"}
    text = "M=%d,N=%d,K=%d,dtype=bf16" % (a.M, a.N, a.K)
    space = json.loads(subprocess.check_output([a.amk, "space", "gemm_hopper", "--shape", text]))
    params = {k: v["default"] for k, v in space["params"].items()}
    config = json.dumps({"kernel": "gemm_hopper", "shape": shape, "params": params})
    verdict = json.loads(subprocess.run([a.amk, "evaluate", "-", "--backend", "gpu",
                                         "--regime", "sustained"], input=config, text=True,
                                        capture_output=True, check=True).stdout)

    import amk.torch  # noqa: F401: registers torch.ops.amk
    g = torch.Generator(device="cuda").manual_seed(1)
    x = (torch.rand(a.M, a.K, device="cuda", generator=g) - 0.5).bfloat16()
    w = (torch.rand(a.K, a.N, device="cuda", generator=g) - 0.5).bfloat16()
    f = torch.compile(lambda p, q: torch.ops.amk.gemm_hopper(p, q), fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no database: the default config, as evaluated
        got = f(x, w)
    ref = torch.matmul(x, w)
    err = (got.float() - ref.float()).abs().max().item() / ref.float().abs().max().item()
    out = torch.empty_like(ref)
    us, peer_us, vs_peer = sustained_pair(torch, lambda: f(x, w),
                                          lambda: torch.matmul(x, w, out=out),
                                          l2_flush_buffer(torch))
    amk_vs = verdict.get("vs_peer")
    res = {"shape": text, "params": params, "device": torch.cuda.get_device_name(0),
           "evaluate": {"status": verdict.get("status"), "latency_us": verdict.get("latency_us"),
                        "vs_peer": amk_vs, "peer_us": verdict.get("peer_us"),
                        "sm_mhz": verdict.get("sm_mhz")},
           "compiled": {"us": round(us, 2), "peer_us": round(peer_us, 2),
                        "vs_peer": round(vs_peer, 4), "max_rel_err": err},
           "correct": err <= 1e-2}
    if amk_vs:
        res["compiled_over_evaluate"] = round(vs_peer / amk_vs, 4)
        res["within_2pct"] = abs(vs_peer / amk_vs - 1) <= 0.02
    print(json.dumps(res))
    return 0 if res["correct"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
