#!/usr/bin/env bash
# Checks that the Debian packages amk needs are installed, and installs the missing ones
# when allowed: running as root or with passwordless sudo, and AMK_NO_INSTALL unset.
# Otherwise prints exactly which packages are needed and the command, and fails.
#   scripts/deps.sh [EXTRA_PACKAGE...]     (make run / make check call it)
set -euo pipefail

# Build: CMake, a C11 compiler, pkg-config, GSL, cJSON, zlib; Check for the test suites (the
# default build compiles them). Callers add more (make check adds python3).
packages=(cmake gcc make pkg-config libgsl-dev libcjson-dev zlib1g-dev check "$@")

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
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

cmd="apt-get update && apt-get install -y ${missing[*]}"
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
    echo "deps: missing packages: ${missing[*]}" >&2
    echo "deps: not installing them ($why); run as root:" >&2
    echo "    $cmd" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
for p in "${missing[@]}"; do
    installed "$p" || { echo "deps: $p is still not installed" >&2; exit 1; }
done
