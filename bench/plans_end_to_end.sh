#!/usr/bin/env bash
# End-to-end training time of vgg16 and resnet50 with every convolution forced explicit, every
# one forced implicit, the cost model's choice (auto) and the tuned choice (swnc tune, then
# --tune), measured in the same run: seconds per training iteration at batch 16 (synthetic
# data; the implicit kernels vectorise over 16 images), the least of three alternating rounds
# of ITERATIONS iterations after one warm-up iteration. Prints each
# against the better of the two forced plans (the target: tuned within 3%).
#   bench/plans_end_to_end.sh [BUILD_DIR] [ITERATIONS] [NETS]   (defaults: build, 3, "vgg16 resnet50")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
iterations=${2:-3}
nets=${3:-vgg16 resnet50}
swnc=$build/driver/swnc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
batch="-D train.batch=16 -D train.test_batch=16"

# seconds per iteration of the last ITERATIONS of ITERATIONS+1
per_iteration() { # program
  "$1" --iterations $((iterations + 1)) --display 1 --train-size 256 --test-size 16 --quiet --log "$work/log.json" >/dev/null
  grep '"train"' "$work/log.json" | sed 's/.*"images_per_s":\([0-9.e+]*\).*/\1/' | tail -n "$iterations" |
    awk '{ s += 16 / $1 } END { printf "%.3f", s / NR }'
}

# the least of ROUNDS alternating runs of each variant: the machine's load drifts over minutes
best_of_rounds() { # net -> variables explicit implicit auto tuned
  local net=$1 mode t
  declare -gA best=()
  for round in 1 2 3; do
    for mode in explicit implicit auto tuned; do
      t=$(per_iteration "$work/$net-$mode")
      if [ -z "${best[$mode]:-}" ] || awk "BEGIN { exit !($t < ${best[$mode]}) }"; then best[$mode]=$t; fi
    done
  done
}

echo "# seconds per training iteration, batch 16, $(nproc) threads, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"
printf "%-10s %9s %9s %9s %9s   %s\n" network explicit implicit auto tuned "auto, tuned vs the better forced plan"
for net in $nets; do
  src=$root/examples/$net.swn
  "$swnc" tune $batch "$src" -o "$work/$net.tune" 2>"$work/tune.log"
  for mode in explicit implicit auto; do "$swnc" $batch --conv=$mode "$src" -o "$work/$net-$mode"; done
  "$swnc" $batch --tune="$work/$net.tune" "$src" -o "$work/$net-tuned"
  "$swnc" $batch --tune="$work/$net.tune" --explain "$src" | grep "chosen" | sort | uniq -c | sort -rn > "$work/$net.choices"
  best_of_rounds "$net"
  e=${best[explicit]} i=${best[implicit]} a=${best[auto]} t=${best[tuned]}
  best=$(awk "BEGIN { print ($e < $i) ? $e : $i }")
  printf "%-10s %9s %9s %9s %9s   %+.1f%%, %+.1f%%\n" "$net" "$e" "$i" "$a" "$t" \
    "$(awk "BEGIN { print 100 * ($a / $best - 1) }")" "$(awk "BEGIN { print 100 * ($t / $best - 1) }")"
  for mode in auto tuned; do # the same plans as a forced program: the difference is noise
    "$swnc" $batch $( [ $mode = auto ] && echo --conv=auto || echo --tune="$work/$net.tune") --emit=ir "$src" > "$work/$mode.ir"
    for forced in explicit implicit; do
      "$swnc" $batch --conv=$forced --emit=ir "$src" > "$work/$forced.ir"
      cmp -s "$work/$mode.ir" "$work/$forced.ir" && echo "# $net: $mode compiles to the same program as --conv=$forced"
    done
  done
  echo "# $net, tuned choices:"; sed 's/^/#   /' "$work/$net.choices" | cut -c1-150
done
