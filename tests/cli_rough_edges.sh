#!/usr/bin/env bash
# Issue 15: bad input that used to slip through and places where amk did not do what its
# documentation says. Each block is one item: trial numbering through the file and under
# concurrency, trial numbers at the top of the range, non-integer numbers for integer
# params, results paths that cannot be created, non-regular and oversized inputs, and the
# wording of messages (usage errors, hints).
# Run as: bash cli_rough_edges.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
S=(--spec-dir "$TOY")

run propose toy "${S[@]}" --shape small
expect_rc 0
jget "$WORK/out" 'd["config"]' > good.json

# --- trial numbers increase through the file, across runs and writers --------------------
run loop toy "${S[@]}" --backend model --budget 4 --results t.tsv --best t.json
expect_rc 0
run loop toy "${S[@]}" --backend model --budget 3 --seed 2 --results t.tsv --best t.json
expect_rc 0
expect_py "$WORK/out" 'd["first_trial"] == 5 and d["last_trial"] == 7'
run evaluate good.json "${S[@]}" --results t.tsv
expect_rc 0
[ "$(tsv_col t.tsv trial | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 " ] ||
    fail "t.tsv: trials $(tsv_col t.tsv trial | tr '\n' ' '), expected 1..8 in file order"
pass

# Three loops appending to one file at once: every trial number is used exactly once.
pids=()
for seed in 1 2 3; do
    "$AMK" loop toy "${S[@]}" --backend model --batch 1 --budget 25 --seed "$seed" \
        --results c.tsv --best "c$seed.json" >"c$seed.out" 2>"c$seed.err" </dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || fail "a concurrent loop failed: $(cat c*.err)"
done
python3 - c.tsv <<'EOF' || fail "concurrent loops: trial numbers collide or skip"
import sys
t = [int(l.split("\t")[0]) for l in open(sys.argv[1]) if l[0].isdigit()]
assert len(t) == 75 and sorted(t) == list(range(1, 76)), t
EOF
pass

# Trial numbers at the top of the int64 range: the last free number is used, then appends
# are refused with exit 3 and nothing is written (no wrap-around, no undefined behaviour).
top_file() {
    python3 - t.tsv "$1" "$2" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
f = lines[-1].split("\t")
f[0] = sys.argv[3]
lines[-1] = "\t".join(f)
open(sys.argv[2], "w").write("".join(lines))
EOF
}
top_file top.tsv 9223372036854775806
run evaluate good.json "${S[@]}" --results top.tsv
expect_rc 0
[ "$(tsv_col top.tsv trial | tail -1)" = 9223372036854775807 ] || fail "top.tsv: last trial"
pass
snapshot top.tsv
run evaluate good.json "${S[@]}" --results top.tsv
expect_rc 3
expect_err "top.tsv" "trial numbers exhausted" "9223372036854775807"
expect_no_out
expect_unchanged top.tsv
top_file top2.tsv 9223372036854775807
snapshot top2.tsv
run loop toy "${S[@]}" --backend model --budget 3 --results top2.tsv --best top.json --resume
expect_rc 3
expect_err "top2.tsv" "trial numbers exhausted"
expect_unchanged top2.tsv
run loop toy "${S[@]}" --backend model --budget 2 --results top2.tsv --best top.json
expect_rc 3
expect_unchanged top2.tsv
run report top2.tsv --json
expect_rc 0
run propose toy "${S[@]}" --results top2.tsv
expect_rc 0

# --- a results path that cannot be created is a results file problem (exit 3) ------------
run loop toy "${S[@]}" --backend model --budget 2 --results no/such/dir/r.tsv --best nd.json
expect_rc 3
expect_err "no/such/dir/r.tsv" "directory no/such/dir does not exist"
run evaluate good.json "${S[@]}" --results no/such/dir/r.tsv
expect_rc 3
expect_err "no/such/dir/r.tsv"
expect_no_out

