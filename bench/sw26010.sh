#!/bin/sh
# The sw26010 target's figures: the emulator's own speed (bench/emulator: launch, RLC, DMA),
# the published DMA experiments priced by the cost model against their published rates
# (bench/sw26010_dma),
# lenet training speed emulated against the host target on this machine, the cost model's
# estimates per convolution and plan for vgg16 at batch 128 and 512 (from shapes, as the
# strategy pass sees them), with the plan chosen, what double buffering buys the implicit
# kernel (bench/sw26010_overlap), and whole networks on one chip from the model
# alone (swnc --estimate) against the rates swCaffe published for them (Li, Fang et al., 2018),
# and scaling to 1024 nodes with swCaffe's schedule (swnc-sim) against its published speedups.
# Usage: bench/sw26010.sh BUILD_DIR
build=${1:-build}
swnc=$build/driver/swnc root=$(dirname "$0")/..
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
echo "== emulator (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
"$build/bench/emulator"

echo "== the published DMA experiments on the emulator, priced by the cost model"
"$build/bench/sw26010_dma" --fit

echo "== lenet, batch 64, 10 iterations, one thread / 1 and 4 core groups"
rate() { sed -n 's/.*in [0-9ms]*, \([0-9.]*\) images\/s.*/\1/p'; }
"$swnc" "$root/examples/lenet.swn" -o "$work/host" && "$swnc" "$root/examples/lenet.swn" --target=sw26010 -o "$work/sw"
args="--iterations 10 --batch 64 --threads 1 --train-size 640 --test-size 16 --quiet"
host=$("$work/host" $args | rate)
echo "host target, one thread: $host images/s"
for groups in 1 4; do
  sw=$("$work/sw" $args --core-groups $groups --profile > "$work/p.txt" && rate < "$work/p.txt")
  est=$(sed -n 's/^estimated: .* \([0-9.]*\) images\/s$/\1/p' "$work/p.txt")
  echo "sw26010, $groups core group(s): emulated $sw images/s (emulation costs $(echo "$host $sw" |
    awk '{ printf "%.0fx", $1 / $2 }') of the host); estimated on the chip: $est images/s"
done

# The cost model prices each core group's share (a quarter of the batch): 128 is 32 images per
# group, 512 is 128 per group.
for batch in 128 512; do
  echo "== vgg16, batch $batch ($((batch / 4)) per core group): estimated ms per convolution and plan"
  "$swnc" "$root/examples/vgg16.swn" --target=sw26010 --explain -D batch=$batch -o /dev/null 2>&1 |
    awk '/^conv[0-9]/ { name = $1 } /^  (forward|wgrad|dgrad) / { ex[$1] = $2; im[$1] = $5 }
         /^  chosen:/ { printf "%-16s fwd %9s %9s  wgrad %9s %9s  dgrad %9s %9s  -> %s\n", name, ex["forward"],
                               im["forward"], ex["wgrad"], im["wgrad"], ex["dgrad"], im["dgrad"], $2 }'
done
echo "(columns: explicit, implicit, both on the CPEs; -> the layout chosen: bnrc explicit, rcnb implicit)"

echo "== double against single buffering: the implicit kernel's 3x3 layers, from the cost model"
"$build/bench/sw26010_overlap"

echo "== whole networks, one chip: the model alone (swnc --estimate) against swCaffe's published rates"
printf "%-12s %6s %14s %14s %14s %8s %8s\n" network batch "swnc plans" "swCaffe plans" "swCaffe meas." ratio ratio
for row in "alexnet_bn 256 94.17" "vgg19 64 5.52" "resnet50 32 5.56" "googlenet 128 14.97"; do
  set -- $row
  rate_of() { "$swnc" "$root/examples/$1.swn" --target=sw26010 --estimate -D batch=$2 $3 |
    sed -n 's/^iteration: .* ms, \([0-9.]*\) images\/s.*/\1/p'; }
  own=$(rate_of $1 $2) ref=$(rate_of $1 $2 --conv=swcaffe)
  printf "%-12s %6s %14s %14s %14s %7.2fx %7.2fx\n" "$1" "$2" "$own" "$ref" "$3" \
    "$(echo "$own $3" | awk '{ print $1 / $2 }')" "$(echo "$ref $3" | awk '{ print $1 / $2 }')"
done
echo "(img/s estimated with swnc's own plans, chosen by the model, and with swCaffe's; ratios: estimated / published)"

