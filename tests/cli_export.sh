#!/usr/bin/env bash
# `amk export` and `amk lookup`: JSON database and C header from a fixture results file,
# lookups at every level, and bad input with its exit codes.
# Run as: bash cli_export.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
EX="$SRC/tests/fixtures/export"
H100="NVIDIA H100 80GB HBM3"

# --- help -------------------------------------------------------------------------------
for cmd in export lookup; do
    run "$cmd" --help
    expect_rc 0
    expect_out "usage: amk $cmd"
done
run help
expect_out "export" "lookup"

# --- export json --------------------------------------------------------------------------
run export "$EX/results.tsv" --format json -o db.json
expect_rc 0
expect_no_out
cp db.json "$WORK/out"
expect_json
expect_py db.json 'd["format"] == "amk-tuned-db" and d["version"] == 1'
expect_py db.json 'sorted(d["vendors"]) == ["amd", "nvidia", "unknown"]'
expect_py db.json 'd["vendors"]["nvidia"]["archs"]["sm_90"]["devices"]["'"$H100"'"]["kernels"]["gemm"]["shapes"]["M=4096,N=4096,K=4096,dtype=f32"]["latency_us"] == 400'
expect_py db.json 'd["kernels"]["gemm"]["default"]["params"]["BM"] == 128'
# stdout by default, same content
run export "$EX/results.tsv"
expect_rc 0
cmp -s "$WORK/out" db.json || fail "export to stdout differs from -o"
# --kernel, --include-replayed
run export "$EX/results.tsv" --kernel copy
expect_rc 0
expect_py "$WORK/out" 'list(d["kernel_info"]) == ["copy"]'
run export "$EX/results.tsv" --kernel gemm --include-replayed -o replayed.json
expect_rc 0
expect_py replayed.json 'd["include_replayed"] is True'

# --- lookup -----------------------------------------------------------------------------
run lookup gemm --db db.json --device "$H100" --shape M=4096,N=4096,K=4096,dtype=f32
expect_rc 0
expect_json
expect_py "$WORK/out" 'd["matched"]["level"] == "device" and d["matched"]["nearest"] is False and d["config"]["BM"] == 128'
run lookup gemm --db db.json --device "$H100" --shape M=1000,N=1000,K=1000 --dtype f32
expect_rc 0
expect_py "$WORK/out" 'd["matched"]["nearest"] is True and d["matched"]["shape"] == "M=1024,N=1024,K=1024,dtype=f32" and d["config"]["BM"] == 64'
run lookup gemm --db db.json --device "NVIDIA H100 PCIe" --shape M=8192,N=8192,K=8192,dtype=f32
expect_py "$WORK/out" 'd["matched"]["level"] == "arch" and d["matched"]["arch"] == "sm_90" and d["config"]["BM"] == 256'
run lookup gemm --db db.json --device "AMD Instinct MI250X" --shape M=4096,N=4096,K=4096,dtype=f32
expect_py "$WORK/out" 'd["matched"]["level"] == "vendor" and d["matched"]["vendor"] == "amd"'
run lookup gemm --db db.json --device "Some Other GPU" --shape M=4096,N=4096,K=4096,dtype=f32
expect_py "$WORK/out" 'd["matched"]["level"] == "default" and d["config"]["BM"] == 128'
run lookup gemm --db replayed.json --device "$H100" --shape M=4096,N=4096,K=4096,dtype=f32
expect_py "$WORK/out" 'd["config"]["BN"] == 256 and d["matched"]["tuned"]["latency_kind"] == "replayed"'

# --- export c: compiles, answers like lookup -------------------------------------------------
if command -v cc >/dev/null 2>&1; then
    run export "$EX/results.tsv" --format c -o tuned.h
    expect_rc 0
    cat > prog.c <<'C'
#include "tuned.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    amk_tuned_match m;
    const amk_tuned_gemm_params *p;
    (void)argc;
    p = amk_tuned_gemm_ex(argv[1], atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), argv[5], &m);
    printf("%s %lld\n", m.level, p->BM);
    return 0;
}
C
    cc -std=c99 -Wall -Wextra -Werror -o prog prog.c || fail "generated header does not compile"
    [ "$(./prog "$H100" 1000 1000 1000 f32)" = "device 64" ] || fail "header: nearest shape"
    [ "$(./prog "NVIDIA H100 PCIe" 8192 8192 8192 f32)" = "arch 256" ] || fail "header: arch"
    [ "$(./prog "Unknown" 4096 4096 4096 f32)" = "default 128" ] || fail "header: default"
    pass
fi

# --- bad input ----------------------------------------------------------------------------
run export
expect_rc 1
run export "$EX/results.tsv" --format yaml
expect_rc 1
expect_err "--format must be json or c"
run export "$WORK/missing.tsv"
expect_rc 3
expect_err "no such file"
printf 'not a results file\n' > foreign.tsv
run export foreign.tsv
expect_rc 3
run export "$EX/no_measured.tsv"
expect_rc 2
expect_err "nothing to export" "measured"
expect_no_out
run export "$EX/results.tsv" --kernel nosuch
expect_rc 2
expect_err "no row of kernel 'nosuch'"
run lookup gemm --db "$EX/bad_db.json" --device "$H100" --shape M=1
expect_rc 2
expect_err "not an amk export database"
run lookup gemm --db "$EX/foreign.json" --device "$H100" --shape M=1
expect_rc 2
expect_err "format"
printf '{"format": ' > trunc.json
run lookup gemm --db trunc.json --device x --shape M=1
expect_rc 2
expect_err "malformed JSON"
run lookup gemm --db missing.json --device x --shape M=1
expect_rc 2
run lookup nosuch --db db.json --device "$H100" --shape M=1
expect_rc 2
expect_err "kernel 'nosuch' is not in the database"
run lookup gemm --db db.json --device "$H100" --shape M=1,N=2
expect_rc 2
expect_err "missing dimension K"
run lookup gemm --db db.json --device "$H100" --shape M=1,N=2,K=3,Z=4
expect_rc 2
expect_err "unknown dimension Z"
run lookup gemm --device "$H100" --shape M=1
expect_rc 1
expect_err "missing --db"
run lookup --db db.json --shape M=1
expect_rc 1

done_ok