# --- inputs that are not regular files are refused up front, never waited on ------------
mkfifo fifo.tsv fifo.json
mkdir dir.tsv
for f in fifo.tsv dir.tsv /dev/zero; do
    LAST="amk report $f"
    set +e
    timeout 20 "$AMK" report "$f" >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
    set -e
    expect_rc 3
    expect_err "$f" "not a regular file"
    LAST="amk loop --results $f"
    set +e
    timeout 20 "$AMK" loop toy "${S[@]}" --backend model --budget 2 --results "$f" \
        --best nr.json >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
    set -e
    expect_rc 3
    expect_err "$f" "not a regular file"
    LAST="amk evaluate --results $f"
    set +e
    timeout 20 "$AMK" evaluate good.json "${S[@]}" --results "$f" >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
    set -e
    expect_rc 3
    expect_err "$f" "not a regular file"
done
for f in fifo.json /dev/zero; do
    LAST="amk evaluate $f"
    set +e
    timeout 20 "$AMK" evaluate "$f" "${S[@]}" >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
    set -e
    expect_rc 2
    expect_err "$f" "not a regular file"
    expect_no_out
done
# A kernel folder whose spec.json is a FIFO.
mkdir -p specfifo/k && mkfifo specfifo/k/spec.json
LAST="amk list --spec-dir specfifo"
set +e
timeout 20 "$AMK" list --spec-dir specfifo >"$WORK/out" 2>"$WORK/err" </dev/null
RC=$?
set -e
expect_rc 2
expect_err "spec.json" "not a regular file"

