#!/usr/bin/env bash
# --devices of `amk loop` and `amk evaluate`: malformed lists are usage errors (exit 1, the
# option named, nothing on stdout, no row written); good lists are accepted by every backend
# (model and sim ignore them); the loop's summary reports the parallelism; without a GPU,
# `--backend gpu --devices 0,1` is "no device" (exit 4), and one device is not asked for its
# model before the backend opens it. Run as:
# bash cli_devices.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
S=(--spec-dir "$TOY")

usage_devices() {
    run "$@"
    expect_rc 1
    expect_no_out
    expect_err "--devices"
    [ ! -e r.tsv ] || fail "$LAST wrote r.tsv"
    pass
}
for bad in x 0,,1 1,1 -1 1, ,1 all,0 0x1 1024 "0 1"; do
    usage_devices loop toy "${S[@]}" --backend model --budget 2 --results r.tsv --devices "$bad"
done
usage_devices loop toy "${S[@]}" --backend model --budget 2 --results r.tsv --devices
usage_devices loop toy "${S[@]}" --backend model --budget 2 --results r.tsv --devices=
expect_err "empty value"
usage_devices loop toy "${S[@]}" --backend model --budget 2 --results r.tsv --devices 2,2
expect_err "device 2 is listed twice"

# Good lists: model ignores them; the summary says one config at a time.
for good in 0 0,1,3 3,1 all; do
    rm -f r.tsv b.json
    run loop toy "${S[@]}" --backend model --budget 4 --results r.tsv --best b.json --devices "$good"
    expect_rc 0
    expect_json
    expect_py "$WORK/out" 'd["trials"] == 4 and d["parallelism"] == 1 and "devices" not in d'
    pass
done

# evaluate: same parsing.
run propose toy "${S[@]}"
expect_rc 0
jget "$WORK/out" 'd["config"]' > c.json
run evaluate c.json "${S[@]}" --devices 0,1
expect_rc 0
expect_json
pass
run evaluate c.json "${S[@]}" --devices 0,zero
expect_rc 1
expect_no_out
expect_err "--devices" "zero"
pass

# No GPU here: the gpu backend asked for explicitly is "no device", whatever the list.
if ! "$AMK" devices --require >/dev/null 2>&1; then
    run loop toy "${S[@]}" --backend gpu --budget 2 --results r2.tsv --devices 0,1
    expect_rc 4
    expect_no_out
    pass
    run evaluate c.json "${S[@]}" --backend gpu --devices 1
    expect_rc 4
    expect_no_out
    pass
    # Two devices are asked for their models (one search per model); one device is not
    # asked (a run worker and a driver start-up): opening the backend says it does not answer.
    export AMK_LOG=debug
    run loop toy "${S[@]}" --backend gpu --budget 2 --results r2.tsv --devices 0,1
    expect_rc 4
    expect_err "gpu: device query took"
    run loop toy "${S[@]}" --backend gpu --budget 2 --results r2.tsv --devices 0
    expect_rc 4
    expect_err "no GPU device answers"
    ! grep -qF "gpu: device query" "$WORK/err" || fail "'$LAST' asked the devices for one"
    pass
    unset AMK_LOG
fi

# Help documents the option.
run loop --help
expect_rc 0
grep -q -- "--devices LIST" "$WORK/out" || fail "amk loop --help does not document --devices"
run evaluate --help
grep -q -- "--devices LIST" "$WORK/out" || fail "amk evaluate --help does not document --devices"
pass
done_ok