# The calibration set: convolutions swCaffe timed on one core group (Li, Fang et al.; second
# iteration, seconds), against --estimate with swCaffe's plans (--conv=swcaffe) at the same
# images per core group: AlexNet-BN at 256 (batch 1024 over 4 groups), ResNet-50 at 64 (its
# batch was not recorded; 64 is the likeliest). Ratio: estimated / measured.
calibrate() { # network batch "layer forward backward"...
  net=$1 batch=$2
  shift 2
  "$swnc" "$root/examples/$net.swn" --target=sw26010 --conv=swcaffe --estimate -D batch=$batch > "$work/est.txt"
  for row in "$@"; do
    set -- $row
    awk -v l="$1" -v f="$2" -v b="$3" -v net="$net" '$1 == l {
      printf "%-10s %-16s %9.1f %9.1f %6.2fx %9.1f %9.1f %6.2fx\n", net, l, $3, f * 1e3, $3 / (f * 1e3),
             $4, b * 1e3, $4 / (b * 1e3) }' "$work/est.txt"
  done
}
echo "== calibration layers, one core group, swCaffe's plans: estimated vs measured ms"
printf "%-10s %-16s %9s %9s %7s %9s %9s %7s\n" network layer "fwd est" "fwd meas" ratio "bwd est" "bwd meas" ratio
calibrate alexnet_bn 1024 "conv1 0.693 0.492" "conv2 0.961 2.800" "conv3 0.278 0.516" \
  "conv4 0.670 1.765" "conv5 0.644 1.705"
calibrate resnet50 256 "conv1/conv 1.084 0.467" "res2a/a/conv 0.157 0.204" "res2a/b/conv 0.185 0.698" \
  "res2a/c/conv 0.158 0.212" "res3a/b/conv 0.130 0.368" "res3b/a/conv 0.060 0.148" \
  "res4b/a/conv 0.055 0.130" "res4b/b/conv 0.101 0.296" "res5b/b/conv 0.161 0.521" \
  "res5b/c/conv 0.094 0.247"
echo "(alexnet_bn conv1's backward is its weight gradient only; conv3 runs implicit, its"
echo " transforms in rows of their own; ResNet-50 all explicit, as swCaffe ran it)"

# Scaling to 1024 nodes with swCaffe's schedule (all gradients packed into one allreduce after
# backward: swnc-sim --no-overlap), from each network's published single-node rate and gradient
# size (a profile of one iteration: sub-batch / rate seconds of compute, one bucket), on both
# TaihuLight presets, against the speedups swCaffe published (Li, Fang et al.): AlexNet 715.45x /
# 561.58x / 409.50x at sub-batches 256 / 128 / 64 with 30.13 / 45.15 / 60.01% communication;
# ResNet-50's best 928.15x (its sub-batch is not in the material here).
scale() { # network sub-batch img/s MB preset
  awk -v n="$1" -v b="$2" -v r="$3" -v mb="$4" 'BEGIN { t = b / r
    printf "swnc-profile 1\nnetwork %s\nbatch %d\nforward %.6f\nbackward %.6f\nupdate 0\n", n, b, t / 3, 2 * t / 3
    printf "buckets 1\nbucket 0 bytes %.0f ready %.6f\n", mb * 1e6, 2 * t / 3 }' > "$work/$1.prof"
  "$build/tools/swnc-sim" --profile "$work/$1.prof" --no-overlap --nodes 1024..1024 --machine "$5" |
    awk '!/^#/ { printf "%9.1fx %6.1f%%", $6, $5 }'
}
echo "== 1024 nodes, swCaffe's schedule (swnc-sim --no-overlap): predicted speedup and communication"
printf "%-10s %9s %-21s %-21s %s\n" network sub-batch "taihulight" "taihulight-links" "swCaffe measured"
for row in "alexnet 256 94.17 244 715.45x 30.13%" "alexnet 128 94.17 244 561.58x 45.15%" \
  "alexnet 64 94.17 244 409.50x 60.01%" "resnet50 32 5.56 97.7 928.15x(best)" "resnet50 64 5.56 97.7 928.15x(best)"; do
  set -- $row
  printf "%-10s %9s %s  %s  %s %s\n" "$1" "$2" "$(scale $1 $2 $3 $4 taihulight)" \
    "$(scale $1 $2 $3 $4 taihulight-links)" "$5" "${6:-}"
done
echo "(taihulight: 0.43 GB/s inside a supernode, fitted to AlexNet's sub-batch 256; taihulight-links: 12 GB/s)"