# --- an endless or huge stream on stdin: a clear error past 16 MiB, memory stays bounded ---
python3 - "$AMK" "${S[@]}" <<'EOF' || fail "evaluate - on a 300 MB stream: see above"
import resource, subprocess, sys
p = subprocess.Popen([sys.argv[1], "evaluate", "-"] + sys.argv[2:], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
chunk = b" " * (1 << 20)
try:
    for _ in range(300):
        p.stdin.write(chunk)
    p.stdin.close()
except BrokenPipeError:
    pass                       # amk stopped reading at the cap: what we want
out, err = p.communicate(timeout=60)
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
msg = err.decode()
ok = p.returncode == 2 and "larger than 16 MiB" in msg and not out and rss_mb < 200
print(f"evaluate - on 300 MB: exit {p.returncode}, max RSS {rss_mb:.0f} MB: {msg.strip()}",
      file=sys.stderr if not ok else sys.stdout)
sys.exit(0 if ok else 1)
EOF
pass

# --- integers written as 64.0 or 1.28e2 are not integers: refused like 64.5 --------------
for v in 256.0 2.56e2 256e0; do
    sed "s/\"BLOCK\": [0-9]*/\"BLOCK\": $v/" good.json > nonint.json
    grep -q "\"BLOCK\": $v" nonint.json || fail "fixture: BLOCK not replaced in good.json"
    run evaluate nonint.json "${S[@]}"
    expect_rc 2
    expect_err "params.BLOCK: $v is not one of the allowed choices"
    expect_no_out
done
sed 's/"N": \([0-9]*\)/"N": \1.0/' good.json > nonint_dim.json
run evaluate nonint_dim.json "${S[@]}"
expect_rc 2
expect_err "shape.N: expected an integer"

# --- deep nesting and NUL characters: named plainly, with the position -------------------
python3 -c 'print("[" * 5000 + "]" * 5000)' > deep.json
run evaluate deep.json "${S[@]}"
expect_rc 2
expect_err "deep.json:1:65: malformed JSON: nested deeper than 64 levels"
python3 -c 'import json, sys; c = json.load(open("good.json")); c["kernel"] = "toy\u0000evil"; print(json.dumps(c))' > nul.json
run evaluate nul.json "${S[@]}"
expect_rc 2
expect_err "nul.json:1:" "a string contains a NUL character (\\u0000)"
printf '{"kernel": "toy\0"}' > nulbyte.json
run evaluate nulbyte.json "${S[@]}"
expect_rc 2
expect_err "nulbyte.json:1:16: malformed JSON: contains a NUL byte"

# --- amk list: one output per run (a table on a terminal, JSON otherwise) ---------------
if command -v script >/dev/null; then
    script -qec "$AMK list" /dev/null > list_tty.txt 2>&1 </dev/null
    grep -q "^KERNEL " list_tty.txt || fail "amk list on a terminal: no table: $(head -3 list_tty.txt)"
    ! grep -q '"name"' list_tty.txt || fail "amk list on a terminal printed JSON after the table"
    script -qec "$AMK list --json" /dev/null > list_json.txt 2>&1 </dev/null
    grep -q '"name"' list_json.txt && ! grep -q "^KERNEL " list_json.txt ||
        fail "amk list --json on a terminal: JSON only expected"
    pass
else
    echo "note: script(1) not found: amk list on a terminal not checked" >&2
fi
run list
expect_rc 0
expect_json
[ ! -s "$WORK/err" ] || fail "amk list piped: nothing on stderr expected"
run list --tables
expect_rc 0
expect_json
expect_err "KERNEL"

# --- usage errors carry "error:" like every other error --------------------------------
run loop toy --budget -5
expect_rc 1
expect_err "amk loop: error: option --budget: '-5'"
run evaluate
expect_rc 1
expect_err "amk evaluate: error: missing CONFIG.json"
run nosuchcommand
expect_rc 1
expect_err "amk: error: unknown command 'nosuchcommand'"
run compile --random x
expect_rc 1
expect_err "amk compile: error:"

# --- evaluate's line for people names the backend once -----------------------------------
run evaluate good.json "${S[@]}" --backend model --tables
expect_rc 0
expect_err "(model): ok"
! grep -q "(model) (model)" "$WORK/err" || fail "evaluate: '(model) (model)' in $(cat "$WORK/err")"
pass

# --- export: replayed rows left out say how to include them; device keys are names -------
run loop gemm --backend "sim:$SRC/space_defs/data/gemm.tsv" --budget 4 --results sim.tsv --best sim.json
expect_rc 0
run export sim.tsv
expect_rc 2
expect_err "4 ok row(s) replayed by the sim backend were left out" "--include-replayed"
run export sim.tsv --include-replayed
expect_rc 0
grep -q '"NVIDIA H100 80GB HBM3"' "$WORK/out" || fail "export: device key missing"
! grep -q "(replayed)" "$WORK/out" || fail "export: a '(replayed)' suffix is left in the database"
pass

# --- --min-gain 0 means no margin (it used to mean the default 0.01) ----------------------
# A replayed sweep in which each config the exhaustive strategy proposes is 0.5% faster than
# the one before: with no margin every trial is kept, with 1% only some are.
run loop toy "${S[@]}" --backend model --strategy exhaustive --batch 1 --budget 0 \
    --results order.tsv --best order.json
expect_rc 0
python3 - order.tsv sweep.tsv <<'EOF'
import sys
out, i = [], 0
for l in open(sys.argv[1]):
    if l[0].isdigit():
        f = l.rstrip("\n").split("\t")
        f[8], f[9], f[10] = "%.9g" % (100 * 0.995 ** i), "measured", ""
        i += 1
        l = "\t".join(f) + "\n"
    out.append(l)
open(sys.argv[2], "w").write("".join(out))
EOF
for g in 0 0.01; do
    run loop toy "${S[@]}" --backend sim:sweep.tsv --strategy exhaustive --batch 1 --budget 0 \
        --min-gain "$g" --results "gain$g.tsv" --best "gain$g.json"
    expect_rc 0
    expect_py "$WORK/out" "d['min_gain'] == $g"
done
n=$(tsv_rows gain0.tsv)
[ "$n" -gt 10 ] && [ "$(tsv_col gain0.tsv kept | grep -c '^1$')" = "$n" ] ||
    fail "--min-gain 0: every one of the $n trials should be kept"
k=$(tsv_col gain0.01.tsv kept | grep -c '^1$')
[ "$k" -lt "$n" ] || fail "--min-gain 0.01: kept $k of $n, expected fewer"
pass

# --- --budget with --resume: N more trials, as --help, HARNESS.md and the man page say ----
run loop toy "${S[@]}" --backend model --budget 5 --results b.tsv --best b.json
expect_rc 0
run loop toy "${S[@]}" --backend model --budget 5 --results b.tsv --best b.json --resume
expect_rc 0
expect_py "$WORK/out" 'd["trials"] == 5 and d["first_trial"] == 6 and d["last_trial"] == 10'
run help loop
grep -q "with --resume: N more" "$WORK/out" || fail "amk help loop: --budget with --resume"
grep -q "0 = no margin" "$WORK/out" || fail "amk help loop: --min-gain 0"
pass
grep -q "adds N more trials" "$SRC/HARNESS.md" || fail "HARNESS.md: --budget with --resume"
grep -qF 'with \-\-resume it runs N more' "$SRC/docs/amk.1" || fail "amk.1: --budget with --resume"
pass

# --- speedup over the spec's default config: in the loop summary and the report ---------
# rmsnorm's and gemm's sweeps hold their default config; a copy of gemm's without that row
# does not: a number for the first two, null with the reason for the third (never an
# invented latency).
DATA="$SRC/space_defs/data"
run loop rmsnorm --backend "sim:$DATA/rmsnorm.tsv" --budget 6 --results vd.tsv --best vd.json
expect_rc 0
expect_py "$WORK/out" 'd["vs_default"]["latency_kind"] == "replayed" and d["vs_default"]["reason"] is None and abs(d["vs_default"]["speedup"] - d["vs_default"]["default_latency_us"] / d["best"]["latency_us"]) < 1e-3'
run loop gemm --backend "sim:$DATA/gemm.tsv" --budget 3 --results vd1.tsv --best vd1.json
expect_rc 0
expect_py "$WORK/out" 'd["vs_default"]["config_id"] == "2229a21b9f1d9b13" and d["vs_default"]["default_latency_us"] > 0 and d["vs_default"]["reason"] is None'
grep -v '2229a21b9f1d9b13' "$DATA/gemm.tsv" >nodef.tsv
run loop gemm --backend "sim:nodef.tsv" --budget 3 --results vd2.tsv --best vd2.json
expect_rc 0
expect_py "$WORK/out" 'd["vs_default"]["speedup"] is None and d["vs_default"]["default_latency_us"] is None and "not measured" in d["vs_default"]["reason"]'
run report vd2.tsv
expect_rc 0
expect_out "vs default: - (the default config" "was not measured"
# The sweep recorder puts the default config into a sampled sweep (model backend: a dry run).
BACKEND=model AMK="$AMK" bash "$SRC/bench/record_sweeps.sh" gemm --time-limit 60 >rec.out 2>&1 ||
    { cat rec.out >&2; fail "bench/record_sweeps.sh gemm (BACKEND=model) failed"; }
run propose gemm
def_id=$(jget "$WORK/out" 'd["config_id"]')
[ "$(tsv_col sweeps/gemm.tsv config_id | grep -c "$def_id")" = 1 ] ||
    fail "record_sweeps.sh: the sampled gemm sweep lacks the default config $def_id"
[ "$(tsv_rows sweeps/gemm.tsv)" = 2001 ] || fail "record_sweeps.sh: 2000 samples + the default expected"
EXHAUSTIVE_MAX=lots BACKEND=model AMK="$AMK" bash "$SRC/bench/record_sweeps.sh" gemm >rec2.out 2>&1 &&
    fail "record_sweeps.sh took EXHAUSTIVE_MAX=lots"
grep -q "EXHAUSTIVE_MAX wants a count, not 'lots'" rec2.out ||
    { cat rec2.out >&2; fail "record_sweeps.sh: no clear error for EXHAUSTIVE_MAX=lots"; }
pass

# --- HARNESS.md's loop says it needs amk on PATH, and stops at once, saying so, without it --
grep -q 'on your `PATH`' "$SRC/HARNESS.md" || fail "HARNESS.md: the loop's need for amk on PATH"
python3 - "$SRC/HARNESS.md" > harness_loop.sh <<'EOF'
import sys
text = open(sys.argv[1]).read()
start = text.index("```bash\n", text.index("<!-- agent-loop")) + len("```bash\n")
sys.stdout.write(text[start:text.index("```\n", start)])
EOF
mkdir -p nopath
set +e
(cd nopath && PATH=/usr/bin:/bin bash ../harness_loop.sh) >nopath.out 2>nopath.err
rc=$?
set -e
[ "$rc" = 127 ] && grep -q "amk is not on PATH" nopath.err && [ ! -e nopath/results.tsv ] ||
    fail "HARNESS.md loop without amk on PATH: exit $rc, $(cat nopath.err)"
pass

# --- sim:FILE at a shape its recording does not cover: says which, writes nothing ---------
run loop gemm --backend "sim:$DATA/gemm.tsv" --shape M=1024,N=1024,K=1024 --budget 3 \
    --results shape.tsv --best shape.json
expect_rc 2
expect_err "no trial of gemm at M=1024,N=1024,K=1024,dtype=f32" "it covers M=4096,N=4096,K=4096,dtype=f32" "nothing was run or written"
[ ! -e shape.tsv ] && [ ! -e shape.json ] || fail "sim shape mismatch: a results or best file was written"
pass
run loop softmax --backend "sim:$DATA/gemm.tsv" --budget 3 --results shape.tsv --best shape.json
expect_rc 2
expect_err "no trial of softmax at any shape"
[ ! -e shape.tsv ] || fail "sim kernel mismatch: a results file was written"
pass

# --- no GPU device node at all: "no GPU is present", not a driver that is too old ----------
run devices
expect_rc 0
if [ "$(jget "$WORK/out" 'd["gpu"]["built"]')" = true ] &&
   ! ls /dev/nvidia[0-9]* /dev/kfd >/dev/null 2>&1; then
    expect_py "$WORK/out" '"no GPU is present" in d["gpu"]["reason"]'
    # (issue 24.7) and it does not quote the runtime blaming an insufficient driver
    expect_py "$WORK/out" '"insufficient" not in d["gpu"]["reason"]'
    run loop toy "${S[@]}" --backend gpu --budget 1 --results gpu.tsv --best gpu.json
    expect_rc 4
    expect_err "no GPU is present"
else
    echo "note: a GPU device node exists here (or no gpu backend): the no-GPU message is not checked" >&2
fi

# --- kernels and sweeps are found next to the executable (a moved tree finds its own) ------
# A build+source tree copied elsewhere (the binary at the same place relative to the source)
# and an installed tree (bin/amk + share/amk/...), each with an extra kernel (toy) and a toy
# sweep that only they hold: the copy must use its own, not the configure-time paths.
# The copy mirrors both absolute paths under moved/, so the binary sits where it sat relative
# to the source whether the build folder is inside the source tree or anywhere else
# (cmake -B /tmp/x: the binary looks in ../../<source>/space_defs).
bindir=$(cd "$(dirname "$AMK")" && pwd -P)
srcdir=$(cd "$SRC" && pwd -P)
root="$WORK/moved$srcdir"
mkdir -p "$root/space_defs" "$WORK/moved$bindir" inst/bin inst/share/amk
cp -r "$SRC/space_defs/kernels" "$SRC/space_defs/data" "$root/space_defs/"
cp -r "$TOY" "$root/space_defs/kernels/toy"
cp sweep.tsv "$root/space_defs/data/toy.tsv"
cp "$AMK" "$WORK/moved$bindir/amk"
cp -r "$root/space_defs/kernels" "$root/space_defs/data" inst/share/amk/
cp "$AMK" inst/bin/amk
for exe in "$WORK/moved$bindir/amk" inst/bin/amk; do
    LAST="$exe list"
    "$exe" list > moved_list.json 2>"$WORK/err" || fail "$exe list failed"
    python3 -c 'import json, sys; sys.exit(0 if "toy" in [k["name"] for k in json.load(open(sys.argv[1]))] else 1)' moved_list.json ||
        fail "$exe does not find the kernels next to it (no toy in amk list)"
    (cd "$WORK" && "$exe" loop toy --backend auto --budget 2 --results "moved$RANDOM.tsv" \
        --best moved.json --quiet) > moved_loop.json 2>"$WORK/err" || fail "$exe loop toy --backend auto failed"
    python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["backend"] == "sim" else 1)' moved_loop.json ||
        fail "$exe does not replay the sweep next to it (backend auto did not pick sim)"
    pass
