#!/bin/sh
# The sw26010 target's figures: the emulator's own speed (bench/emulator: launch, RLC, DMA),
# the published DMA experiments priced by the cost model against their published rates
# (bench/sw26010_dma),
# lenet training speed emulated against the host target on this machine, and the cost model's
# estimates per convolution and plan for vgg16 at batch 128 and 512 (from shapes, as the
# strategy pass sees them), with the plan chosen, and whole networks on one chip from the model
# alone (swnc --estimate) against the rates swCaffe published for them (Li, Fang et al., 2018).
# Usage: bench/sw26010.sh BUILD_DIR
build=${1:-build}
swnc=$build/driver/swnc root=$(dirname "$0")/..
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
echo "== emulator (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
"$build/bench/emulator"

echo "== the published DMA experiments on the emulator, priced by the cost model"
"$build/bench/sw26010_dma"

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

echo "== whole networks, one chip: the model alone (swnc --estimate) against swCaffe's published rates"
printf "%-12s %6s %16s %16s %10s\n" network batch "estimated img/s" "swCaffe img/s" "ratio"
for row in "alexnet_bn 256 94.17" "vgg19 64 5.52" "resnet50 32 5.56" "googlenet 128 14.97"; do
  set -- $row
  est=$("$swnc" "$root/examples/$1.swn" --target=sw26010 --estimate -D batch=$2 |
    sed -n 's/^iteration: .* ms, \([0-9.]*\) images\/s.*/\1/p')
  printf "%-12s %6s %16s %16s %9.2fx\n" "$1" "$2" "$est" "$3" "$(echo "$est $3" | awk '{ print $1 / $2 }')"
done
echo "(swnc's own plans, chosen by the model; ratio: estimated / published)"
