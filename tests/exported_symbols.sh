#!/usr/bin/env bash
# libamk.so exports exactly the installed API: every symbol `nm -D --defined-only` lists must
# be a function or object declared in an installed header, and every one those headers
# declare must be exported (a declaration without AMK_API would not link for a consumer of
# the shared library). The headers' declarations are parsed from the headers themselves
# (comments, preprocessor lines, typedefs and struct bodies skipped), not from AMK_API.
# usage: exported_symbols.sh LIBAMK_SO HEADER...   (the headers CMake installs)
set -euo pipefail
lib=$1
shift
for tool in nm python3; do
    command -v "$tool" >/dev/null || { echo "skip: $(basename "$0"): no $tool"; exit 77; }
done
nm -D --defined-only "$lib" | python3 -c '
import re, sys
# Symbols a linker may define in any shared object; not amk API.
LINKER = {"_init", "_fini", "__bss_start", "_edata", "_end"}
exported = set()
for line in sys.stdin:
    f = line.split()
    if len(f) >= 3 and f[1] not in ("U", "w", "v"):
        exported.add(f[2].split("@")[0])
exported -= LINKER
# AddressSanitizer exports an ODR indicator "__odr_asan.NAME" beside each global NAME: the
# sanitizer'"'"'s, not amk'"'"'s (a bare global without a declaration is still caught as NAME).
exported = {s for s in exported if not s.startswith("__odr_asan.")}
declared = {}
for path in sys.argv[1:]:
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    # File-scope statements: split on ";" outside braces; drop brace bodies.
    depth, stmt = 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            if ch == ";":
                s = " ".join(stmt.split())
                stmt = ""
                if not s or s.startswith("typedef") or re.match(r"(struct|enum|union) \w+$", s):
                    continue
                if re.search(r"\bextern\b", s):
                    # An object: extern TYPE NAME or NAME[...]
                    m = re.search(r"\b([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*$", s)
                else:
                    # A function: the identifier before the first "(" (not "(*name)").
                    m = re.match(r"[^(]*?\b([A-Za-z_]\w*)\s*\(", s)
                if m:
                    declared[m.group(1)] = path
            else:
                stmt += ch
bad = sorted(exported - set(declared))
missing = sorted(set(declared) - exported)
for name in bad:
    print(f"exported but in no installed header: {name}")
for name in missing:
    print(f"declared in {declared[name]} but not exported: {name}")
print(f"{len(exported)} exported, {len(declared)} declared in {len(sys.argv) - 1} headers")
sys.exit(1 if bad or missing else 0)
' "$@"
