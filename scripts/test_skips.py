#!/usr/bin/env python3
"""Lists what a ctest run did not run, for the last lines of `make check`:
each skipped test (exit 77) with the reason it printed (its "SKIP" line), and the tests a
label filter left out.
    scripts/test_skips.py JUNIT_XML BUILD_DIR [CTEST_LABEL_ARGS...]
JUNIT_XML is ctest's --output-junit file; the label arguments (e.g. -LE slow) are those the
run was given, to name the tests they left out and the command that runs them."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def reason(out):
    """The test's own SKIP line (the last one), else its last non-empty line."""
    lines = [l.strip() for l in (out or "").splitlines() if l.strip()]
    said = [l for l in lines if re.search(r"\bskip\b", l, re.I)]
    if said:
        return re.sub(r"^.*?\bskip\b:?\s*", "", said[-1], flags=re.I) or said[-1]
    return lines[-1] if lines else "(no output)"


def left_out(build, label_args):
    """Names of the tests the label arguments exclude: all tests minus those selected."""
    def names(args):
        r = subprocess.run(["ctest", "--test-dir", build, "-N"] + args,
                           capture_output=True, text=True)
        return re.findall(r"^\s*Test\s+#\d+: (\S+)", r.stdout, re.M)
    selected = set(names(label_args))
    return [n for n in names([]) if n not in selected]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    junit, build, label_args = sys.argv[1], sys.argv[2], sys.argv[3:]
    skips = []
    try:
        for case in ET.parse(junit).getroot().iter("testcase"):
            if case.get("status") == "notrun" or case.find("skipped") is not None:
                skips.append((case.get("name"), reason(case.findtext("system-out"))))
    except (OSError, ET.ParseError) as e:
        print(f"test_skips: cannot read {junit}: {e}")
        return
    print()
    if skips:
        print(f"Skipped ({len(skips)}), each with its reason:")
        for name, why in skips:
            print(f"  SKIP {name}: {why}")
    else:
        print("Skipped: none")
    out = left_out(build, label_args) if label_args else []
    if out:
        print(f"Not run ({' '.join(label_args)}): {' '.join(out)}")
        if len(label_args) == 2 and label_args[0] == "-LE":
            print(f"  run them with: ctest --test-dir {build} -L {label_args[1]}"
                  " --output-on-failure (make check-slow)")


if __name__ == "__main__":
    main()
