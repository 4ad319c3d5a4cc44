#!/bin/sh
# The sw26010 target's figures: the emulator's own speed (bench/emulator: launch, RLC, DMA),
# lenet training speed emulated against the host target on this machine, and the cost model's
# estimates per convolution and plan for vgg16 at batch 128 (from shapes, as the strategy
# pass sees them), with the chosen plans' total. Usage: bench/sw26010.sh BUILD_DIR
build=${1:-build}
swnc=$build/driver/swnc root=$(dirname "$0")/..
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
echo "== emulator (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
"$build/bench/emulator"

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

echo "== vgg16, batch 128: estimated ms per convolution and plan (sw26010 cost model)"
"$swnc" "$root/examples/vgg16.swn" --target=sw26010 --explain -D batch=128 -o /dev/null 2>&1 |
  awk '/^conv[0-9]/ { name = $1 } /^  (forward|wgrad|dgrad) / { ex[$1] = $2; im[$1] = $5 }
       /^  chosen:/ { sub(/^  chosen: /, "")
                      printf "%-16s fwd %9s %9s  wgrad %9s %9s  dgrad %9s %9s\n    -> %s\n", name, ex["forward"],
                             im["forward"], ex["wgrad"], im["wgrad"], ex["dgrad"], im["dgrad"], $0 }'
echo "(columns: explicit, implicit; both on the CPEs)"
