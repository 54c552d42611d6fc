#!/usr/bin/env bash
# Smoke test of bench/search_vs_kerneltuner.sh --quick: it builds its venv (kernel_tuner and
# autotuning-methodology from PyPI) and writes a table with amk's default strategy and Kernel
# Tuner's random_sample scored, and the plot. SKIPs (77) when the venv cannot be built here
# (no network, no python3-venv).
# Run as: bash bench_search_quick.sh AMK_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
AMK=$1 SRC=$2 BUILD=$3
OUT=$(mktemp -d "${TMPDIR:-/tmp}/amk-bench-search.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
set +e
AMK="$AMK" BUILD="$BUILD" OUT="$OUT" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --quick >"$OUT.log" 2>&1
rc=$?
set -e
cat "$OUT.log"
rm -f "$OUT.log"
if [ "$rc" -eq 77 ]; then
    echo "bench_search_quick: SKIP: the bench venv cannot be built here"
    exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: search_vs_kerneltuner.sh --quick exited $rc"; exit 1; }
for f in table.md scores.json curves.png curves.svg; do
    [ -s "$OUT/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
grep -q '^| amk evolve (default) | -\?[0-9.]* ± ' "$OUT/table.md" ||
    { echo "FAIL: table.md lacks amk's default strategy's score"; exit 1; }
grep -q '^| KT random_sample | -\?[0-9.]* ± ' "$OUT/table.md" ||
    { echo "FAIL: table.md lacks Kernel Tuner random_sample's score"; exit 1; }

grep -q '^amk evolve (default), time score: ' "$OUT/table.md" ||
    { echo "FAIL: table.md lacks the per-pair verdicts"; exit 1; }
grep -q "^The issue's per-pair target as written" "$OUT/table.md" ||
    { echo "FAIL: table.md lacks the target as written"; exit 1; }
grep -q "^The issue's aggregate target" "$OUT/table.md" ||
    { echo "FAIL: table.md lacks the aggregate target"; exit 1; }

# The per-pair verdicts on made-up scores: a clear gap either way is won or lost, an overlap
# within noise, a lower bound significantly above amk a loss, and a win over the exact
# strategies open while the upper bound of a strategy known between bounds is not below amk,
# won where it is.
VENV=${VENV:-$BUILD/bench-venv}
"$VENV/bin/python" - "$SRC/bench" <<'PY' || { echo "FAIL: pair_verdicts"; exit 1; }
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import search_vs_kerneltuner as b

rng = np.random.default_rng(1)
seeds = range(20)
def draws(mean, sd):
    return {s: float(v) for s, v in zip(seeds, rng.normal(mean, sd, len(seeds)))}
me, ga, bo = ("amk", b.AMK_DEFAULT), ("kt", "genetic_algorithm"), ("kt", "bayes_opt")
names = ["won", "lost", "noise", "bound_lost", "open", "bound_won"]
amk = {"won": 0.9, "lost": 0.3, "noise": 0.5, "bound_lost": 0.5, "open": 0.9, "bound_won": 0.9}
exact = {"won": 0.3, "lost": 0.9, "noise": 0.5, "bound_lost": 0.5, "open": 0.3,
         "bound_won": 0.3}
bound = {"won": 0.1, "lost": 0.1, "noise": 0.1, "bound_lost": 0.9, "open": 0.6,
         "bound_won": 0.5}
above = {"won": 0.1, "lost": 0.1, "noise": 0.1, "bound_lost": 0.95, "open": 0.95,
         "bound_won": 0.7}
score = {me: {n: draws(amk[n], 0.05) for n in names}, ga: {n: draws(exact[n], 0.05) for n in names},
         bo: {n: draws(bound[n], 0.05) for n in names}}
upper = {**score, bo: {n: draws(above[n], 0.05) for n in names}}
hand = {ts: {n: [{200: 1.0 + 0.01 * i} for i in range(20)] for n in names} for ts in score}
low = {(ts, n): ts == bo and n != "won" for ts in score for n in names}
_, v = b.pair_verdicts(names, score, upper, hand, low, list(score), lambda ts: ts[1])
t = v["time"]
assert t["won"] == "won" and t["lost"] == "lost" and t["noise"] == "within noise", t
assert t["bound_lost"] == "lost" and t["open"].startswith("open"), t
assert t["bound_won"].startswith("won (over the upper bounds of bayes_opt"), t
assert v["at200"]["won"] == "within noise", v["at200"]
d, lo, hi = b.welch([1.0, 1.1, 0.9, 1.05], [0.0, 0.1, -0.1, 0.05])
assert abs(d - 1.0) < 1e-12 and 0 < lo < d < hi, (d, lo, hi)
assert b.welch([1.0], [0.0])[1:] == (-np.inf, np.inf)  # one seed: never decided
print("pair_verdicts: ok")

# The issue's per-pair target as written: against the strategy best on the package's
# estimator there, at 200 against that same one (no figure where its runs end before 200).
pkg = {(me, "a"): 0.6, (ga, "a"): 0.5, (bo, "a"): 0.7, (me, "b"): 0.9, (ga, "b"): 0.4,
       (bo, "b"): 0.3}
sd = {k: 0.001 for k in pkg}
hand = {me: {"a": [{200: 1.01}], "b": [{200: 1.0}]},
        ga: {"a": [{200: 1.0}], "b": [{200: float("nan")}]},
        bo: {"a": [{200: 1.02}], "b": [{200: 1.05}]}}
low = {(ts, n): False for ts in hand for n in "ab"}
_, tw = b.target_as_written(["a", "b"], pkg, sd, hand, low, list(hand), lambda ts: ts[1])
assert tw["a"] == {"against": "bayes_opt", "package": "unmet", "at200": "met"}, tw
assert tw["b"]["against"] == "genetic_algorithm" and tw["b"]["package"] == "met", tw
assert tw["b"]["at200"].startswith("no figure"), tw
low[(ga, "b")] = True  # a lower bound: met is only open
_, tw = b.target_as_written(["a", "b"], pkg, sd, hand, low, list(hand), lambda ts: ts[1])
assert tw["b"]["package"].startswith("open"), tw
# The aggregate target: a margin beyond twice the spread over seeds, or not.
score = {me: {n: draws(0.9, 0.05) for n in "ab"}, ga: {n: draws(0.3, 0.05) for n in "ab"},
         bo: {n: draws(0.85, 0.3) for n in "ab"}}
at = b.aggregate_target(["a", "b"], score, list(score), lambda ts: ts[1])
rows = {l.split("|")[1].strip(): l for l in at.splitlines() if l.startswith("| ")}
assert rows["genetic_algorithm"].endswith("| met | met |"), at
assert rows["bayes_opt"].endswith("| unmet | met |"), at
assert "Met against 1 of 2 Kernel Tuner strategies with the spread of the difference, 2 of 2 " \
    "with amk's own" in at, at
print("targets: ok")
PY

# A partial cachefile Kernel Tuner left unclosed (its first 1500 records of convolution_milo
# W6600, one per line as Kernel Tuner writes them, no closing braces): replayed as its
# recorded configs by both tools with --replay-partial, Kernel Tuner's 200-evaluation run
# scored on the time budget with --kt-evals-only; left out without --replay-partial.
P="$OUT/partial"
mkdir -p "$P/cachefiles/convolution_milo"
cp -r "$SRC/space_defs/data/benchmark_hub/spaces" "$P/"
"$VENV/bin/python" - "$SRC/space_defs/data/benchmark_hub/cachefiles/convolution_milo/W6600.json.gz" \
    "$P/cachefiles/convolution_milo/W6600.json.gz" <<'PY'
import gzip, json, sys
c = json.load(gzip.open(sys.argv[1], "rt"))
head = {k: v for k, v in c.items() if k != "cache"}
lines = json.dumps(head)[:-1] + ', "cache": {\n'
for k, e in list(c["cache"].items())[:1500]:
    lines += json.dumps(k) + ": " + json.dumps(e) + ",\n"
gzip.open(sys.argv[2], "wt").write(lines)
PY
run_partial() {
    AMK="$AMK" BUILD="$BUILD" OUT="$OUT/p-out" VENV_FAIL_RC=77 JOBS=2 \
        bash "$SRC/bench/search_vs_kerneltuner.sh" --cachefiles "$P/cachefiles" --seeds 1 \
        --amk-strategies evolve --kt-strategies "" --kt-evals-only random_sample --no-package "$@"
}
run_partial --replay-partial >"$OUT/p.log" 2>&1 || { cat "$OUT/p.log"; echo "FAIL: --replay-partial"; exit 1; }
grep -q 'Replayed as their recorded configs only.*convolution_milo/W6600 (1500 of 4362; unclosed)' \
    "$OUT/p-out/table.md" || { cat "$OUT/p-out/table.md"; echo "FAIL: partial file not replayed"; exit 1; }
grep -q '^| KT random_sample (200-evaluation runs) | 1 | ' "$OUT/p-out/table.md" ||
    { echo "FAIL: no time score of the 200-evaluation run"; exit 1; }
if run_partial >"$OUT/p.log" 2>&1; then
    echo "FAIL: the partial file was scored without --replay-partial"; exit 1
fi
grep -q 'partial cachefile (1500 records, 4362 valid configs, file unclosed); left out' "$OUT/p.log" ||
    { cat "$OUT/p.log"; echo "FAIL: the partial file was not listed as left out"; exit 1; }
# amk's own sweeps: scored over evaluations, the twin without the Default where one loads
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/s-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --sweeps gemm_wgmma --seeds 2 \
    --amk-strategies evolve,evolve@nodefault >"$OUT/s.log" 2>&1 ||
    { cat "$OUT/s.log"; echo "FAIL: --sweeps"; exit 1; }
grep -q '^| gemm_wgmma (M=4096,N=4096,K=4096,dtype=bf16) | 104 (104) | [0-9]* | -\?[0-9.]* ± .* | -\?[0-9.]* ± ' \
    "$OUT/s-out/sweeps.md" || { cat "$OUT/s-out/sweeps.md"; echo "FAIL: sweeps.md lacks gemm_wgmma's scores"; exit 1; }
grep -q 'No sweep records its trials' "$OUT/s-out/sweeps.md" ||
    { cat "$OUT/s-out/sweeps.md"; echo "FAIL: a sweep without costs was scored on time"; exit 1; }
# a sweep whose rows record their trials' cost (results v4, recorded on an H100): scored on
# its time budget too, on the recorded clock
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/s4-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --sweeps gemm_wgmma \
    --sweeps-dir "$SRC/tests/fixtures/sweeps-v4" --seeds 2 --amk-strategies evolve,random \
    >"$OUT/s4.log" 2>&1 || { cat "$OUT/s4.log"; echo "FAIL: --sweeps on a v4 sweep"; exit 1; }
grep -q '^| gemm_wgmma | [0-9.]* | 0\.9[0-9]* ± [0-9.]* | -\?[0-9.]* ± ' "$OUT/s4-out/sweeps.md" ||
    { cat "$OUT/s4-out/sweeps.md"; echo "FAIL: the v4 sweep has no time score (evolve > 0.9)"; exit 1; }
# the same sweep as a benchmark_hub pair (bench/sweeps_to_hub.py): Kernel Tuner's strategies
# beside amk's on it, the recorded configs only (--replay-partial)
python3 "$SRC/bench/sweeps_to_hub.py" "$SRC/tests/fixtures/sweeps-v4" "$OUT/hub" --gpu H100 \
    --amk "$AMK" >"$OUT/h.log" 2>&1 || { cat "$OUT/h.log"; echo "FAIL: sweeps_to_hub"; exit 1; }
grep -q 'sweep_gemm_wgmma/H100: 104 configs' "$OUT/h.log" || { cat "$OUT/h.log"; echo "FAIL: sweeps_to_hub's count"; exit 1; }
# --t1: the sweep as a pair of a given T1 space (its name, param order, Default, conditions,
# kernel name); a T1 space that lacks a recorded value is bad input (exit 2, naming a config)
python3 - "$OUT/hub/spaces/sweep_gemm_wgmma.json" "$OUT/t1" <<'PY' || { echo "FAIL: a T1 space for --t1"; exit 1; }
import json, os, sys
t1 = json.load(open(sys.argv[1]))
t1["ConfigurationSpace"]["TuningParameters"].reverse()
t1["KernelSpecification"]["KernelName"] = "wgmma_kernel"
t1["KernelSpecification"]["ProblemSize"] = [4096, 4096]
for d, drop in (("good", False), ("bad", True)):
    os.makedirs(f"{sys.argv[2]}/{d}", exist_ok=True)
    if drop:  # one recorded value missing from the space
        p = t1["ConfigurationSpace"]["TuningParameters"][0]
        p["Values"] = repr(eval(p["Values"])[1:])
    json.dump(t1, open(f"{sys.argv[2]}/{d}/gemm_wgmma.json", "w"))
PY
python3 "$SRC/bench/sweeps_to_hub.py" "$SRC/tests/fixtures/sweeps-v4" "$OUT/hub1" --gpu H100 \
    --amk "$AMK" --t1 "$OUT/t1/good/gemm_wgmma.json" >"$OUT/h1.log" 2>&1 &&
    grep -q 'gemm_wgmma/H100: 104 configs' "$OUT/h1.log" ||
    { cat "$OUT/h1.log"; echo "FAIL: sweeps_to_hub --t1"; exit 1; }
python3 - "$OUT/hub1" "$OUT/t1/good/gemm_wgmma.json" <<'PY' || { echo "FAIL: sweeps_to_hub --t1's pair"; exit 1; }
import json, sys
c = json.load(open(f"{sys.argv[1]}/cachefiles/gemm_wgmma/H100.json"))
t1 = json.load(open(sys.argv[2]))
names = [p["Name"] for p in t1["ConfigurationSpace"]["TuningParameters"]]
assert c["tune_params_keys"] == names, c["tune_params_keys"]
assert (c["kernel_name"], c["problem_size"]) == ("wgmma_kernel", [4096, 4096])
assert all(k == ",".join(str(e[n]) for n in names) for k, e in c["cache"].items())
assert json.load(open(f"{sys.argv[1]}/spaces/gemm_wgmma.json")) == t1
PY
set +e
python3 "$SRC/bench/sweeps_to_hub.py" "$SRC/tests/fixtures/sweeps-v4" "$OUT/hub2" --gpu H100 \
    --amk "$AMK" --t1 "$OUT/t1/bad/gemm_wgmma.json" >"$OUT/h2.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "is not one of this space's" "$OUT/h2.log" ||
    { cat "$OUT/h2.log"; echo "FAIL: sweeps_to_hub --t1 with a value missing: exit $rc"; exit 1; }
# Kernel Tuner's Latin hypercube samples follow the run's seed (bench's seed_latin_hypercube):
# a seed's bayes_opt and diff_evo runs are the same twice, another seed's differ
"$VENV/bin/python" - "$SRC/bench" "$OUT/hub" "$OUT/lhs-work" <<'PY' || { echo "FAIL: seeded Latin hypercube"; exit 1; }
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import search_vs_kerneltuner as b
hub = Path(sys.argv[2])
sp = b.KtSpace("sweep_gemm_wgmma", "H100", hub / "cachefiles/sweep_gemm_wgmma/H100.json",
               hub / "spaces/sweep_gemm_wgmma.json", Path(sys.argv[3]))
sp.partial = "recorded"  # 104 recorded of the T1 space's 144: Kernel Tuner kept to them
for st in b.LHS_STRATEGIES:
    a, again, other = (b.kt_tune(sp, st, s, {"max_fevals": 30}) for s in (1, 1, 2))
    assert a == again, f"{st}: seed 1 gave two different runs"
    assert a != other, f"{st}: seeds 1 and 2 gave the same run"
from scipy.stats import qmc
assert isinstance(qmc.LatinHypercube, type), "scipy's LatinHypercube was not put back"
print("seeded Latin hypercube: ok")
PY
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/h-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --cachefiles "$OUT/hub/cachefiles" --pairs all \
    --replay-partial --seeds 2 --amk-strategies evolve --kt-strategies genetic_algorithm \
    --kt-cache "$OUT/ktc" >"$OUT/hb.log" 2>&1 ||
    { cat "$OUT/hb.log"; echo "FAIL: a sweep as a pair"; exit 1; }
grep -q '^| amk evolve (default) | -\?[0-9.]* ± [0-9.]* | ' "$OUT/h-out/table.md" &&
    grep -q '^| KT genetic_algorithm | -\?[0-9.]* ± ' "$OUT/h-out/table.md" ||
    { cat "$OUT/h-out/table.md"; echo "FAIL: the sweep's pair lacks amk's or Kernel Tuner's time score"; exit 1; }
grep -q 'sweep_gemm_wgmma/H100 (104 of 144; complete)' "$OUT/h-out/table.md" ||
    { cat "$OUT/h-out/table.md"; echo "FAIL: the sweep's pair was not cut to its 104 recorded configs"; exit 1; }
# --kt-cached-only: the runs above scored again from the cache alone, Kernel Tuner's the same
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/hc-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --cachefiles "$OUT/hub/cachefiles" --pairs all \
    --replay-partial --seeds 2 --amk-strategies evolve --kt-strategies genetic_algorithm \
    --kt-cache "$OUT/ktc" --kt-cached-only --no-package >"$OUT/hc.log" 2>&1 ||
    { cat "$OUT/hc.log"; echo "FAIL: --kt-cached-only"; exit 1; }
[ -n "$(grep '^| KT genetic_algorithm |' "$OUT/hc-out/table.md" | head -1)" ] &&
[ "$(grep '^| KT genetic_algorithm |' "$OUT/h-out/table.md" | head -1)" = \
  "$(grep '^| KT genetic_algorithm |' "$OUT/hc-out/table.md" | head -1)" ] ||
    { echo "FAIL: Kernel Tuner's cached runs scored otherwise than when they were made"; exit 1; }
# the same pair with each param's values listed in reverse order (--values-reversed): amk
# sorts numeric values on import, so it scores exactly as before; Kernel Tuner's runs of the
# other presentation are made and cached apart, not read from the first one's
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/hr-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --cachefiles "$OUT/hub/cachefiles" --pairs all \
    --replay-partial --seeds 2 --amk-strategies evolve --kt-strategies genetic_algorithm \
    --kt-cache "$OUT/ktc" --values-reversed >"$OUT/hr.log" 2>&1 ||
    { cat "$OUT/hr.log"; echo "FAIL: --values-reversed"; exit 1; }
grep -q '^--values-reversed: every T1 space listed' "$OUT/hr-out/table.md" ||
    { cat "$OUT/hr-out/table.md"; echo "FAIL: the table does not say the values were reversed"; exit 1; }
[ "$(grep '^| amk evolve (default) |' "$OUT/h-out/table.md" | head -1)" = \
  "$(grep '^| amk evolve (default) |' "$OUT/hr-out/table.md" | head -1)" ] ||
    { echo "FAIL: amk's score depends on the order the T1 file lists its values"; exit 1; }
[ "$(ls "$OUT/ktc/sweep_gemm_wgmma/H100" | wc -l)" -eq 2 ] ||
    { ls -R "$OUT/ktc"; echo "FAIL: the reversed presentation's Kernel Tuner runs were not cached apart"; exit 1; }
# the two presentations side by side (bench/presentations.py): amk's estimate, the same in
# both, and the target read on their means; refused in the wrong order
"$VENV/bin/python" "$SRC/bench/presentations.py" "$OUT/h-out/scores.json" \
    "$OUT/hr-out/scores.json" >"$OUT/pres.md" 2>"$OUT/pres.err" ||
    { cat "$OUT/pres.err"; echo "FAIL: presentations.py"; exit 1; }
grep -q '^| amk evolve (default) | \([-0-9.]*\) / \1 / \*\*\1\*\* | ' "$OUT/pres.md" ||
    { cat "$OUT/pres.md"; echo "FAIL: amk's package estimate differs between the presentations"; exit 1; }
grep -q '^| sweep_gemm_wgmma/H100 | [-0-9.]* ± [0-9.]* | [-0-9.]* ± [0-9.]* KT genetic_algorithm | ' "$OUT/pres.md" ||
    { cat "$OUT/pres.md"; echo "FAIL: no target read on the means"; exit 1; }
if "$VENV/bin/python" "$SRC/bench/presentations.py" "$OUT/hr-out/scores.json" \
    "$OUT/h-out/scores.json" >/dev/null 2>&1; then
    echo "FAIL: presentations.py took the reversed run as the one as written"; exit 1
fi
# A strategy whose runs the package cannot score: Kernel Tuner's basinhopping, seed 42, on
# amk's H100 sweep of convolution_milo, tries 25 configs and every one failed to compile.
# The cell is n/a with the package's reason, and the report goes on (it used to stop there).
mkdir -p "$OUT/h1/cachefiles/convolution_milo"
ln -sf "$SRC/docs/evidence/search-quality-2026-11-28-c/cachefiles/convolution_milo/H100.json.gz" \
    "$OUT/h1/cachefiles/convolution_milo/"
AMK="$AMK" BUILD="$BUILD" OUT="$OUT/h1-out" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --cachefiles "$OUT/h1/cachefiles" --seeds 1 \
    --first-seed 42 --amk-strategies evolve --kt-strategies basinhopping,random_sample \
    >"$OUT/h1.log" 2>&1 || { cat "$OUT/h1.log"; echo "FAIL: a run the package cannot score ended the report"; exit 1; }
grep -q '^| KT basinhopping | n/a | ' "$OUT/h1-out/table.md" &&
    grep -q '^- KT basinhopping on convolution_milo/H100: ' "$OUT/h1-out/table.md" &&
    grep -q '^| KT random_sample | [-0-9.]* ± ' "$OUT/h1-out/table.md" ||
    { cat "$OUT/h1-out/table.md"; echo "FAIL: the unscorable runs are not reported as n/a"; exit 1; }
"$VENV/bin/python" -c 'import json, sys; d = json.load(open(sys.argv[1]))["package_score"]
assert d["KT basinhopping"]["convolution_milo/H100"] is None, d' "$OUT/h1-out/scores.json" ||
    { echo "FAIL: scores.json does not hold null for the unscorable runs"; exit 1; }
echo "ok: bench_search_quick"
