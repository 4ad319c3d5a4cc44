#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for SECONDS (default 1800)
# from the committed inputs, both at once:
#   fuzz_compile  .swn text through every pass and both backends (corpus: examples, tests/lib/nets,
#                 tests/frontend/errors, tests/frontend/fuzz/regressions)
#   fuzz_readers  IDX, CIFAR, checkpoint and tuning-file readers (corpus: fuzz-readers-corpus/)
# New crashers land in build-fuzz/crashes/; a fixed one belongs in tests/frontend/fuzz/regressions/.
# (tests/frontend/fuzz/mutate.py fuzzes every reader through the commands themselves, under the
# sanitizer build: tests/frontend/fuzz/mutate.py --build build-sanitize --root . --work W.)
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-1800}
"$root/scripts/install-deps.sh"
build=$root/build-fuzz
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWNC_FUZZ=ON -DSWNC_NATIVE=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_compile fuzz_readers
mkdir -p "$build/corpus-compile" "$build/corpus-readers" "$build/crashes"
cp "$root"/examples/*.swn "$root"/tests/lib/nets/*.swn "$root"/tests/frontend/errors/*.swn "$build/corpus-compile/"
cp "$root"/tests/frontend/fuzz/regressions/* "$build/corpus-compile/" 2>/dev/null || true
run() { # target corpus extra-options
  "$build/tests/frontend/$1" "$build/$2" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -artifact_prefix="$build/crashes/$1-" -print_final_stats=1 "${@:3}" >"$build/$1.log" 2>&1
}
run fuzz_compile corpus-compile -dict="$root/tests/frontend/fuzz/swn.dict" -max_len=4096 &
ASAN_OPTIONS=detect_leaks=0 run fuzz_readers corpus-readers -detect_leaks=0 -fork=1 -ignore_ooms=1 -max_len=65536 &
wait
for t in fuzz_compile fuzz_readers; do
  echo "== $t"; grep -E "stat::number_of_executed_units|stat::new_units_added|cov:" "$build/$t.log" | tail -3
done
