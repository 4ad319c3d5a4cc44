#!/bin/sh
# The fuse-elementwise pass: activations folded into the op before them train exactly as the
# unfused program does. For lenet, cifar10_quick, a small ResNet (ReLU after fc, pooling,
# convolution, batch norm and a residual add) and a net of max pools after activations (carried
# through the pool or not, on both layouts), 20 iterations' losses of the fused program match
# --no-fuse's to a relative 1e-5 (they are bit-identical: the same kernels on the same values),
# built from C and by LLVM on the host, and from C on the sw26010 target (its emulator); the
# fused IR has the epilogues and fewer ops, and, with the same convolution plans (explicit:
# the layout pass may lay a graph without activations out differently), its training plan is no
# larger.
# Usage: fuse_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
args="--iterations $iterations --threads 1 --display 1 --train-size 640 --test-size 32 --quiet"

ops() { grep -c '^  [^ ]* = ' "$1"; }

# Max pools carry the backward of the activation before them where that is bit for bit (ReLU,
# or windows that do not overlap), so the activation's input dies after the pool: VGG-16's
# training plan per image is under 70% of --no-fuse's (both without recomputation).
"$swnc" --emit=ir "$root/tests/lib/nets/pools.swn" > pools.ir || fail "pools IR"
for carried in "p1 carries=relu " "p2 carries=relu " "p4 carries=relu(slope=0.1) "; do
  grep -q "^  ${carried%% *} = pool(.*${carried#* }" pools.ir && pass || fail "pools: ${carried%% *} does not carry"
done
grep -q '^  p3 = pool(.*carries' pools.ir && fail "pools: p3 carries a sigmoid over overlapping windows" || pass
"$swnc" --emit=ir --no-recompute "$root/examples/vgg16.swn" > vgg16.ir &&
  "$swnc" --emit=ir --no-fuse --no-recompute "$root/examples/vgg16.swn" > vgg16-unfused.ir ||
  fail "vgg16 IR"
[ $(( $(per_image vgg16.ir) * 10 )) -lt $(( $(per_image vgg16-unfused.ir) * 7 )) ] && pass ||
  fail "vgg16: $(per_image vgg16.ir) words per image fused, $(per_image vgg16-unfused.ir) unfused"

# Convolutions after a batch norm's or a sum's ReLU apply its backward to dX (pass carry-masks),
# so the losses below compare that too.
"$swnc" --emit=ir "$root/tests/lib/nets/small_resnet.swn" > small_resnet.ir || fail "small_resnet IR"
[ "$(grep -c ' = conv(.* masks=relu ' small_resnet.ir)" -ge 3 ] && pass ||
  fail "small_resnet: $(grep -c ' masks=relu ' small_resnet.ir) convolutions carry a ReLU's backward"

for net in "$root/examples/lenet.swn" "$root/examples/cifar10_quick.swn" "$root/tests/lib/nets/small_resnet.swn" \
  "$root/tests/lib/nets/pools.swn"; do
  name=$(basename "$net" .swn)
  "$swnc" --emit=ir --conv=explicit "$net" > "$name-fused.ir" &&
    "$swnc" --emit=ir --conv=explicit --no-fuse "$net" > "$name-unfused.ir" || { fail "$name: IR"; continue; }
  if grep -q ' epilogue=relu ' "$name-fused.ir" && ! grep -q ' = relu(' "$name-fused.ir" &&
    [ "$(ops "$name-fused.ir")" -lt "$(ops "$name-unfused.ir")" ] &&
    [ "$(per_image "$name-fused.ir")" -le "$(per_image "$name-unfused.ir")" ]; then pass; else
    fail "$name: the fused IR ($(ops "$name-fused.ir") ops, $(per_image "$name-fused.ir") words per image) against the unfused ($(ops "$name-unfused.ir"), $(per_image "$name-unfused.ir"))"
  fi
  for build in "c:" "llvm:--backend=llvm" "sw26010:--target=sw26010"; do
    what=${build%%:*} flags=${build#*:}
    "$swnc" $flags "$net" -o "$name-$what-fused" && "$swnc" $flags --no-fuse "$net" -o "$name-$what-unfused" ||
      { fail "$name ($what): build"; continue; }
    batch=$([ $what = sw26010 ] && echo "--batch 8")
    ./"$name-$what-fused" $args $batch --log "$name-$what-fused.json" >/dev/null
    ./"$name-$what-unfused" $args $batch --log "$name-$what-unfused.json" >/dev/null
    close_losses "$name ($what): fused vs unfused" "$name-$what-fused.json" "$name-$what-unfused.json"
  done
done
finish
