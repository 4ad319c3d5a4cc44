#!/usr/bin/env bash
# Training beside other work: LeNet (batch 64) and ResNet-50 (batch 8) at 2 threads, alone and
# with two busy processes beside them (two CPU-bound loops: this machine has 2 cores, so a fair
# share is half of it, a 2x slowdown), for swnc's programs with their OpenMP threads waiting
# passively (the default, runtime/wait_policy.c) and spinning (OMP_WAIT_POLICY=active: libgomp's
# own default), and for PyTorch at its best setting (2 threads, OpenBLAS's pool at 1 thread) on
# the same networks (bench/pytorch_nets.py). Each configuration runs twice, alternating, and
# keeps its best rate; the table gives img/s, the slowdown beside the busy processes, and peak
# RSS. OPENBLAS_CORETYPE is left as the environment sets it (printed).
#   bench/contention.sh [BUILD_DIR] [NET...]     (default: build, lenet resnet50)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
swnc=$build/driver/swnc
py=/usr/bin/python3 # Debian's python3-torch
work=$(mktemp -d)
busy=()
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; busy=(); }
trap 'stop_busy; rm -rf "$work"' EXIT

nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(lenet resnet50)
batch_of() { case $1 in lenet) echo 64 ;; cifar10_quick) echo 100 ;; alexnet) echo 32 ;; *) echo 8 ;; esac; }
iterations_of() { case $1 in lenet) echo 400 ;; cifar10_quick) echo 100 ;; *) echo 8 ;; esac; }

start_busy() {
  for i in 1 2; do awk 'BEGIN { for (;;) x++ }' & busy+=($!); done
}

# "IMG/S RSS_MIB" of one run: swnc's training loop over the second half of its run (its log),
# PyTorch's after warm-up
run() { # kind net batch iterations
  case $1 in
    swnc-passive | swnc-spin)
      local policy=passive
      [ "$1" = swnc-spin ] && policy=active
      OMP_WAIT_POLICY=$policy /usr/bin/time -f "%M" -o "$work/rss" "$work/$2" --batch "$3" \
        --iterations "$4" --threads 2 --display $(($4 / 2)) --test-size 8 --quiet \
        --log "$work/log.json" >/dev/null
      printf "%s %s\n" "$(grep '"train"' "$work/log.json" | tail -1 | sed 's/.*"images_per_s":\([0-9.]*\).*/\1/')" \
        "$(awk '{ print $1 / 1024 }' "$work/rss")" ;;
    pytorch) OPENBLAS_NUM_THREADS=1 $py "$root/bench/pytorch_nets.py" "$2" 2 "$4" "$3" ;;
  esac
}
best() { awk "BEGIN { print ($1 > $2) ? $1 : $2 }"; }

for net in "${nets[@]}"; do
  "$swnc" "$root/examples/$net.swn" -D train.batch="$(batch_of "$net")" -o "$work/$net"
done
echo "# training alone and beside two busy processes, 2 threads, $(nproc) cores;" \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; PyTorch $($py -c 'import torch; print(torch.__version__)')"
echo "# img/s: best of 2 alternating runs; slowdown: alone / busy (a fair share of 2 cores is 2x)"
printf "%-10s %-13s %10s %10s %9s %9s\n" network program "alone" "busy" slowdown "RSS MiB"
for net in "${nets[@]}"; do
  batch=$(batch_of "$net") iterations=$(iterations_of "$net")
  declare -A alone=() loaded=() rss=()
  for kind in swnc-passive swnc-spin pytorch; do alone[$kind]=0 loaded[$kind]=0; done
  for round in 1 2; do
    for kind in swnc-passive swnc-spin pytorch; do
      read -r rate mib < <(run $kind "$net" "$batch" "$iterations")
      alone[$kind]=$(best "$rate" "${alone[$kind]}") rss[$kind]=$mib
      start_busy
      read -r rate mib < <(run $kind "$net" "$batch" "$iterations")
      stop_busy
      loaded[$kind]=$(best "$rate" "${loaded[$kind]}")
    done
  done
  for kind in swnc-passive swnc-spin pytorch; do
    printf "%-10s %-13s %10.1f %10.1f %8.2fx %9.0f\n" "$net" "$kind" "${alone[$kind]}" "${loaded[$kind]}" \
      "$(awk "BEGIN { print ${alone[$kind]} / ${loaded[$kind]} }")" "${rss[$kind]}"
  done
done
