#!/usr/bin/env python3
"""Triton's autotuner on an fp16 matmul, timed the way a user meets it: the first call.

  triton_autotune.py [M N K]          (default 4096 4096 4096)

A tiled fp16 matmul (f32 accumulation, fp16 out) written for this benchmark, under
`triton.autotune` with exactly 72 configs (tiles x BK x GROUP_M x num_warps x num_stages).
TRITON_CACHE_DIR is pointed at a fresh temporary folder before triton is imported, so every
config is really compiled. A tiny unrelated kernel runs first so that CUDA context creation
and Triton's one-time driver build are not charged to the tuning. Timed: the wall clock of
the first call (compile + benchmark of all 72 configs, result synchronised), then the result
is verified against torch.matmul and the tuned kernel is timed again cold-L2 like the peers
(bench/peers.py). Prints one JSON object: {triton, configs, wall_s, best_config, best_us,
best_tflops, verified, max_abs_diff, note} or {error}.
"""
import itertools
import json
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing peers.py must not leave bench/__pycache__ behind
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def configs(triton):
    """72 = 3 tile shapes x 2 BK x 2 GROUP_M x 2 num_warps x 3 num_stages."""
    out = []
    for (bm, bn), bk, gm, warps, stages in itertools.product(
            [(128, 128), (128, 256), (256, 128)], [32, 64], [1, 8], [4, 8], [2, 3, 4]):
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm},
                                 num_warps=warps, num_stages=stages))
    return out


def build(triton, tl):
    @triton.autotune(configs=configs(triton), key=["M", "N", "K"])
    @triton.jit
    def mm_f16(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
        # Tiles are numbered in bands of GROUP_M tile rows, walked column by column inside a
        # band, so the blocks running together share their B columns in L2.
        t = tl.program_id(0)
        cols = tl.cdiv(N, BN)
        per_band = GROUP_M * cols
        band_row = (t // per_band) * GROUP_M
        band_rows = tl.minimum(tl.cdiv(M, BM) - band_row, GROUP_M)
        r = band_row + (t % per_band) % band_rows
        q = (t % per_band) // band_rows
        rm = r * BM + tl.arange(0, BM)
        cn = q * BN + tl.arange(0, BN)
        kk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + kk[None, :] * sak
        pb = b + kk[:, None] * sbk + cn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K // BK):  # the host guarantees BK | K, BM | M, BN | N: no masks
            acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BK * sak
            pb += BK * sbk
        tl.store(c + rm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16))

    @triton.jit
    def warm(x, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + i, tl.load(x + i, mask=i < n) + 1, mask=i < n)

    return mm_f16, warm


def amk_beside(torch, run, c, a, b, ref, flush):
    """With $AMK_TUNED (a database `amk export` wrote from amk's race), amk's best config
    launched through amk.torch and Triton's best timed side by side by one harness, in one
    process, in the sustained regime (peers.sustained_pair): the second harness for "amk's
    best >= Triton's best" (amk's own is its run worker, each against cuBLAS). None without
    it; {"error"} when amk.torch cannot run here."""
    path = os.environ.get("AMK_TUNED")
    if not path:
        return None
    from peers import sustained_pair
    try:
        import amk.torch as at
        at.load(path)
        amk_fn = lambda: torch.ops.amk.gemm_hopper(a, b)
        got = amk_fn()
        torch.cuda.synchronize()
    except Exception as e:  # the package or the database is not usable here: say why
        return {"error": "amk.torch: %s" % str(e).splitlines()[0][:200]}
    diff = (got.float() - ref.float()).abs().max().item()
    amk_us, tri_us, ratio = sustained_pair(torch, amk_fn, run, flush)
    return {"amk_us": round(amk_us, 3), "triton_us": round(tri_us, 3),
            "amk_over_triton": round(ratio, 4), "amk_max_abs_diff": diff,
            "amk_verified": diff <= 1e-2 * ref.float().abs().max().item(),
            "note": "amk.torch (database %s) and Triton's best interleaved, sustained, one "
                    "harness; amk_over_triton = Triton µs / amk µs (> 1: amk faster)"
                    % os.path.basename(path)}


def main(argv):
    M, N, K = (int(v) for v in argv[:3]) if len(argv) >= 3 else (4096, 4096, 4096)
    cache = tempfile.mkdtemp(prefix="triton-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache  # before the import: triton reads it once
    try:
        import torch
        import triton
        import triton.language as tl
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
    except Exception as e:
        print(json.dumps({"error": "not available (%s)" % str(e).splitlines()[0][:160]}))
        return 0
    from peers import cold_median, l2_flush_buffer, sustained_pair

    if M % 256 or N % 256 or K % 64:
        print(json.dumps({"error": "M, N must be multiples of 256 and K of 64 (no masks)"}))
        return 0
    mm, warm = build(triton, tl)
    x = torch.zeros(1024, device="cuda")
    warm[(1,)](x, 1024, BLOCK=1024)
    torch.cuda.synchronize()

    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    a = (torch.rand(M, K, device="cuda", generator=g) * 2 - 1).half()
    b = (torch.rand(K, N, device="cuda", generator=g) * 2 - 1).half()
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    run = lambda: mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           c.stride(0), c.stride(1))

    t0 = time.perf_counter()
    run()  # autotuning happens here: compile and benchmark every config
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0

    ref = torch.matmul(a, b)
    diff = (c.float() - ref.float()).abs().max().item()
    ok = diff <= 1e-2 * ref.float().abs().max().item()
    flush = l2_flush_buffer(torch)
    us, reps, spread = cold_median(torch, run, flush)
    c2 = torch.empty_like(c)
    sus_us, sus_peer_us, vs_peer = sustained_pair(torch, run, lambda: torch.matmul(a, b, out=c2),
                                                  flush)
    both = amk_beside(torch, run, c, a, b, ref, flush)
    best = mm.best_config
    timings = getattr(mm, "configs_timings", None) or {}
    failed = sum(1 for v in timings.values()
                 if not all(isinstance(t, float) and t < float("inf") for t in (v if isinstance(v, (list, tuple)) else [v])))
    n = len(mm.configs)
    print(json.dumps({
        "triton": triton.__version__, "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0), "shape": [M, N, K], "configs": n,
        "wall_s": round(wall, 3), "s_per_config": round(wall / n, 4),
        "best_config": "%s num_warps=%d num_stages=%d" % (
            " ".join("%s=%d" % kv for kv in sorted(best.kwargs.items())), best.num_warps,
            best.num_stages),
        "best_us": round(us, 3), "best_tflops": round(2.0 * M * N * K / us / 1e6, 2),
        "spread": round(spread, 4), "reps": reps, "verified": ok, "max_abs_diff": diff,
        "sustained_us": round(sus_us, 3), "sustained_peer_us": round(sus_peer_us, 3),
        "vs_peer": round(vs_peer, 4), "peer": "torch.matmul (cuBLAS)", "amk_beside": both,
        "note": "first call of the autotuned kernel timed (compile + benchmark of %d configs, "
                "fresh TRITON_CACHE_DIR)%s; result %s torch.matmul (max |diff| %.3g); best "
                "timed cold-L2, median of %d; vs_peer: the best and torch.matmul interleaved in the sustained regime (1 s of both first)" % (
                    n, ", %d configs failed (out of resources)" % failed if failed else "",
                    "matches" if ok else "DOES NOT MATCH", diff, reps)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