done
# AMK_KERNELS_DIR and AMK_DATA_DIR still win.
mkdir -p only/kernels only/data
cp -r "$TOY" only/kernels/toy
AMK_KERNELS_DIR="$WORK/only/kernels" inst/bin/amk list > only.json
python3 -c 'import json, sys; sys.exit(0 if [k["name"] for k in json.load(open(sys.argv[1]))] == ["toy"] else 1)' only.json ||
    fail "AMK_KERNELS_DIR does not override the kernels next to the executable"
AMK_DATA_DIR="$WORK/only/data" inst/bin/amk loop toy --backend auto --budget 2 --results only.tsv \
    --best only_best.json --quiet > only_loop.json 2>/dev/null
python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["backend"] == "model" else 1)' only_loop.json ||
    fail "AMK_DATA_DIR does not override the sweeps next to the executable"
pass

# === Issue 24: rough edges, second pass ======================================================

# --- 6: a full disk mid-row leaves the file whole (amk cuts back its own partial write) -----
# The file-size limit cuts a write short just as a full disk does (EFBIG for ENOSPC).
run loop gemm --backend model --budget 3 --results full.tsv --best full.json
expect_rc 0
size=$(stat -c %s full.tsv)
LAST="amk loop gemm --resume (file-size limit)"
set +e
(trap '' XFSZ; ulimit -f $((size / 1024 + 2)); exec "$AMK" loop gemm --backend model \
    --budget 200 --resume --results full.tsv --best full.json) >"$WORK/out" 2>"$WORK/err" </dev/null
