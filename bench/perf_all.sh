#!/usr/bin/env bash
# One device call, one table: amk's best config against its peer (PyTorch eager / cuBLAS) for
# each kernel x shape, the device-copy yardstick of the same run, and the tuning-speed race
# (`amk loop` vs `triton.autotune`, 72 fp16 gemm configs each). Written to stay under 9
# minutes: every section has a time cap, the whole script a deadline (TOTAL_S); a section that
# fails or runs out of time is a row saying so, never the end of the script.
#
# Sections, in priority order (a section name as argument runs only those):
#   info       nvidia-smi, amk version                       (meta.txt)
#   copy       `amk loop copy`, exhaustive over the first 8 configs: the bandwidth yardstick.
#              (`amk calibrate` tunes all 48 copy + 16 fma configs, 2.6 min on the H100:
#              too long here; its first 8 copy configs come within 1% of its best.)
#   peers      bench/peers.py: every peer of the selected rows, one python process
#   rmsnorm softmax quant_fp8 gemv gemm_f32
#              `amk loop` with a small budget, each into a fresh results file
#   race       `amk loop gemm_hopper` f16 4096^3 --budget 72 with a fresh compile cache, timed
#   triton     bench/triton_autotune.py: 72 configs, fresh TRITON_CACHE_DIR, timed
#   hopper_bf16 hopper_bf16_8k hopper_f16_8k hopper_llm hopper_fp8 hopper_fp8_8k
#              gemm_hopper (TMA, warp-specialised wgmma) at 4096^3, 8192^3 and 8192x14336x4096;
#              gemm_hopper_fp8 (e4m3, per-tensor scales, bf16 out) against torch._scaled_mm
#   wgmma_bf16 wgmma_bf16_8k gemm_tc_bf16 gemm_tc_bf16_8k gemm_tc_decode quant_int8
#              (further rows, if time is left)
#
# usage: bench/perf_all.sh [SECTION...]     from the repository root
# env:   AMK (build/amk), OUT (/tmp/amk-perf), JOBS (nproc), TOTAL_S (525: no section starts
#        or runs past this many seconds after the start), AMK_PERF_DRY=1 (model backend, small
#        everything: exercises the plumbing on a machine without a GPU in seconds)
# Device command (LD_LIBRARY_PATH for the staged GSL/cJSON first):
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH; bench/perf_all.sh
# Output: $OUT/perf_table.md (also printed at the end), and per section its results .tsv,
#         the loop's JSON summary (.json) and stderr (.err); peers.jsonl, triton.json,
#         sections.tsv (what ran, how long, exit code), meta.txt.
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-perf}
JOBS=${JOBS:-$(nproc)}
TOTAL_S=${TOTAL_S:-525}
DRY=${AMK_PERF_DRY:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$AMK" ]; then
    echo "perf_all: $AMK is not an executable: build amk first (or set AMK)" >&2
    exit 1
fi
mkdir -p "$OUT"
T0=$(date +%s)
backend=gpu kinds=measured
if [ "$DRY" = 1 ]; then
    backend=model kinds=predicted,measured
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/amk-perf.XXXXXX")
export AMK_CACHE_DIR=${AMK_CACHE_DIR:-$WORK/cache}
RESERVE=8          # seconds kept at the end for the table
MIN_SECTION=15     # a section with less time left than this is skipped, with a row saying so

# label | kernel | shape | budget | batch ("-": the loop's default) | soft s (no new batch
# after) | grace s (the batch in flight; the hard cap is soft + grace) | strategy. The inputs
# and reference outputs of a shape are made once per run (the run worker caches them), so
# a trial costs its compile, one candidate check and a benchmark that stops once its median
# is pinned.
SECTIONS="
copy            copy             N=67108864,dtype=f32               8   8 25  30 exhaustive
rmsnorm         rmsnorm          M=32768,N=4096,dtype=bf16          48  - 40  30 hillclimb
softmax         softmax          M=32768,N=4096,dtype=f16           48  - 40  30 hillclimb
quant_fp8       quant_per_tensor M=16384,N=4096,dtype=fp8e4m3       48  - 30  30 hillclimb
quant_prefill   quant_per_tensor M=8192,N=4096,dtype=fp8e4m3        48  - 30  30 hillclimb
gemv            gemv             N=14336,K=4096,dtype=bf16          64  - 30  25 hillclimb
gemm_f32        gemm             M=4096,N=4096,K=4096,dtype=f32     120 - 60  25 hillclimb
race            gemm_hopper      M=4096,N=4096,K=4096,dtype=f16     72  - 150 30 hillclimb
hopper_bf16     gemm_hopper      M=4096,N=4096,K=4096,dtype=bf16    48  - 40  30 hillclimb
hopper_bf16_8k  gemm_hopper      M=8192,N=8192,K=8192,dtype=bf16    24  - 40  30 hillclimb
hopper_f16_8k   gemm_hopper      M=8192,N=8192,K=8192,dtype=f16     24  - 40  30 hillclimb
hopper_llm      gemm_hopper      M=8192,N=14336,K=4096,dtype=bf16   24  - 40  30 hillclimb
hopper_fp8      gemm_hopper_fp8  M=4096,N=4096,K=4096,dtype=fp8e4m3 48  - 40  30 hillclimb
hopper_fp8_8k   gemm_hopper_fp8  M=8192,N=8192,K=8192,dtype=fp8e4m3 24  - 40  30 hillclimb
wgmma_bf16      gemm_wgmma       M=4096,N=4096,K=4096,dtype=bf16    48  - 30  25 hillclimb
wgmma_bf16_8k   gemm_wgmma       M=8192,N=8192,K=8192,dtype=bf16    16  - 25  30 hillclimb
gemm_tc_bf16    gemm_tc          M=4096,N=4096,K=4096,dtype=bf16    48  - 25  25 hillclimb
gemm_tc_bf16_8k gemm_tc          M=8192,N=8192,K=8192,dtype=bf16    8   - 15  30 hillclimb
gemm_tc_decode  gemm_tc          M=16,N=4096,K=14336,dtype=bf16     64  - 25  20 hillclimb
quant_int8      quant_per_tensor M=16384,N=4096,dtype=int8          48  - 25  25 hillclimb
"
ORDER=(info copy peers rmsnorm softmax quant_fp8 quant_prefill gemv gemm_f32 race triton
       hopper_bf16 hopper_bf16_8k hopper_f16_8k hopper_llm hopper_fp8 hopper_fp8_8k wgmma_bf16 wgmma_bf16_8k gemm_tc_bf16 gemm_tc_bf16_8k gemm_tc_decode quant_int8)
if [ "$DRY" = 1 ]; then # the model backend answers in milliseconds: keep the shape of the run
    SECTIONS=$(awk 'NF { $6 = 5; $7 = 10 } { print }' OFS=' ' <<<"$SECTIONS")
fi

want=("$@")
[ ${#want[@]} -eq 0 ] && want=("${ORDER[@]}")
wanted() { local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
for w in "${want[@]}"; do
    case " ${ORDER[*]} " in
        *" $w "*) ;;
        *) echo "perf_all: unknown section '$w' (sections: ${ORDER[*]})" >&2; exit 1 ;;
    esac
done
left() { echo $(( TOTAL_S - ($(date +%s) - T0) )); }
say() { echo "[perf_all $(( $(date +%s) - T0 ))s] $*"; }
section_line() { awk -v l="$1" '$1 == l' <<<"$SECTIONS"; }
py=python3
command -v python3 >/dev/null || py=""

printf 'role\tlabel\tkernel\tshape\tresults\tbudget\twall_s\trc\tnote\n' >"$OUT/sections.tsv"
record() { # role label kernel shape results budget wall rc note
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$OUT/sections.tsv"
}

# The hard cap of a section: soft + grace, never past the deadline. Prints 0 to skip.
hard_cap() {
    local cap=$1 l; l=$(( $(left) - RESERVE ))
    (( cap > l )) && cap=$l
    (( cap < MIN_SECTION )) && cap=0
    echo "$cap"
}

# Why a capped command ended, for the table's notes.
exit_note() { # rc cap errfile
    case $1 in
        0) echo "" ;;
        124|137) echo "cut at the ${2} s cap" ;;
        *) echo "failed: exit $1: $(tail -n 1 "$3" 2>/dev/null | cut -c1-200 | tr '\t' ' ')" ;;
    esac
}

