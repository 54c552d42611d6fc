#!/usr/bin/env python3
"""PyTorch eager / cuBLAS timings of the problems amk tunes, for bench/perf_all.sh.

  peers.py KERNEL:SHAPE...      e.g. rmsnorm:M=32768,N=4096,dtype=bf16 gemm:M=4096,N=4096,K=4096,dtype=f32

One JSON line per problem on stdout: {kernel, shape, peer, us, reps, spread, note} or
{kernel, shape, peer, error}. Everything runs in this one process (one CUDA context).
Timing: CUDA events around the op only; before every timed call the L2 is flushed by
zeroing a buffer of twice the L2 size (outside the events), so every call starts cold as
amk's do (amk rotates input sets instead; both keep the inputs out of the L2). Median
of REPS calls (chosen for ~0.3 s of timed work, 10..200), after 3 warm-up calls.
Without torch or a GPU every problem prints an error line, so the caller's table says why.
"""
import json
import sys
import time


def cold_median(torch, fn, flush):
    """Median and IQR/median (µs) of fn timed with CUDA events, flush.zero_() before each call
    outside the events; 3 warm-up calls, then enough calls for ~0.3 s (10..200)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    est = max(time.perf_counter() - t0, 1e-6)
    reps = int(min(200, max(10, 0.3 / est)))
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(reps)]
    for s, e in ev:
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    ts = sorted(s.elapsed_time(e) * 1e3 for s, e in ev)
    med = ts[len(ts) // 2]
    return med, reps, (ts[(3 * len(ts)) // 4] - ts[len(ts) // 4]) / med


def sustained_pair(torch, fn, peer, flush, warm_s=1.0, rounds=100):
    """fn and peer in amk's sustained regime: both back to back for warm_s (the H100 reaches
    its power-capped clock within ~1 s), then `rounds` rounds timing each once with CUDA events
    around the call, flush.zero_() before each outside the events, the order swapped every
    round. Returns (fn median µs, peer median µs, ratio peer/fn): the ratio is what amk's
    vs_peer is, taken by a second harness."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warm_s:
        for _ in range(8):
            fn()
            peer()
        torch.cuda.synchronize()
    ev = {k: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(rounds)] for k in ("fn", "peer")}
    for i in range(rounds):
        order = (("fn", fn), ("peer", peer)) if i % 2 == 0 else (("peer", peer), ("fn", fn))
        for k, f in order:
            flush.zero_()
            ev[k][i][0].record()
            f()
            ev[k][i][1].record()
    torch.cuda.synchronize()
    med = {}
    for k in ev:
        ts = sorted(s.elapsed_time(e) * 1e3 for s, e in ev[k])
        med[k] = ts[len(ts) // 2]
    return med["fn"], med["peer"], med["peer"] / med["fn"]


def l2_flush_buffer(torch):
    """A buffer of twice the L2 (50 MiB assumed when torch does not say)."""
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (50 << 20)
    return torch.empty(2 * l2, dtype=torch.uint8, device="cuda")


def emit(obj):
    print(json.dumps(obj), flush=True)


def parse(arg):
    kernel, _, shape = arg.partition(":")
    dims, dtype = {}, None
    for part in shape.split(","):
        k, _, v = part.partition("=")
        if k == "dtype":
            dtype = v
        elif k:
            dims[k] = int(v)
    return kernel, shape, dims, dtype


def main(args):
    problems = [parse(a) for a in args]
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
    except Exception as e:  # ImportError, or a broken CUDA setup: say which, per problem
        for kernel, shape, _, _ in problems:
            emit({"kernel": kernel, "shape": shape, "peer": "PyTorch",
                  "error": "not available (%s)" % str(e).splitlines()[0][:120]})
        return 0

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    flush = l2_flush_buffer(torch)
    l2 = flush.numel() // 2
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)

    def rand(shape, dtype, lo=-1.0, hi=1.0):
        x = torch.empty(shape, dtype=torch.float32, device=dev).uniform_(lo, hi, generator=gen)
        return x.to(dtype)

    def quant(x, qmax, out_dtype, rounding):
        amax = x.abs().amax().float()
        scale = torch.clamp(amax / qmax, min=1e-12)
        y = x.float() / scale
        if rounding:
            y = torch.round(y)
        return y.clamp(-qmax - (1 if rounding else 0), qmax).to(out_dtype), scale

    for kernel, shape, d, dtype in problems:
        rec = {"kernel": kernel, "shape": shape}
        try:
            note = ""
            if kernel == "copy":
                x = rand((d["N"],), dt[dtype or "f32"])
                y = torch.empty_like(x)
                rec["peer"] = "y.copy_(x)"
                fn = lambda: y.copy_(x)
            elif kernel == "rmsnorm":
                x = rand((d["M"], d["N"]), dt[dtype])
                w = rand((d["N"],), dt[dtype], 0.5, 1.5)
                rec["peer"] = "F.rms_norm"
                fn = lambda: torch.nn.functional.rms_norm(x, (d["N"],), w, 1e-6)
            elif kernel == "softmax":
                x = rand((d["M"], d["N"]), dt[dtype])
                rec["peer"] = "torch.softmax"
                fn = lambda: torch.softmax(x, -1)
            elif kernel == "quant_per_tensor":
                x = rand((d["M"], d["N"]), torch.bfloat16)
                if dtype == "int8":
                    rec["peer"] = "amax+div+round+clamp+to(int8)"
                    fn = lambda: quant(x, 127.0, torch.int8, True)
                else:
                    rec["peer"] = "amax+div+clamp+to(float8_e4m3fn)"
                    fn = lambda: quant(x, 448.0, torch.float8_e4m3fn, False)
            elif kernel == "gemv":
                W = rand((d["N"], d["K"]), dt[dtype or "bf16"])
                v = rand((d["K"],), dt[dtype or "bf16"])
                rec["peer"] = "torch.mv"
                note = "torch.mv writes %s, amk writes f32" % (dtype or "bf16")
                fn = lambda: torch.mv(W, v)
            elif kernel in ("gemm", "gemm_tc", "gemm_wgmma", "gemm_hopper"):
                t = dt[dtype or "f32"]
                a = rand((d["M"], d["K"]), t)
                b = rand((d["K"], d["N"]), t)
                rec["peer"] = "torch.matmul %s (cuBLAS%s)" % (
                    dtype or "f32", ", TF32 off" if t == torch.float32 else "")
                if kernel in ("gemm_tc", "gemm_wgmma"):
                    note = "cuBLAS writes C in %s, amk in f32" % dtype
                fn = lambda: torch.matmul(a, b)
            elif kernel == "gemm_hopper_fp8":
                a = rand((d["M"], d["K"]), torch.float32, -4.0, 4.0).to(torch.float8_e4m3fn)
                b = rand((d["N"], d["K"]), torch.float32, -4.0, 4.0).to(torch.float8_e4m3fn)
                sa = torch.tensor(0.5, device=dev)
                sb = torch.tensor(0.25, device=dev)
                rec["peer"] = "torch._scaled_mm e4m3 -> bf16 (cuBLASLt)"
                # B K-major (b.t() of an N x K row-major tensor), as amk's kernel takes it.
                fn = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb,
                                              out_dtype=torch.bfloat16)
            else:
                raise ValueError("no peer for kernel %s" % kernel)
            us, reps, spread = cold_median(torch, fn, flush)
            rec.update({"us": us, "reps": reps, "spread": round(spread, 4),
                        "note": "; ".join(x for x in (note, "cold L2 (flush %d MiB)" % (2 * l2 >> 20)) if x)})
        except Exception as e:  # one failing peer is a row with its error, not a lost section
            rec.setdefault("peer", "PyTorch")
            rec["error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:160]
        emit(rec)
        torch.cuda.empty_cache()
    emit({"torch": torch.__version__, "device": props.name, "l2_bytes": l2})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
