#!/usr/bin/env bash
# `amk loop` over MPI ranks (AMK_MPI=ON builds), on one machine with --oversubscribe:
#   a. mpirun -np 3 writes the same rows as a single-process run with the same seed, budget
#      and batch (every column but time, note and compile_ms), the same kept flags and the
#      same best.json config; with the sim backend on rmsnorm and the model backend on gemm;
#   b. SIGKILL of rank 2 mid-run (mpirun --enable-recovery, injected per-config delay, short
#      --rank-timeout): the run finishes with exit 0, rows written before the kill are a
#      prefix of the final file, which holds exactly the budget and equals the single run.
# usage: cli_mpi.sh AMK SOURCE_DIR   (exit 77 = no mpirun here: skipped)
set -euo pipefail
amk=$1
src=$2
mpirun=${AMK_MPIEXEC:-}
[ -n "$mpirun" ] && [ -x "$mpirun" ] || mpirun=$(command -v mpirun || true)
if [ -z "$mpirun" ]; then
    echo "cli_mpi: SKIP: no mpirun on PATH (Debian: apt-get install openmpi-bin)"
    exit 77
fi
# Open MPI refuses root without these; containers often forbid the cross-process copy
# (ptrace scope) that its shared-memory transport tries for large messages.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
unset AMK_SIM_DELAY_MS

work=$(mktemp -d)
bg=""
cleanup() {
    [ -n "$bg" ] && kill "$bg" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fail() { echo "cli_mpi: FAIL: $*" >&2; exit 1; }
step() { echo "cli_mpi: $*"; }

sweep=$src/space_defs/data/rmsnorm.tsv
[ -f "$sweep" ] || fail "no recorded sweep $sweep"

# The rows of a results file without the columns that legitimately differ between runs.
rows() {
    awk -F'\t' -v OFS='\t' '
        /^#/ { next }
        !hdr { for (i = 1; i <= NF; i++) drop[i] = ($i == "time" || $i == "note" ||
                                                   $i == "compile_ms"); hdr = 1 }
        { line = ""; for (i = 1; i <= NF; i++) if (!drop[i]) line = line $i OFS; print line }' "$1"
}
best_config() {
    python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["config"], sort_keys=True))' "$1"
}
count_rows() { grep -vc '^#' "$1" | awk '{ print $1 - 1 }'; }
# note_ends_with FILE TEXT: some row's note column ends with TEXT (the column found by name:
# v2 files have columns after it).
note_ends_with() {
    awk -F'\t' -v want="$2" '
        /^#/ { next }
        !c { for (i = 1; i <= NF; i++) if ($i == "note") c = i; next }
        { n = length($c); w = length(want)
          if (n >= w && substr($c, n - w + 1) == want) found = 1 }
        END { exit !found }' "$1"
}

# same_rows SINGLE MPI: rows, kept flags (a column) and best config are equal.
same_rows() {
    rows "$1.tsv" >"$1.rows"
    rows "$2.tsv" >"$2.rows"
    diff "$1.rows" "$2.rows" >"$2.diff" || { head -20 "$2.diff"; fail "$2: rows differ from $1"; }
    [ "$(best_config "$1.json")" = "$(best_config "$2.json")" ] ||
        fail "$2: best.json config differs from $1"
}

run_pair() { # NAME KERNEL BUDGET BATCH BACKEND...
    local name=$1 kernel=$2 budget=$3 batch=$4
    shift 4
    local args=("$kernel" --seed 7 --budget "$budget" --batch "$batch" "$@")
    "$amk" loop "${args[@]}" --results "$name-single.tsv" --best "$name-single.json" \
        >"$name-single.out" 2>"$name-single.err" || { cat "$name-single.err"; fail "$name: single run"; }
    "$mpirun" --oversubscribe -np 3 "$amk" loop "${args[@]}" --results "$name-mpi.tsv" \
        --best "$name-mpi.json" >"$name-mpi.out" 2>"$name-mpi.err" ||
        { cat "$name-mpi.err"; fail "$name: mpirun -np 3"; }
    grep -q '"backend": "mpi"' "$name-mpi.out" || { cat "$name-mpi.out"; fail "$name: rank 0 did not use the mpi backend"; }
    [ "$(count_rows "$name-mpi.tsv")" -eq "$budget" ] || fail "$name: $(count_rows "$name-mpi.tsv") rows, not $budget"
    same_rows "$name-single" "$name-mpi"
    # Both worker ranks took part, and each row says which rank evaluated it.
    for r in 1 2; do
        note_ends_with "$name-mpi.tsv" "rank $r" || fail "$name: no row evaluated by rank $r"
    done
    step "$name: mpirun -np 3 rows equal the single-process run ($budget rows, batch $batch)"
}