# One `amk loop` section into a fresh results file $OUT/LABEL.tsv.
loop_section() { # role label
    local role=$1 label=$2 line kernel shape budget batch soft grace strategy
    line=$(section_line "$label")
    read -r _ kernel shape budget batch soft grace strategy <<<"$line"
    local cap; cap=$(hard_cap $(( soft + grace )))
    if (( cap == 0 )); then
        say "$label: skipped, $(left) s left"
        record "$role" "$label" "$kernel" "$shape" "" "$budget" "-" "-" "skipped: out of time"
        return
    fi
    (( soft > cap - 5 )) && soft=$(( cap - 5 ))
    rm -f "$OUT/$label.tsv"
    local batch_arg=() # "-": the loop's default batch
    [ "$batch" != - ] && batch_arg=(--batch "$batch")
    say "$label: amk loop $kernel --shape $shape --budget $budget ${batch_arg[*]} --strategy $strategy --time ${soft}s (cap $cap s)"
    local t0 rc; t0=$(date +%s.%N)
    timeout -k 10 "$cap" "$AMK" loop "$kernel" --shape "$shape" --budget "$budget" \
        --time "${soft}s" --strategy "$strategy" --backend "$backend" "${batch_arg[@]}" \
        --jobs "$JOBS" --seed 1 \
        --results "$OUT/$label.tsv" --best "$OUT/$label.best.json" --quiet \
        >"$OUT/$label.json" 2>"$OUT/$label.err"
    rc=$?
    local wall; wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    local note; note=$(exit_note "$rc" "$cap" "$OUT/$label.err")
    say "$label: exit $rc after $wall s${note:+ ($note)}"
    record "$role" "$label" "$kernel" "$shape" "$label.tsv" "$budget" "$wall" "$rc" "$note"
}

