#!/usr/bin/env bash
# gemm_hopper's ping-pong schedule (PERSISTENT 2) against the cooperative one, one device call:
#   1. correctness: `amk evaluate --backend gpu` of every config at CHECK_SHAPES, ragged shapes
#      with more tiles than SMs, so both consumers alternate tiles, partial tiles meet the
#      TMA clipping and the ring skips ktiles % STAGES != 0 stages (the spec's own check
#      shapes, 257x520x200 and 3x136x72, give each CTA one tile); amk checks each against the
#      reference at that shape and at the spec's two small shapes;
#   2. speed: bench/regimes.sh's amk half (vs_peer beside cuBLAS, both regimes) at SHAPES;
#      PROBES=DIR (probes built here with KEEP=DIR bench/gemm_hopper_probe.sh) adds the
#      independent probe's ratio, else its column stays empty.
#
# usage: bench/pingpong.sh [CONFIG ...]   from the repository root; CONFIG as regimes.sh
#   takes it: "BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE"
#   (default: the tuned cooperative c0, then ping-pong 64x256 and 128x128 tiles)
# env: AMK (build/amk), OUT (/tmp/amk-pingpong), CHECK_SHAPES ("2113x1800x1000
#      1031x3000x840"), SHAPES ("8192x8192x8192 8192x14336x4096"), REGIMES, PROBES
# Device command (build, .device-libs carried):
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
#   export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
#   OUT=$OUT bench/pingpong.sh
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-pingpong}
CHECK_SHAPES=${CHECK_SHAPES:-"2113x1800x1000 1031x3000x840"}
SHAPES=${SHAPES:-"8192x8192x8192 8192x14336x4096"}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(
    "128 256 64 3 2 1 1 1 1 16 1"
    "64 256 64 4 2 1 1 1 2 16 1"
    "128 128 64 4 2 1 1 1 2 16 1"
    "64 256 64 4 2 1 2 1 2 16 1"
    "128 128 64 5 2 1 1 1 2 16 1"
    "64 256 64 3 2 1 1 1 2 16 1")
names=(BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE)

checks=$OUT/checks.tsv
printf 'config\tparams\tshape\tstatus\tcorrect\tnote\n' >"$checks"
for ((j = 0; j < ${#configs[@]}; j++)); do
    read -r -a v <<<"${configs[$j]}"
    params=$(for k in "${!names[@]}"; do printf '"%s":%s,' "${names[$k]}" "${v[$k]}"; done)
    for s in $CHECK_SHAPES; do
        IFS=x read -r m n k <<<"$s"
        printf '{"kernel":"gemm_hopper","shape":{"M":%s,"N":%s,"K":%s,"dtype":"bf16"},"params":{%s}}\n' \
            "$m" "$n" "$k" "${params%,}" >"$OUT/chk.json"
        "$AMK" evaluate "$OUT/chk.json" --backend gpu --regime burst --quiet >"$OUT/chk_v.json" \
            2>>"$OUT/checks.err"
        python3 - "$OUT/chk_v.json" "$j" "${configs[$j]}" "$s" >>"$checks" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except ValueError:
    v = {"status": "no verdict"}
notes = v.get("notes") or ""
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], str(v.get("status")),
                 str(v.get("correct")), notes.replace("\t", " ").replace("\n", " ")[:300]]))
PY
    done
done
column -t -s $'\t' "$checks" | cut -c1-160

PROBES=${PROBES:-$OUT/no-probes} SHAPES="$SHAPES" OUT="$OUT" AMK="$AMK" \
    bash "$HERE/regimes.sh" "${configs[@]}"
