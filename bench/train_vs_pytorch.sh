#!/usr/bin/env bash
# Training throughput of swnc against PyTorch CPU, measured in the same run: LeNet (batch 64,
# Fashion-MNIST) and cifar10_quick (batch 100, synthetic data), with 1 and 2 threads, under
# OPENBLAS_CORETYPE=Haswell (OpenBLAS held to AVX2, this environment's preset) and unset
# (OpenBLAS picks its kernels for the CPU; AVX-512 here); best of two alternating runs of each.
# swnc's rate is its training loop's
# (data loading included, evaluation excluded); PyTorch's is on in-memory tensors.
# Also the peak RSS of a LeNet training run of each.
#   bench/train_vs_pytorch.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
swnc=$build/driver/swnc
py=/usr/bin/python3 # Debian's python3-torch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$swnc" "$root/examples/lenet.swn" -o "$work/lenet"
"$swnc" "$root/examples/cifar10_quick.swn" -o "$work/cifar10_quick"

# images/s of the second half of an N-iteration run (the first half warms up)
swnc_rate() { # net threads iterations
  "$work/$1" --iterations "$3" --threads "$2" --display $(($3 / 2)) --test-size 100 --quiet \
    --log "$work/log.json" >/dev/null
  grep '"train"' "$work/log.json" | tail -1 | sed 's/.*"images_per_s":\([0-9.]*\).*/\1/'
}

echo "# swnc vs PyTorch $($py -c 'import torch; print(torch.__version__)') CPU training, images/s (higher is better)"
printf "%-26s %-14s %8s %10s %10s %7s\n" "OPENBLAS_CORETYPE" network threads swnc pytorch ratio
for coretype in Haswell unset; do
  for net in lenet:400 cifar10_quick:200; do
    name=${net%:*} iterations=${net#*:}
    for threads in 1 2; do
      if [ "$coretype" = unset ]; then envs=(env -u OPENBLAS_CORETYPE); else envs=(env OPENBLAS_CORETYPE=$coretype); fi
      # best of two alternating runs each: the machine is shared and noisy (+-25% seen)
      ours=0 theirs=0
      for round in 1 2; do
        o=$("${envs[@]}" bash -c "$(declare -f swnc_rate); work=$work; swnc_rate $name $threads $iterations")
        t=$("${envs[@]}" $py "$root/bench/pytorch_nets.py" "$name" "$threads" "$iterations" | cut -d' ' -f1)
        ours=$(awk "BEGIN { print ($o > $ours) ? $o : $ours }")
        theirs=$(awk "BEGIN { print ($t > $theirs) ? $t : $theirs }")
      done
      printf "%-26s %-14s %8d %10.0f %10.0f %6.2fx\n" "$coretype" "$name" "$threads" "$ours" "$theirs" \
        "$(awk "BEGIN { print $ours / $theirs }")"
    done
  done
done

echo
echo "# peak RSS while training LeNet (MiB)"
/usr/bin/time -f "%M" -o "$work/rss" "$work/lenet" --iterations 200 --threads 2 --quiet >/dev/null
printf "swnc     %6.0f (Fashion-MNIST in memory as uint8: 55 MiB of it)\n" "$(awk "BEGIN { print $(cat "$work/rss") / 1024 }")"
printf "pytorch  %6.0f (random in-memory batch only)\n" "$($py "$root/bench/pytorch_nets.py" lenet 2 50 | cut -d' ' -f2)"