sec_info() {
    {
        echo "date=$(date -u +%F)"
        echo "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)"
        echo "driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)"
        echo "amk=$("$AMK" --version 2>/dev/null | head -1)"
        echo "backend=$backend"
        echo "jobs=$JOBS"
    } >"$OUT/meta.txt"
    grep -q '^gpu=.' "$OUT/meta.txt" || sed -i 's/^gpu=$/gpu=(nvidia-smi: no GPU)/' "$OUT/meta.txt"
    say "info: $(tr '\n' ' ' <"$OUT/meta.txt")"
}

sec_peers() {
    local args=() label line
    for label in "${want[@]}"; do
        line=$(section_line "$label")
        [ -n "$line" ] && args+=("$(awk '{ print $2 ":" $3 }' <<<"$line")")
    done
    [ ${#args[@]} -eq 0 ] && return
    local cap; cap=$(hard_cap 90)
    if [ -z "$py" ] || (( cap == 0 )); then
        say "peers: skipped (${py:-no python3}; $(left) s left)"
        return
    fi
    say "peers: ${#args[@]} problems, cap $cap s"
    timeout -k 5 "$cap" $py "$HERE/peers.py" "${args[@]}" >"$OUT/peers.jsonl" 2>"$OUT/peers.err"
    say "peers: exit $? $(grep -c '"us"' "$OUT/peers.jsonl") timed"
}

sec_race() { # fresh compile caches: every config is compiled, as in the Triton run. NVRTC
    # (CUDA 12.9+) keeps compiles in the driver's compute cache too (~/.nv/ComputeCache,
    # across processes: a second call on a warm machine would find the race's configs there)
    AMK_CACHE_DIR=$WORK/race-cache CUDA_CACHE_PATH=$WORK/race-nvcache loop_section race race
}

sec_triton() {
    local cap; cap=$(hard_cap 240)
    if [ -z "$py" ] || (( cap == 0 )); then
        echo '{"error": "skipped: no python3 or out of time"}' >"$OUT/triton.json"
        return
    fi
    say "triton: autotune of 72 configs, fp16 4096^3, cap $cap s"
    local rc tuned=()
    # amk's race best beside Triton's, one harness (amk.torch; when the package imports here)
    if [ -s "$OUT/race.tsv" ] && $py -c 'import amk.torch' 2>/dev/null &&
        "$AMK" export "$OUT/race.tsv" -o "$WORK/race-tuned.json" 2>>"$OUT/triton.err"; then
        tuned=(AMK_TUNED="$WORK/race-tuned.json")
    fi
    env "${tuned[@]}" timeout -k 5 "$cap" $py "$HERE/triton_autotune.py" 4096 4096 4096 >"$WORK/triton.out" 2>"$OUT/triton.err"
    rc=$?
    if tail -n 1 "$WORK/triton.out" | $py -c 'import json,sys; json.loads(sys.stdin.read())' 2>/dev/null; then
        tail -n 1 "$WORK/triton.out" >"$OUT/triton.json"
    else # cut or crashed: say so; a cut run took at least the cap for its 72 configs
        local why; why=$(exit_note "$rc" "$cap" "$OUT/triton.err")
        $py -c 'import json,sys; cut = sys.argv[2] in ("124", "137")
print(json.dumps({"error": (sys.argv[1] or "no result printed") + (" (not finished: at least %s s for 72 configs)" % sys.argv[3] if cut else ""), "configs": 72}))' \
            "$why" "$rc" "$cap" >"$OUT/triton.json"
    fi
    say "triton: exit $rc: $(cut -c1-200 "$OUT/triton.json")"
}

for s in "${ORDER[@]}"; do
    [ "$s" = info ] || wanted "$s" || continue # info always: the table's heading needs it
    case $s in
        info|peers|race|triton) "sec_$s" ;;
        copy) loop_section yardstick copy ;;
        *) loop_section row "$s" ;;
    esac
done

echo "wall_s=$(( $(date +%s) - T0 ))" >>"$OUT/meta.txt"
if [ -n "$py" ]; then
    echo
    $py "$HERE/perf_table.py" table "$OUT" --kinds "$kinds" ||
        echo "perf_all: the table could not be built (see above); raw files are in $OUT"
else
    echo "perf_all: no python3: no table; raw files are in $OUT (sections.tsv lists them)"
fi
rm -rf "$WORK"
