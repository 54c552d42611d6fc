"""How an NVIDIA GPU's clock, power, temperature and energy counter move under a steady load:
torch.matmul (bf16, default 8192^3) back to back for SECONDS after an idle gap, NVML read
every PERIOD ms through ctypes (no pynvml needed). Prints one line per reading and a summary:
when the SM clock left its idle-start value, where it settled, how often the energy counter
advanced (its update period), and the mean power from the counter against the power readings.
It is the evidence behind amk's sustained regime (docs/GPU.md "Regimes").

usage: python3 bench/clock_trace.py [SECONDS] [PERIOD_MS] [M N K]
"""
import ctypes, sys, time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
period = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
M, N, K = (int(x) for x in sys.argv[3:6]) if len(sys.argv) > 5 else (8192, 8192, 8192)
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
u = ctypes.c_uint()
ull = ctypes.c_ulonglong()


def read():
    r = {"t": time.perf_counter()}
    nv.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(u)); r["sm"] = u.value
    nv.nvmlDeviceGetPowerUsage(h, ctypes.byref(u)); r["w"] = u.value / 1e3
    nv.nvmlDeviceGetTemperature(h, 0, ctypes.byref(u)); r["c"] = u.value
    nv.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(ull)); r["mj"] = ull.value
    nv.nvmlDeviceGetCurrentClocksThrottleReasons(h, ctypes.byref(ull)); r["thr"] = ull.value
    return r


a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
torch.matmul(a, b); torch.cuda.synchronize()
time.sleep(1.0)
rows, t0, nxt = [], time.perf_counter(), 0.0
ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
while time.perf_counter() - t0 < secs:
    ev[0].record()
    for _ in range(4):
        torch.matmul(a, b)
    ev[1].record()
    ev[1].synchronize()
    if time.perf_counter() - t0 >= nxt:
        r = read()
        r["tflops"] = 4 * 2.0 * M * N * K / (ev[0].elapsed_time(ev[1]) * 1e-3) / 1e12
        rows.append(r)
        nxt += period / 1e3
for r in rows:
    print("%7.3f s  sm %4d MHz  %6.1f W  %3d C  energy %12d mJ  thr 0x%03x  %6.1f TFLOP/s" % (
        r["t"] - t0, r["sm"], r["w"], r["c"], r["mj"], r["thr"], r["tflops"]))
steps = [(b["t"] - a["t"], b["mj"] - a["mj"]) for a, b in zip(rows, rows[1:])]
adv = [i for i, (dt, de) in enumerate(steps) if de > 0]
gaps = [rows[j + 1]["t"] - rows[i + 1]["t"] for i, j in zip(adv, adv[1:])]
span = rows[-1]["t"] - rows[0]["t"]
print("readings %d over %.2f s; energy counter advanced at %d of %d readings, median gap %.0f ms" % (
    len(rows), span, len(adv), len(steps), 1e3 * sorted(gaps)[len(gaps) // 2] if gaps else -1))
print("mean power: counter %.1f W, readings %.1f W" % (
    (rows[-1]["mj"] - rows[0]["mj"]) / 1e3 / span, sum(r["w"] for r in rows) / len(rows)))
first_drop = next((r["t"] - t0 for r in rows if r["sm"] < rows[0]["sm"] * 0.98), None)
tail = rows[len(rows) * 3 // 4:]
print("SM clock: start %d MHz, first 2%% drop at %s, last quarter %d..%d MHz (%.0f TFLOP/s)" % (
    rows[0]["sm"], "%.2f s" % first_drop if first_drop is not None else "never",
    min(r["sm"] for r in tail), max(r["sm"] for r in tail),
    sum(r["tflops"] for r in tail) / len(tail)))
