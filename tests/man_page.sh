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

# Defaults and options, one source: the help texts (docs/help/NAME.txt, what `amk help NAME`
# prints). Every value an option's help states in its "(default ...)" clause is in that
# option's paragraph of the page, every "default `--opt` ..." value README states is in the
# help, and every option README's command table shows is one the command takes.
python3 - "$amk" "$out" "$2/README.md" <<'PY' || fail "help, man page and README disagree (above)"
import re, subprocess, sys
amk, man_path, readme_path = sys.argv[1:4]
man = open(man_path).read().split("\n")
words = lambda t: " ".join(t.split())

def paragraphs(lines, indent):
    """option -> its paragraph (whitespace folded), for lines whose options start at indent."""
    out, cur = {}, None
    for l in lines:
        m = re.match(r"^ {%d}(--[a-z][a-z-]*)" % indent, l)
        if m:
            cur = m.group(1)
            out[cur] = out.get(cur, "") + " " + l
        elif cur and l.strip() and len(l) - len(l.lstrip()) > indent:
            out[cur] += " " + l
        elif cur and l.strip():
            cur = None
    return {k: words(v) for k, v in out.items()}

def clause_values(text):
    """The values of each '(default ...)' clause: every number, and its first word when that
    names a file, a variable or a target (a '.', '_', '$' or digit in it)."""
    vals = set()
    for m in re.finditer(r"\(default:? ([^()]*)\)", text):
        c = m.group(1)
        first = re.split(r"[\s,;:]", c)[0]
        if re.search(r"[._$0-9]", first):
            vals.add(first)
        vals.update(re.findall(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w.])", c))
    vals.discard("")
    return vals

def has(text, v):
    return re.search(r"(?<![\w.-])" + re.escape(v) + r"(?![\w-])", text) is not None

commands = [l.split()[0] for l in subprocess.run([amk, "help"], capture_output=True, text=True)
            .stdout.split("commands:\n")[1].split("\n\n")[0].split("\n") if l.strip()]
bad, helps, opts = [], {}, {}
for c in commands:
    if c == "help":
        continue
    h = subprocess.run([amk, "help", c], capture_output=True, text=True).stdout
    opts[c] = set(re.findall(r"--[a-z][a-z-]*", h))
    helps[c] = paragraphs(h.split("\n"), 2)
    sec, on = [], False
    for l in man:
        if re.match(r"^[A-Z]", l):
            on = False
        m = re.match(r"^ {2,4}amk +([a-z]+)( |$)", l)
        if m:
            on = m.group(1) == c
        if on:
            sec.append(l)
    mp = paragraphs(sec, 7)
    for opt, text in helps[c].items():
        for v in sorted(clause_values(text)):
            if opt in mp and not has(mp[opt], v):
                bad.append("amk %s %s: help says default '%s', the man page does not: %s"
                           % (c, opt, v, mp[opt][:160]))
for l in open(readme_path):
    m = re.match(r"^\| `amk ([a-z]+)([^`]*)`", l)
    if not m or m.group(1) not in helps:
        continue
    c = m.group(1)
    for opt in re.findall(r"--[a-z][a-z-]*", m.group(2)):
        if opt not in opts[c]:
            bad.append("README: amk %s %s: not an option of amk %s" % (c, opt, c))
    for opt, said in re.findall(r"default `(--[a-z][a-z-]*)` ([^;)|]*)", l):
        for v in re.findall(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w.])", said):
            if opt in helps[c] and not has(helps[c][opt], v):
                bad.append("README: amk %s %s: default '%s' is not in the help: %s"
                           % (c, opt, v, helps[c][opt][:160]))
for b in bad:
    print("man_page: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "man_page: help, man page and README agree on options and defaults"

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
