#!/usr/bin/env bash
# Man page test: renders docs/amk.1 (man -l, else groff -man) and checks that it documents
# every subcommand `amk help` lists (the cli_commands table), every option of each command's
# help text, the exit codes and the environment variables amk reads. Exits 77 (CTest skip)
# when neither man nor groff is here.
# usage: man_page.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
amk=$1
page=$2/docs/amk.1
fail() { echo "man_page: FAIL: $*" >&2; exit 1; }

[ -f "$page" ] || fail "$page does not exist"
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
if command -v groff >/dev/null 2>&1; then
    # -ww: every warning; the page must render without one.
    groff -man -Tutf8 -ww "$page" >"$out" 2>"$out.err" || { cat "$out.err"; fail "groff failed"; }
    [ ! -s "$out.err" ] || { cat "$out.err"; fail "groff warnings in $page"; }
    sed -i 's/\x1b\[[0-9;]*m//g; s/.\x08//g' "$out"
elif command -v man >/dev/null 2>&1 && man -l "$page" >/dev/null 2>&1; then
    MANWIDTH=100 MAN_KEEP_FORMATTING= man -l "$page" 2>/dev/null | col -b >"$out"
else
    echo "man_page: SKIP: neither groff nor man can render $page here (apt-get install groff-base man-db)"
    exit 77
fi
[ -s "$out" ] || fail "rendering $page produced nothing"

# The commands, from the binary's own table (`amk help` prints "  NAME  summary" lines).
commands=$("$amk" help | awk '/^commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}')
[ -n "$commands" ] || fail "could not read the command list from '$amk help'"
missing=()
for c in $commands; do
    # Each command has its own subsection "amk NAME ..." under COMMANDS, and is in SYNOPSIS.
    grep -qE "^ {2,4}amk +$c( |$)" "$out" || missing+=("$c") # (justified: spaces vary)
done
[ ${#missing[@]} -eq 0 ] || fail "commands not documented in $page: ${missing[*]}"
echo "man_page: documents every command: $(echo $commands)"

# Every option a command's help names (`amk NAME --help`, from docs/help/NAME.txt) is in
# that command's subsection(s) of the page; the global options are documented once.
missing=()
for c in $commands; do
    [ "$c" = help ] && continue
    section=$(awk -v c="$c" '
        /^[A-Z]/ { on = 0 }
        /^  ? ?amk +[a-z]+( |$)/ { split($0, w, " "); on = (w[2] == c) }
        on' "$out")
    for o in $("$amk" help "$c" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
        case $o in --spec-dir | --target | --tables | --quiet | --help) continue ;; esac
        grep -qF -- "$o" <<<"$section" || missing+=("$c $o")
    done
done
[ ${#missing[@]} -eq 0 ] || fail "options of amk help not in their command's section of $page: $(printf '%s, ' "${missing[@]}")"
echo "man_page: every option of every command's help is in its section"

for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES; do
    grep -q "^$s" "$out" || fail "no $s section"
done
for v in AMK_CACHE_DIR AMK_KERNELS_DIR AMK_DATA_DIR AMK_TARGET AMK_LOG XDG_CACHE_HOME; do
    grep -q "^ *$v\$" "$out" || fail "environment variable $v not documented"
done
# Every exit code amk help lists.
codes=$("$amk" help | awk '/^exit codes:/ {on = 1; next} on && /^$/ {exit} on {print $1}')
for code in $codes; do
    sed -n '/^EXIT STATUS/,/^ENVIRONMENT/p' "$out" | grep -qE "^ +$code +[A-Za-z]" ||
        fail "exit code $code not documented"
done
echo "man_page: ok (exit codes: $(echo $codes))"
