#!/usr/bin/env bash
# Builds swnc and runs every test: once in a normal build, once under AddressSanitizer and
# UndefinedBehaviorSanitizer. Installs missing packages (including the test oracle) first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export INSTALL_FLAGS=--test
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
BUILD_DIR="$root/build" "$root/scripts/build.sh"
(cd "$root/build" && ctest -j"$jobs" --output-on-failure --timeout 900)

echo "== build and test under ASan + UBSan"
BUILD_DIR="$root/build-sanitize" BUILD_TYPE=Debug "$root/scripts/build.sh" -DSWNC_SANITIZE=ON
# The long end-to-end training run (label "slow") is left to the normal build.
(cd "$root/build-sanitize" && ASAN_OPTIONS=detect_leaks=1 ctest -j"$jobs" -LE slow --output-on-failure --timeout 900)
