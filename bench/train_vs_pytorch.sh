#!/usr/bin/env bash
# Training throughput and peak memory of swnc's programs against PyTorch CPU on the same
# networks (bench/pytorch_nets.py builds each example in PyTorch), batch and thread count:
#   lenet b64, cifar10_quick b100, alexnet b32, vgg16 b8, resnet50 b8, googlenet b8,
#   mobilenet_v2, efficientnet_b0 and densenet121 b16 (PyTorch's: torchvision's models; its
#   efficientnet_b0 drops residual branches at random, examples/efficientnet_b0.swn does not).
# swnc runs 2 threads; PyTorch runs torch.set_num_threads(2) with OpenBLAS's own pool at 1
# thread and at 2 threads, and the faster of the two is its figure (the table says which won).
# Runs alternate (swnc, PyTorch at 1, PyTorch at 2, twice) and each side keeps its best, because
# the machine is shared and noisy. Everything runs with OPENBLAS_CORETYPE=Haswell (OpenBLAS held
# to AVX2, this environment's preset) and again with it unset (OpenBLAS picks AVX-512 here).
# swnc's rate is its training loop's over the second half of the run (data loading included:
# synthetic images for the ImageNet-sized nets, Fashion-MNIST for lenet); PyTorch's is on one
# in-memory random batch after warm-up. Peak RSS: swnc's from /usr/bin/time, PyTorch's from
# getrusage; "predicted" is `swnc --stats`'s memory of a run for the same batch and test set.
#   bench/train_vs_pytorch.sh [BUILD_DIR] [NET...]     (default: build, every net)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
swnc=$build/driver/swnc
py=/usr/bin/python3 # Debian's python3-torch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(lenet cifar10_quick alexnet vgg16 resnet50 googlenet mobilenet_v2 efficientnet_b0 densenet121)
batch_of() { case $1 in lenet) echo 64 ;; cifar10_quick) echo 100 ;; alexnet) echo 32 ;; mobilenet_v2 | efficientnet_b0 | densenet121) echo 16 ;; *) echo 8 ;; esac; }
iterations_of() { case $1 in lenet) echo 800 ;; cifar10_quick) echo 200 ;; vgg16) echo 4 ;; *) echo 10 ;; esac; }

# images/s of the second half of the run, and peak RSS in MiB
swnc_run() { # net batch iterations
  /usr/bin/time -f "%M" -o "$work/rss" "$work/$1" --batch "$2" --iterations "$3" --threads 2 \
    --display $(($3 / 2)) --test-size 8 --quiet --log "$work/log.json" >/dev/null
  printf "%s %s\n" "$(grep '"train"' "$work/log.json" | tail -1 | sed 's/.*"images_per_s":\([0-9.]*\).*/\1/')" \
    "$(awk "{ print \$1 / 1024 }" "$work/rss")"
}
torch_run() { # blas_threads net batch iterations
  OPENBLAS_NUM_THREADS=$1 $py "$root/bench/pytorch_nets.py" "$2" 2 "$4" "$3"
}
best() { awk "BEGIN { print ($1 > $2) ? $1 : $2 }"; }
least() { awk "BEGIN { print ($1 < $2 || $2 == 0) ? $1 : $2 }"; }

# compiled for the batch it runs at, so the plans are chosen for that batch
for net in "${nets[@]}"; do "$swnc" "$root/examples/$net.swn" -D train.batch="$(batch_of "$net")" -o "$work/$net"; done
echo "# swnc vs PyTorch $($py -c 'import torch; print(torch.__version__)') CPU training, 2 threads"
echo "# img/s: higher is better; RSS: peak MiB, lower is better"
printf "%-17s %-14s %6s %9s %9s %7s %9s %9s %9s %7s  %s\n" OPENBLAS_CORETYPE network batch \
  "swnc" "pytorch" "speed" "swnc RSS" "predicted" "pt RSS" "memory" "pytorch's best OpenBLAS pool"
for coretype in Haswell unset; do
  if [ "$coretype" = unset ]; then envs=(env -u OPENBLAS_CORETYPE); else envs=(env OPENBLAS_CORETYPE=$coretype); fi
  for net in "${nets[@]}"; do
    batch=$(batch_of "$net") iterations=$(iterations_of "$net")
    predicted=$("$swnc" --stats -D train.batch="$batch" -D data.test_size=8 "$root/examples/$net.swn" |
      sed -n 's/^memory of a run *\([0-9.]*\) MiB.*/\1/p')
    ours=0 ours_rss=0 pool1=0 pool2=0 theirs_rss=0
    for round in 1 2; do
      read -r rate rss < <("${envs[@]}" bash -c "$(declare -f swnc_run); work=$work; swnc_run $net $batch $iterations")
      ours=$(best "$rate" "$ours") ours_rss=$(least "$rss" "$ours_rss")
      for pool in 1 2; do
        read -r rate rss < <("${envs[@]}" bash -c "$(declare -f torch_run); py=$py root=$root; torch_run $pool $net $batch $iterations")
        if [ $pool = 1 ]; then pool1=$(best "$rate" "$pool1"); else pool2=$(best "$rate" "$pool2"); fi
        theirs_rss=$(least "$rss" "$theirs_rss")
      done
    done
    theirs=$(best "$pool1" "$pool2")
    winner=$(awk "BEGIN { print ($pool1 >= $pool2) ? \"1 thread ($pool1 vs $pool2 img/s)\" : \"2 threads ($pool2 vs $pool1 img/s)\" }")
    printf "%-17s %-14s %6d %9.1f %9.1f %6.2fx %9.0f %9.0f %9.0f %6.2fx  %s\n" "$coretype" "$net" "$batch" \
      "$ours" "$theirs" "$(awk "BEGIN { print $ours / $theirs }")" "$ours_rss" "$predicted" "$theirs_rss" \
      "$(awk "BEGIN { print $ours_rss / $theirs_rss }")" "$winner"
  done
done
