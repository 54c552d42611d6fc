#!/usr/bin/env bash
# Checks that the Debian packages amk needs are installed, and installs the missing ones
# when allowed: running as root or with passwordless sudo, and AMK_NO_INSTALL unset.
# Otherwise prints exactly which packages are needed and the command, and fails.
#   scripts/deps.sh [EXTRA_PACKAGE...] [--optional PACKAGE...]   (make run / make check)
# Optional packages (make check: pandas and a headless browser, for tests that skip without
# them) are installed the same way when the rest can be; where they cannot (not root, not
# packaged here, no network) deps.sh says so and succeeds: those tests then skip, with the
# reason, in the list at the end of `make check`.
set -euo pipefail

# Build: CMake, a C11 compiler, pkg-config, GSL, cJSON, zlib; Check for the test suites (the
# default build compiles them). Callers add more (make check adds python3).
packages=(cmake gcc make pkg-config libgsl-dev libcjson-dev zlib1g-dev check)
optional=()
while [ $# -gt 0 ]; do
    if [ "$1" = --optional ]; then
        shift
        optional+=("$@")
        break
    fi
    packages+=("$1")
    shift
done

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not a Debian/Ubuntu system: check what the build needs by other means.
    missing=()
    for cmd in cmake cc make pkg-config; do
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
    done
    for mod in gsl libcjson zlib check; do
        pkg-config --exists "$mod" 2>/dev/null || missing+=("pkg-config module $mod")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        exit 0
    fi
    echo "deps: not a Debian/Ubuntu system and these are missing: ${missing[*]}" >&2
    echo "deps: install CMake >= 3.20, a C11 compiler, pkg-config, GSL, cJSON, zlib and Check" >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
missing_opt=()
for p in ${optional[@]+"${optional[@]}"}; do
    installed "$p" || missing_opt+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ]; then
    exit 0
fi

cmd="apt-get update && apt-get install -y ${missing[*]}${missing_opt[*]:+ ${missing_opt[*]}}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        sudo="none"
    fi
fi
if [ -n "${AMK_NO_INSTALL:-}" ] || [ "$sudo" = none ]; then
    why="AMK_NO_INSTALL is set"
    [ "$sudo" = none ] && why="not root and no passwordless sudo"
    if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: optional packages not installed ($why): ${missing_opt[*]}; the tests" \
             "that need them will skip (apt-get install ${missing_opt[*]})" >&2
        exit 0
    fi
    echo "deps: missing packages: ${missing[*]}" >&2
    echo "deps: not installing them ($why); run as root:" >&2
    echo "    $cmd" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get update -q && [ ${#missing[@]} -eq 0 ]; then
    echo "deps: apt-get update failed; optional packages not installed: ${missing_opt[*]}" >&2
    exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}" >&2
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
    for p in "${missing[@]}"; do
        installed "$p" || { echo "deps: $p is still not installed" >&2; exit 1; }
    done
fi
# Optional: only what this distribution packages (Ubuntu's chromium is a snap wrapper, some
# releases lack it); a failure is reported, never fatal.
for p in ${missing_opt[@]+"${missing_opt[@]}"}; do
    if ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [^(]'; then
        echo "deps: optional package $p is not packaged here; the tests that need it will skip" >&2
        continue
    fi
    echo "deps: installing optional $p" >&2
    $sudo apt-get install -y -q --no-install-recommends "$p" ||
        echo "deps: optional package $p failed to install; the tests that need it will skip" >&2
done