RC=$?
set -e
expect_rc 3
expect_err "full.tsv" "the partial write was removed"
[ "$(tail -c 1 full.tsv | od -An -c | tr -d ' ')" = '\n' ] || fail "full.tsv ends in a torn row"
run loop gemm --backend model --budget 5 --resume --results full.tsv --best full.json
expect_rc 0
expect_py "$WORK/out" 'd["trials"] == 5'
grep -qF "torn" "$WORK/err" && fail "the resumed loop found a torn row"
python3 - full.tsv <<'PY' || fail "full.tsv: a torn row or a duplicate trial number"
import sys
lines = open(sys.argv[1]).read().split("\n")
ncols = len(lines[1].split("\t"))
rows = [l.split("\t") for l in lines[2:] if l]
assert all(len(r) == ncols for r in rows), [len(r) for r in rows]
trials = [int(r[0]) for r in rows]
assert trials == list(range(1, len(trials) + 1)), trials
PY
pass

# --- 11: grouped fsyncs; a SIGKILL storm loses nothing reported done ---------------------
# A model loop (one fsync per 0.1 s, not per trial) is killed at random moments, 12 times,
# and resumed each time. After every kill: the file reads cleanly (at most a torn row), no
# trial number is used twice, every row seen after an earlier kill is still there, and
# best.json names a trial the file holds, whole, with its config and status ok.
cat >storm_check.py <<'PY'
import json, os, sys
path, best, seen_path = sys.argv[1:4]
text = open(path).read() if os.path.exists(path) else ""
lines = text.split("\n")
if len(lines) < 3:  # killed while creating the file: read as empty, completed on resume
    lines = []
