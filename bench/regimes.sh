#!/usr/bin/env bash
# Issue 21's measurement check, one device call: gemm_hopper's exported configs against
# cuBLAS in both clock/power regimes, timed two independent ways in the same call:
#   1. amk's own harness: `amk evaluate --backend gpu --regime R` (the spec's peer, cuBLAS's
#      cublasGemmEx, timed interleaved with the candidate on the same buffers): vs_peer,
#      with the clocks, power and energy the row observed;
#   2. bench/gemm_hopper_probe.cu (a separate program: its own tensor maps, launch and event
#      loop) timing the same config and cublasGemmEx interleaved with identical code.
# The table prints both ratios side by side and their difference (issue 21: within 2 %).
#
# usage: bench/regimes.sh [CONFIG ...]   from the repository root
#   CONFIG as gemm_hopper_probe.sh takes it: "BM BN BK STAGES CONSUMERS REGS CLUSTER_M
#   CLUSTER_N PERSISTENT GROUP_M EPILOGUE" (default: the tuned 1x1 and 2x1 persistent configs)
# env: AMK (build/amk), OUT (/tmp/amk-regimes), SHAPES ("4096x4096x4096 8192x8192x8192
#      8192x14336x4096"), REGIMES ("sustained burst"), PROBES=DIR (probes built earlier with
#      KEEP=DIR bench/gemm_hopper_probe.sh: the GPU machine lacks cJSON headers for the prelude)
# Device command:
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
#   OUT=$OUT PROBES=$PWD/.probes bench/regimes.sh
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-regimes}
SHAPES=${SHAPES:-"4096x4096x4096 8192x8192x8192 8192x14336x4096"}
REGIMES=${REGIMES:-"sustained burst"}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=("128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1")
names=(BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE)
rows=$OUT/regimes.tsv
printf 'config\tshape\tregime\tharness\tstatus\tus\ttflops\tpeer_us\tratio\tsm_mhz\tpower_w\tenergy_uj\tthrottle\n' >"$rows"

# 1. amk's own harness.
for ((j = 0; j < ${#configs[@]}; j++)); do
    read -r -a v <<<"${configs[$j]}"
    params=$(for k in "${!names[@]}"; do printf '"%s":%s,' "${names[$k]}" "${v[$k]}"; done)
    for s in $SHAPES; do
        IFS=x read -r m n k <<<"$s"
        printf '{"kernel":"gemm_hopper","shape":{"M":%s,"N":%s,"K":%s,"dtype":"bf16"},"params":{%s}}\n' \
            "$m" "$n" "$k" "${params%,}" >"$OUT/c$j.json"
        for r in $REGIMES; do
            "$AMK" evaluate "$OUT/c$j.json" --backend gpu --regime "$r" --results "$OUT/amk.tsv" \
                --quiet >"$OUT/v.json" 2>>"$OUT/amk.err"
            python3 - "$OUT/v.json" "$j" "$s" "$r" "$m" "$n" "$k" >>"$rows" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
j, s, r, m, n, k = sys.argv[2:8]
fl = 2.0 * int(m) * int(n) * int(k)
f = lambda x, p="%.1f": "" if x is None else p % x
us = v.get("latency_us")
print("\t".join([j, s, r, "amk", v["status"], f(us), f(fl / us / 1e6 if us else None),
                 f(v.get("peer_us")), f(v.get("vs_peer"), "%.3f"), f(v.get("sm_mhz"), "%.0f"),
                 f(v.get("power_w"), "%.0f"), f(v.get("energy_uj"), "%.0f"),
                 v.get("throttle") or ""]))
PY
        done
    done
done

# 2. The independent harness.
probe_out=$OUT/probe.txt
REGIMES="$REGIMES" SHAPES="$SHAPES" bash "$HERE/gemm_hopper_probe.sh" "${configs[@]}" \
    >"$probe_out" 2>&1
python3 - "$probe_out" >>"$rows" <<'PY'
import re, sys
cfg = -1
for line in open(sys.argv[1]):
    if line.startswith("== config"):
        cfg += 1
        continue
    m = re.match(r"(sustained|burst): (ok|WRONG) M=(\d+) N=(\d+) K=(\d+).*?: ([\d.]+) us ([\d.]+) "
                 r"TFLOP/s \| cuBLAS ([\d.]+) us [\d.]+ TFLOP/s \| ratio ([\d.]+)", line)
    if m:
        r, st, M, N, K, us, tf, cb, ratio = m.groups()
        print("\t".join([str(cfg), f"{M}x{N}x{K}", r, "probe", st, us, tf, cb, ratio, "", "",
                         "", ""]))
PY

# 3. Side by side, under the card's identity: cards of one model differ by about 1 % in these
# ratios (evidence h100-2026-11-26-stores), so a comparison across calls needs to know which ran.
{ bash "$HERE/card.sh"; echo; } | tee "$OUT/regimes_table.md"
python3 - "$rows" <<'PY' | tee -a "$OUT/regimes_table.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
key = lambda r: (r["config"], r["shape"], r["regime"])
amk = {key(r): r for r in rows if r["harness"] == "amk"}
probe = {key(r): r for r in rows if r["harness"] == "probe"}
print("| config | shape | regime | amk us | amk TFLOP/s | cuBLAS us (amk) | vs_peer (amk) | ratio (probe) | diff | SM MHz | W | uJ/launch | throttle |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(amk):
    a, p = amk[k], probe.get(k, {})
    try:
        diff = "%+.1f%%" % (100 * (float(a["ratio"]) / float(p["ratio"]) - 1))
    except (KeyError, ValueError, ZeroDivisionError):
        diff = "-"
    print(f"| {k[0]} | {k[1]} | {k[2]} | {a['us']} | {a['tflops']} | {a['peer_us']} | {a['ratio']} | "
          f"{p.get('ratio', '-')} | {diff} | {a['sm_mhz']} | {a['power_w']} | {a['energy_uj']} | {a['throttle']} |")
PY