step "a. rows under mpirun -np 3 equal a single-process run"
run_pair sim rmsnorm 48 4 --backend "sim:$sweep"
run_pair model gemm 30 6 --backend model

step "a2. a rank on another device, a rank on another shape: excluded, rows unchanged"
# MPMD: rank 2 runs the model backend (another device string), rank 3 another shape.
common=(rmsnorm --seed 7 --budget 48 --batch 4 --results excl-mpi.tsv --best excl-mpi.json)
"$mpirun" --oversubscribe -np 2 "$amk" loop "${common[@]}" --backend "sim:$sweep" \
    : -np 1 "$amk" loop "${common[@]}" --backend model \
    : -np 1 "$amk" loop "${common[@]}" --backend "sim:$sweep" --shape M=1024 \
    >excl-mpi.out 2>excl-mpi.err || { cat excl-mpi.err; fail "excl: mpirun"; }
grep -q "rank 2 evaluates on .*excluded" excl-mpi.err || { cat excl-mpi.err; fail "excl: rank 2 (model) was not excluded"; }
grep -q "rank 3 built another kernel spec or shape.*excluded" excl-mpi.err ||
    { cat excl-mpi.err; fail "excl: rank 3 (other shape) was not excluded"; }
for r in 2 3; do
    note_ends_with excl-mpi.tsv "rank $r" && fail "excl: excluded rank $r evaluated a trial"
done
note_ends_with excl-mpi.tsv "rank 1" || fail "excl: rank 1 evaluated no trial"
same_rows sim-single excl-mpi
step "excl: ranks 2 and 3 excluded with their reason; rows equal the single run"

step "b. SIGKILL of rank 2 mid-run"
budget=60
"$amk" loop rmsnorm --seed 11 --budget $budget --batch 4 --backend "sim:$sweep" \
    --results kill-single.tsv --best kill-single.json >/dev/null 2>kill-single.err ||
    { cat kill-single.err; fail "kill: single run"; }
mark="cli_mpi_$$_$RANDOM"
AMK_SIM_DELAY_MS=100 AMK_TEST_MPI_MARK=$mark "$mpirun" --enable-recovery --oversubscribe -np 3 \
    "$amk" loop rmsnorm --seed 11 --budget $budget --batch 4 --backend "sim:$sweep" \
    --rank-timeout 1 --results kill-mpi.tsv --best kill-mpi.json >kill-mpi.out 2>kill-mpi.err &
bg=$!
# Some rows, but far from all: 2 configs per rank per batch of 4 at 100 ms each.
for _ in $(seq 1 300); do
    [ -f kill-mpi.tsv ] && [ "$(count_rows kill-mpi.tsv)" -ge 8 ] && break
    sleep 0.05
done
[ -f kill-mpi.tsv ] && [ "$(count_rows kill-mpi.tsv)" -ge 8 ] || fail "kill: no rows after 15 s"
cp kill-mpi.tsv kill-snapshot.tsv
victim=""
for env in /proc/[0-9]*/environ; do
    e=$(tr '\0' '\n' 2>/dev/null <"$env") || continue
    if grep -qx "AMK_TEST_MPI_MARK=$mark" <<<"$e" && grep -qx 'OMPI_COMM_WORLD_RANK=2' <<<"$e"; then
        pid=${env#/proc/}
        victim=${pid%/environ}
    fi
done
[ -n "$victim" ] || fail "kill: rank 2's process not found"
kill -9 "$victim"
snap=$(count_rows kill-snapshot.tsv)
step "killed rank 2 (pid $victim) with $snap of $budget rows written"
rc=0
wait "$bg" || rc=$?
bg=""
[ "$rc" -eq 0 ] || { cat kill-mpi.err; fail "kill: mpirun exited $rc"; }
grep -q '"trials": '$budget kill-mpi.out || { cat kill-mpi.out kill-mpi.err; fail "kill: rank 0 did not finish the budget"; }
grep -q 'rank 2 missed' kill-mpi.err || { cat kill-mpi.err; fail "kill: rank 0 did not report rank 2 dead"; }
[ "$snap" -lt "$budget" ] || fail "kill: the run had finished before the kill"
head -c "$(stat -c %s kill-snapshot.tsv)" kill-mpi.tsv | cmp -s - kill-snapshot.tsv ||
    fail "kill: rows written before the kill are not a prefix of the final file"
[ "$(count_rows kill-mpi.tsv)" -eq $budget ] || fail "kill: $(count_rows kill-mpi.tsv) rows, not $budget"
same_rows kill-single kill-mpi
step "kill: exit 0, $budget rows, the $snap rows before the kill kept, equal to the single run"
step "ok"