else:
    assert lines[0].startswith("# amk results v"), lines[0]
ncols = len(lines[1].split("\t")) if lines else 0
rows, torn = {}, 0
for i, l in enumerate(lines[2:]):
    f = l.split("\t")
    if len(f) == ncols and (i + 2 < len(lines) - 1):  # a whole row (it has its newline)
        assert f[0] not in rows, "trial %s twice" % f[0]
        rows[f[0]] = l
    elif l:
        torn += 1
assert torn <= 1, "%d torn rows" % torn
old = set(open(seen_path).read().split("\n")) - {""} if os.path.exists(seen_path) else set()
lost = old - set(rows.values())
assert not lost, "rows lost: %s" % sorted(lost)[:2]
open(seen_path, "w").write("\n".join(rows.values()))
if os.path.exists(best):
    b = json.load(open(best))
    r = rows.get(str(b["trial"]))
    assert r, "best.json names trial %s, not in the file" % b["trial"]
    f = r.split("\t")
    assert f[4] == b["config_id"] and f[7] == "ok", (f[4], f[7], b)
print(len(rows))
PY
for i in $(seq 1 12); do
    "$AMK" loop gemm --backend model --budget 0 --resume --results storm.tsv --best storm.json \
        --quiet >/dev/null 2>storm.err </dev/null &
    pid=$!
    sleep "0.$((RANDOM % 2))$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    LAST="SIGKILL storm, kill $i"
    python3 storm_check.py storm.tsv storm.json storm.seen >storm.n 2>storm.why ||
        fail "after kill $i: $(tail -1 storm.why)"
