#!/usr/bin/env bash
# Compile time from .swn to a native object with each backend (C: swnc --emit=c then $CC -c
# -O2; LLVM: swnc --emit=obj -O2), and the start-up time of `swnc run` (parse, passes, LLVM
# codegen, JIT, the program's --help) against running the prebuilt executable. Median of 5.
#   bench/compile_time.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
swnc=$build/driver/swnc
include=$build/swnc-runtime/include
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { # command...: median wall seconds of 5 runs
  for i in 1 2 3 4 5; do
    start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N)
    echo "$end - $start" | awk '{ printf "%.4f\n", $1 - $3 }'
  done | sort -n | sed -n 3p
}

c_object() { "$swnc" --emit=c -o "$work/n.c" "$1" && ${CC:-cc} -O2 -std=gnu11 -I"$include" -c "$work/n.c" -o "$work/n.o"; }
llvm_object() { "$swnc" --emit=obj -O2 -o "$work/n.o" "$1"; }

printf "%-12s %14s %14s\n" network "C backend (s)" "LLVM (s)"
for net in resnet50 googlenet vgg16 lenet; do
  printf "%-12s %14s %14s\n" "$net" "$(median c_object "$root/examples/$net.swn")" \
    "$(median llvm_object "$root/examples/$net.swn")"
done
"$swnc" "$root/examples/lenet.swn" -o "$work/lenet"
echo
printf "lenet start-up: swnc run %s s, prebuilt executable %s s (both with --help)\n" \
  "$(median "$swnc" run "$root/examples/lenet.swn" -- --help)" "$(median "$work/lenet" --help)"
