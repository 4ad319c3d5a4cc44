#!/usr/bin/env bash
# End-to-end training time of vgg16 and resnet50 with every convolution forced explicit, every
# one forced implicit, the cost model's choice (auto) and the tuned choice (swnc tune, then
# --tune), measured in the same run: seconds per training iteration at batch 16 (synthetic
# data; the implicit kernels vectorise over 16 images), best of two runs of ITERATIONS
# iterations after one warm-up iteration. Prints each
# against the better of the two forced plans (the target: tuned within 3%).
#   bench/plans_end_to_end.sh [BUILD_DIR] [ITERATIONS]     (defaults: build, 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
iterations=${2:-3}
swnc=$build/driver/swnc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
batch="-D train.batch=16 -D train.test_batch=16"

# seconds per iteration of the last ITERATIONS of ITERATIONS+1, best of two
per_iteration() { # program
  local best=""
  for run in 1 2; do
    "$1" --iterations $((iterations + 1)) --display 1 --train-size 256 --test-size 16 --quiet --log "$work/log.json" >/dev/null
    local t
    t=$(grep '"train"' "$work/log.json" | sed 's/.*"images_per_s":\([0-9.]*\).*/\1/' | tail -n "$iterations" |
      awk '{ s += 16 / $1 } END { printf "%.3f", s / NR }')
    if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best=$t; fi
  done
  echo "$best"
}

echo "# seconds per training iteration, batch 16, $(nproc) threads, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"
printf "%-10s %9s %9s %9s %9s   %s\n" network explicit implicit auto tuned "auto, tuned vs the better forced plan"
for net in vgg16 resnet50; do
  src=$root/examples/$net.swn
  "$swnc" tune $batch "$src" -o "$work/$net.tune" 2>"$work/tune.log"
  for mode in explicit implicit auto; do "$swnc" $batch --conv=$mode "$src" -o "$work/$net-$mode"; done
  "$swnc" $batch --tune="$work/$net.tune" "$src" -o "$work/$net-tuned"
  "$swnc" $batch --tune="$work/$net.tune" --explain "$src" | grep "chosen" | sort | uniq -c | sort -rn > "$work/$net.choices"
  e=$(per_iteration "$work/$net-explicit") i=$(per_iteration "$work/$net-implicit")
  a=$(per_iteration "$work/$net-auto") t=$(per_iteration "$work/$net-tuned")
  best=$(awk "BEGIN { print ($e < $i) ? $e : $i }")
  printf "%-10s %9s %9s %9s %9s   %+.1f%%, %+.1f%%\n" "$net" "$e" "$i" "$a" "$t" \
    "$(awk "BEGIN { print 100 * ($a / $best - 1) }")" "$(awk "BEGIN { print 100 * ($t / $best - 1) }")"
  echo "# $net, tuned choices:"; sed 's/^/#   /' "$work/$net.choices" | cut -c1-150
done