done
[ "$(cat storm.n)" -gt 0 ] || fail "the SIGKILL storm wrote no rows"
run loop gemm --backend model --budget 50 --resume --results storm.tsv --best storm.json
expect_rc 0
python3 storm_check.py storm.tsv storm.json storm.seen >storm.n2 2>storm.why ||
    fail "after the last resume: $(tail -1 storm.why)"
# (a fast machine may have tried the whole space before the last kill: then 0 more)
expect_py "$WORK/out" "(d['trials'] == 50 or d['exhausted']) and d['trials'] == $(cat storm.n2) - $(cat storm.n) and d['last_trial'] in (0, $(cat storm.n2))"
pass

# --- 4: a recording that does not cover the kernel or shape: exit 2, no row (as loop) -----
GEMM_SIM="sim:$SRC/space_defs/data/gemm.tsv"
run propose softmax
expect_rc 0
cp "$WORK/out" softmax.json
run propose gemm --shape M=1000,N=1000,K=1000
expect_rc 0
cp "$WORK/out" gemm_odd.json
for input in softmax.json gemm_odd.json; do
    run evaluate "$input" --backend "$GEMM_SIM" --results cov.tsv
    expect_rc 2
    expect_err "the recording has no trial of" "nothing was run or written"
    [ ! -s cov.tsv ] || [ "$(grep -vc '^#\|^trial' cov.tsv)" -eq 0 ] || fail "'$LAST' appended a row"
done
run_in softmax.json evaluate - --backend "$GEMM_SIM" --results cov.tsv
expect_rc 2
run loop softmax --backend "$GEMM_SIM" --budget 2 --results cov.tsv --best cov.json
expect_rc 2
expect_err "the recording has no trial of softmax"

# --- 5: a Kernel Tuner cachefile for another kernel is bad input (2), as a .tsv is -------
KT="$SRC/space_defs/data/benchmark_hub/cachefiles/convolution_milo/A100.json.gz"
run loop gemm --backend "sim:$KT" --budget 2 --results kt.tsv --best kt.json
expect_rc 2
expect_err "param BM of kernel gemm is not in the file's tuning parameters"
run evaluate good.json "${S[@]}" --backend "sim:$KT"
expect_rc 2
# a JSON file that is no cachefile is a malformed one: bad input (2, issue 25 item 5)
printf '{"not": "a cachefile"}' | gzip >notkt.json.gz
run loop gemm --backend sim:notkt.json.gz --budget 2 --results kt.tsv --best kt.json
expect_rc 2
expect_err "neither a Kernel Tuner cachefile"

# --- 8: no silent last-wins; duplicate trial numbers are a hand-edited file (3) ---------
run propose gemm --shape M=2048,M=1024
expect_rc 2
expect_err "dim 'M' given twice"
run loop gemm --backend model --budget 1 --results A.tsv --results B.tsv --best d.json
expect_rc 1
expect_err "option --results given twice ('A.tsv', then 'B.tsv')"
[ ! -e A.tsv ] && [ ! -e B.tsv ] || fail "'$LAST' wrote a results file"
run propose gemm --target h100 --target a100
expect_rc 1
expect_err "option --target given twice"
run loop gemm --backend model --budget 1 --jobs 0 --results j.tsv --best j.json
expect_rc 1
expect_err "option --jobs: '0' is not an integer in 1..1024"
run space gemm --spec-dir "$TOY" --spec-dir "$SRC/tests/fixtures/specs/good/tiny" # it adds
expect_rc 0
run loop gemm --backend model --budget 3 --results dup.tsv --best dup.json
expect_rc 0
python3 - dup.tsv <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
lines[4] = "2" + lines[4][lines[4].index("\t"):]  # trial 3 becomes a second trial 2
open(sys.argv[1], "w").write("\n".join(lines))
PY
for cmd in "report dup.tsv" "loop gemm --backend model --budget 1 --resume --results dup.tsv --best dup.json"; do
    set -f; run $cmd; set +f
    expect_rc 3
    expect_err "dup.tsv:5: trial 2 is already on line 4"
