#!/usr/bin/env bash
# Builds swnc and runs every test: once in a normal build, once under AddressSanitizer and
# UndefinedBehaviorSanitizer. Installs missing packages (including the test oracle) first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export INSTALL_FLAGS=--test
jobs=$(nproc)
# The multi-rank tests run mpirun, which refuses root unless told (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== build and test (RelWithDebInfo)"
BUILD_DIR="$root/build" "$root/scripts/build.sh"
(cd "$root/build" && ctest -j"$jobs" --output-on-failure --timeout 900)

echo "== build and test under ASan + UBSan"
BUILD_DIR="$root/build-sanitize" BUILD_TYPE=Debug "$root/scripts/build.sh" -DSWNC_SANITIZE=ON
# The long end-to-end training run (label "slow") is left to the normal build.
# MPI keeps memory until exit: tests/lib/lsan.supp says which (slow unwinding reaches its frames).
export LSAN_OPTIONS="suppressions=$root/tests/lib/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0"
(cd "$root/build-sanitize" && ASAN_OPTIONS=detect_leaks=1 ctest -j"$jobs" -LE slow --output-on-failure --timeout 900)
