#!/usr/bin/env bash
# --objective time|energy|edp without a GPU (issue 21 item 4): a fixture sweep whose rows
# carry energies measured over a counter window is replayed by the sim backend; the best
# handed back (summary, best.json, report, propose) is the lowest-energy row under energy and
# the fastest under time, which the fixture makes two different configs. A search never
# switches objective (resume, evaluate --results and propose refuse, exit 3), and an energy
# objective with nothing that measures energy is an error before any work (exit 2).
# Run as: bash cli_energy.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
S=(--spec-dir "$TOY")

# --- the fixture: every valid toy config, a measured time and a counter-window energy ----
run loop toy "${S[@]}" --backend model --strategy exhaustive --results model.tsv --best m.json
expect_rc 0
python3 - model.tsv sweep.tsv estimated.tsv <<'EOF' || fail "could not write the fixture sweep"
import sys
lines = open(sys.argv[1]).read().splitlines()
cols = lines[1].split("\t")
assert lines[0] == "# amk results v4" and len(cols) == 35, (lines[0], len(cols))
out = [lines[0], lines[1]]
ok = [l.split("\t") for l in lines[2:] if l.split("\t")[cols.index("status")] == "ok"]
assert len(ok) >= 10, len(ok)
# Time falls with the row index, energy is lowest in the middle: the fastest config (the
# last row) and the lowest-energy one (row n // 2) differ, by far more than any noise.
n = len(ok)
for i, f in enumerate(ok):
    r = dict(zip(cols, f))
    r.update(trial=str(i + 1), latency_kind="measured", latency_us="%.3f" % (200.0 - 5 * i),
             spread="0.002", kept="0", device="NVIDIA H100 80GB HBM3", source="sobol",
             objective="energy", energy_uj="%.1f" % (50000 + 4000 * abs(i - n // 2)),
             energy_window_ms="2000", energy_ticks="20", note="fixture")
    out.append("\t".join(r[c] for c in cols))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
# the same sweep as objective time records it: an estimated energy, no counter window
est = [out[0], out[1]]
for l in out[2:]:
    r = dict(zip(cols, l.split("\t")))
    r.update(objective="time", energy_window_ms="", energy_ticks="")
    est.append("\t".join(r[c] for c in cols))
open(sys.argv[3], "w").write("\n".join(est) + "\n")
EOF
fast_id=$(tsv_col sweep.tsv config_id | tail -1)
n=$(tsv_rows sweep.tsv)
low_id=$(tsv_col sweep.tsv config_id | sed -n "$((n / 2 + 1))p")
[ -n "$fast_id" ] && [ -n "$low_id" ] && [ "$fast_id" != "$low_id" ] ||
    fail "fixture: the fastest ($fast_id) and the lowest-energy ($low_id) configs must differ"
pass

# --- objective energy: the lowest-energy row is handed back, with both figures -------------
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective energy --strategy exhaustive \
    --results e.tsv --best e.json
expect_rc 0
cp "$WORK/out" e-sum.json
expect_py e-sum.json 'd["objective"] == "energy" and d["trials"] == '"$n"
expect_py e-sum.json 'd["best"]["config_id"] == "'"$low_id"'"'
expect_py e-sum.json 'd["best"]["energy_uj"] == 50000 and d["best"]["energy_ticks"] == 20 and d["best"]["latency_us"] > 0'
expect_py e.json 'd["config_id"] == "'"$low_id"'" and d["objective"] == "energy" and d["energy_uj"] == 50000'
# every row keeps its time and its energy, and says what the search minimised
python3 - e.tsv <<'EOF' || fail "e.tsv rows lack the objective or a time and an energy"
import sys
lines = open(sys.argv[1]).read().splitlines()
cols = lines[1].split("\t")
rows = [dict(zip(cols, l.split("\t"))) for l in lines[2:]]
assert rows and all(r["objective"] == "energy" for r in rows)
assert all(float(r["latency_us"]) > 0 and float(r["energy_uj"]) > 0 and r["energy_ticks"] == "20"
           for r in rows if r["status"] == "ok")
EOF
pass
run report e.tsv --json
expect_rc 0
expect_py "$WORK/out" 'd["groups"][0]["best"]["config_id"] == "'"$low_id"'" and d["groups"][0]["best"]["objective"] == "energy"'
run report e.tsv
expect_rc 0
expect_out "J/launch (counter window), objective energy"
run propose toy "${S[@]}" --results e.tsv --objective energy
expect_rc 0
expect_py "$WORK/out" 'd["objective"] == "energy" and d["incumbent"]["config_id"] == "'"$low_id"'"'

# --- objective time on the same sweep: the fastest row -------------------------------------
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective time --strategy exhaustive \
    --results t.tsv --best t.json
expect_rc 0
expect_py "$WORK/out" 'd["objective"] == "time" and d["best"]["config_id"] == "'"$fast_id"'"'
# edp: energy x time, a third answer between the two (checked only to be a row of the sweep)
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective edp --strategy exhaustive \
    --results p.tsv --best p.json
expect_rc 0
expect_py "$WORK/out" 'd["objective"] == "edp" and d["best"]["energy_uj"] > 0'

# --- a search never switches objective ----------------------------------------------------
snapshot e.tsv
run loop toy "${S[@]}" --backend sim:sweep.tsv --budget 3 --results e.tsv --best x.json --resume
expect_rc 3
expect_err "recorded with --objective energy" "asks for --objective time" "never switches objective"
expect_unchanged e.tsv
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective edp --budget 3 --results e.tsv \
    --best x.json
expect_rc 3
expect_err "never switches objective"
expect_unchanged e.tsv
jget e-sum.json 'd["best"]["config"]' >cfg.json
run evaluate cfg.json "${S[@]}" --backend sim:sweep.tsv --results e.tsv
expect_rc 3
expect_err "asks for --objective time"
expect_unchanged e.tsv
run propose toy "${S[@]}" --results e.tsv
expect_rc 3
expect_err "pass --objective energy"
# the same objective goes on: evaluate logs a row of objective energy
run evaluate cfg.json "${S[@]}" --backend sim:sweep.tsv --objective energy --results e.tsv
expect_rc 0
expect_appended e.tsv
[ "$(tsv_col e.tsv objective | tail -1)" = energy ] || fail "evaluate --objective energy logged another objective"
pass
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective energy --budget 2 --results e.tsv \
    --best e.json --resume
expect_rc 0
expect_py "$WORK/out" 'd["best"]["config_id"] == "'"$low_id"'"'

# an older (v2) file has no objective column: energy rows are refused before any work
python3 - model.tsv v2.tsv <<'EOF' || fail "could not write a v2 file"
import sys
lines = open(sys.argv[1]).read().splitlines()
out = ["# amk results v2"] + ["\t".join(l.split("\t")[:31]) for l in lines[1:]]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
snapshot v2.tsv
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective energy --budget 2 --results v2.tsv \
    --best x.json
expect_rc 3
expect_err "v2.tsv: a v2 results file has no objective column"
expect_unchanged v2.tsv
run evaluate cfg.json "${S[@]}" --backend sim:sweep.tsv --objective energy --results v2.tsv
expect_rc 3
expect_unchanged v2.tsv
run loop toy "${S[@]}" --backend sim:sweep.tsv --objective time --budget 2 --results v2.tsv \
    --best x.json
expect_rc 0

# --- no energy measurement: an error before any work, never a guessed number --------------
run loop toy "${S[@]}" --backend model --objective energy --results none.tsv
expect_rc 2
expect_err "predicts none"
[ ! -e none.tsv ] || fail "--objective energy on the model backend wrote none.tsv"
pass
run evaluate cfg.json "${S[@]}" --backend model --objective edp
expect_rc 2
expect_err "--objective edp"
# a sweep of objective time carries estimates only
run loop toy "${S[@]}" --backend sim:estimated.tsv --objective energy --results none.tsv
expect_rc 2
expect_err "carries one"
[ ! -e none.tsv ] || fail "--objective energy on a sweep without energies wrote none.tsv"
pass
# another name is a Kernel Tuner field: sim:FILE only (usage)
run loop toy "${S[@]}" --backend model --objective joules
expect_rc 1
expect_err "not time, energy or edp"
run propose toy "${S[@]}" --objective joules
expect_rc 1

# --- bench/energy_objective.sh end to end on a stand-in for the GPU: gemm_hopper 8192^3 rows
# (the model's configs) with invented times and counter energies, replayed -----------------
run loop gemm_hopper --shape big --backend model --budget 40 --results hm.tsv --best hm.json
expect_rc 0
python3 - hm.tsv hsweep.tsv <<'EOF' || fail "could not write the gemm_hopper stand-in sweep"
import sys
lines = open(sys.argv[1]).read().splitlines()
cols = lines[1].split("\t")
out = lines[:2]
for i, l in enumerate(lines[2:]):
    r = dict(zip(cols, l.split("\t")))
    if r["status"] != "ok":
        continue
    us = float(r["latency_us"]) * (1 + 0.01 * (i % 7))
    r.update(latency_kind="measured", latency_us="%.3f" % us, device="NVIDIA H100 80GB HBM3",
             kept="0", objective="energy", energy_uj="%.1f" % (us * (600 + 13 * (i % 5))),
             energy_window_ms="1100", energy_ticks="11", sm_mhz="1500", power_w="690")
    out.append("\t".join(r[c] for c in cols))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
BACKEND="sim:$WORK/hsweep.tsv" OUT="$WORK/eo" AMK="$AMK" bash "$SRC/bench/energy_objective.sh" \
    >eo.out 2>eo.err || { cat eo.err >&2; fail "bench/energy_objective.sh failed on the stand-in"; }
grep -qF "| --objective energy |" eo.out && grep -qF "energy-best / time-best: time" eo.out ||
    { cat eo.out >&2; fail "bench/energy_objective.sh printed no comparison"; }
pass

done_ok