done

# --- 3: --dtype, as the man page documents it for propose, loop and space ---------------
run space gemm_hopper --dtype f16
expect_rc 0
expect_py "$WORK/out" 'd["shape"].endswith(",dtype=f16")'
run propose gemm_hopper --shape M=1024,N=1024,K=1024 --dtype f16
expect_rc 0
expect_py "$WORK/out" 'd["config"]["shape"] == {"M": 1024, "N": 1024, "K": 1024, "dtype": "f16"}'
run loop gemm_hopper --dtype f16 --backend model --budget 2 --results dt.tsv --best dt.json
expect_rc 0
expect_py "$WORK/out" 'd["shape"].endswith(",dtype=f16")'
run space gemm_hopper --dtype f64
expect_rc 2
expect_err "dtype 'f64' is not supported by kernel gemm_hopper (bf16, f16)"
run space gemm_hopper --shape M=64,dtype=bf16 --dtype f16
expect_rc 1
expect_err "--dtype f16: --shape 'M=64,dtype=bf16' names the dtype already"

# --- 7: messages: the 2^53 limit, control bytes and bad UTF-8, leading zeros -------------
run propose gemm --shape K=18014398509481984
expect_rc 2
expect_err "K=18014398509481984 is not an integer in 1..2^53"
printf '{"kernel": "gemm", "shape": {"K": 18014398509481984}, "params": {}}' >big.json
run evaluate big.json
expect_rc 2
expect_err "shape.K: expected an integer in 1..2^53"
printf '{"kernel": "ge\\u001b[31mmm\\u0007\xff\xfe\xc0\xaf", "params": {}}' >esc.json
run evaluate esc.json --results esc.tsv
expect_rc 2
expect_err "unknown kernel 'ge?[31mmm?????'"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f\x80-\xff]' "$WORK/err" &&
    fail "'$LAST': stderr holds control bytes or non-ASCII bytes: $(od -c "$WORK/err" | head -3)"
printf '{"kernel": "gemm", "shape": {"M": 0128}, "params": {}}' >lz.json
run evaluate lz.json
expect_rc 2
expect_err "number with a leading zero"

# --- 9: docs vs behaviour: report's table on stdout; a long lock wait is said ---------------
run report t.tsv --tables
expect_rc 0
grep -q "toy" "$WORK/out" || fail "'$LAST': the table is not on stdout"
[ ! -s "$WORK/err" ] || fail "'$LAST': stderr is not empty: $(cat "$WORK/err")"
flock lk.tsv sleep 2.5 &
holder=$!
sleep 0.3
run evaluate good.json "${S[@]}" --results lk.tsv
wait "$holder"
expect_rc 0
expect_err "lk.tsv: waiting for the lock: another process has held it for 1 s"
run evaluate good.json "${S[@]}" --results lk.tsv # uncontended: silent
expect_rc 0
grep -q "waiting for the lock" "$WORK/err" && fail "'$LAST': an uncontended lock was reported"
pass

# --- 10: tables keep their columns with long names ------------------------------------------
cat >aligned.py <<'PY'
import sys
# Every row's fields start where the header's column names start (the names' columns).
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
head = lines[int(sys.argv[2])]
rows = lines[int(sys.argv[2]) + 1: int(sys.argv[2]) + 1 + int(sys.argv[3])]
cols = [head.index(w) for w in head.split()[1:int(sys.argv[4])]]
for r in rows:
    for c in cols:
        assert r[c - 1] == " " and r[c] != " ", "misaligned at column %d: %r" % (c, r)
PY
run list --tables
expect_rc 0
n=$(grep -c . "$WORK/err")
python3 aligned.py "$WORK/err" 0 $((n - 1)) 3 || fail "amk list: columns lost their alignment"
run import "$SRC/space_defs/data/benchmark_hub/spaces/convolution_milo.json" -o conv
expect_rc 0
run space convolution_milo --spec-dir conv --tables
expect_rc 0
python3 aligned.py "$WORK/err" 1 9 3 || fail "amk space: columns lost their alignment"
pass

done_ok
