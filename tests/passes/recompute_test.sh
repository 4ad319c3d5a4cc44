#!/bin/sh
# The recompute pass: backward computes batch norm outputs, residual sums and concatenations
# again instead of keeping them, by default only from values it keeps anyway, with
# --recompute=chains also from values themselves recomputed. A small ResNet trains with the
# same 20 losses, bit for bit, in both modes as with --no-recompute (the same kernels on the
# same values), built from C and by LLVM on the host and on the sw26010 target; the IR names
# what each backward step recomputes and the recomputed buffers (the sums only with chains);
# ResNet-50's training plan per image is at most 90% of --no-recompute's by default (84%: its
# batch norm outputs) and at most 70% with chains (63%: the sums too), GoogLeNet
# recomputes its inception outputs and VGG-16 its first convolution (27 multiply-adds per
# output element: its forward is 0.6% of the net's, its output the largest) but not ResNet-50
# its first (147 per element: four times a batch norm's time per byte saved); deciding what
# to recompute stays fast on a chain of sums that each read the two before them; the
# depthwise networks get the smaller of their two plans.
# Usage: recompute_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
args="--iterations $iterations --threads 1 --display 1 --train-size 160 --test-size 16 --batch 8 --quiet"
net=$root/tests/lib/nets/small_resnet.swn


"$swnc" --emit=ir "$net" > on.ir && "$swnc" --emit=ir --recompute=chains "$net" > chains.ir &&
  "$swnc" --emit=ir --no-recompute "$net" > off.ir || fail "IR"
grep -q '^  backward [^ ]*: recompute [^ ]*bn;' on.ir && ! grep -q 'recompute [^ ]*sum;' on.ir &&
  grep -q "^  train recomputed [^ ]*bn' @ " on.ir && pass ||
  fail "the IR does not show what backward recomputes from kept values (batch norms, no sums)"
grep -q 'recompute [^ ]*sum;' chains.ir && grep -q "^  train recomputed [^ ]*sum' @ " chains.ir &&
  pass || fail "--recompute=chains does not recompute the sums"
grep -q 'recompute' off.ir && fail "--no-recompute still recomputes" || pass
"$swnc" --emit=ir --recompute=none "$net" | cmp -s - off.ir && pass ||
  fail "--recompute=none differs from --no-recompute"
"$swnc" --recompute=some "$net" 2>err.txt && fail "--recompute=some accepted" ||
  { grep -q "recompute takes kept, chains or none, not 'some'" err.txt && pass ||
    fail "--recompute=some: $(cat err.txt)"; }

for build in "c:" "llvm:--backend=llvm" "sw26010:--target=sw26010"; do
  what=${build%%:*} flags=${build#*:}
  "$swnc" $flags "$net" -o "$what-on" && "$swnc" $flags --recompute=chains "$net" -o "$what-chains" &&
    "$swnc" $flags --no-recompute "$net" -o "$what-off" || { fail "$what: build"; continue; }
  for mode in on chains off; do ./"$what-$mode" $args --log "$what-$mode.json" >/dev/null; done
  for mode in on chains; do
    [ "$(losses "$what-$mode.json" | wc -l)" -eq "$iterations" ] &&
      [ "$(losses "$what-$mode.json")" = "$(losses "$what-off.json")" ] && pass ||
      fail "$what: losses with recomputation ($mode) differ from --no-recompute's"
  done
done

"$swnc" --emit=ir "$root/examples/resnet50.swn" > r50-on.ir &&
  "$swnc" --emit=ir --recompute=chains "$root/examples/resnet50.swn" > r50-chains.ir &&
  "$swnc" --emit=ir --no-recompute "$root/examples/resnet50.swn" > r50-off.ir || fail "resnet50 IR"
on=$(per_image r50-on.ir) chains=$(per_image r50-chains.ir) off=$(per_image r50-off.ir)
[ -n "$on" ] && [ $((on * 10)) -le $((off * 9)) ] && [ $((chains * 10)) -le $((off * 7)) ] &&
  [ "$chains" -lt "$on" ] && pass ||
  fail "resnet50: words per image $on recomputing from kept values, $chains with chains, $off without"
grep -q 'recompute conv1/conv;' r50-on.ir && fail "resnet50 recomputes its 7x7 first convolution" ||
  pass

# Depthwise convolutions are cheap to recompute, but recomputing them pulls the chain before
# them forward: the pass plans with and without them and keeps the smaller. MobileNetV2 is
# smaller with them (33% of --no-recompute's plan; 41% without), EfficientNet-B0 without them
# (35%; 40% with): either choice made blindly would exceed 37% on one of the two.
for n in mobilenet_v2 efficientnet_b0; do
  "$swnc" --emit=ir "$root/examples/$n.swn" > "$n-on.ir" &&
    "$swnc" --emit=ir --no-recompute "$root/examples/$n.swn" > "$n-off.ir" || fail "$n IR"
  on=$(per_image "$n-on.ir") off=$(per_image "$n-off.ir")
  [ -n "$on" ] && [ $((on * 100)) -le $((off * 37)) ] && pass ||
    fail "$n: words per image $on recomputing, $off without: more than 37%"
done
"$swnc" --emit=ir "$root/examples/googlenet.swn" | grep -q '^  backward .*: .*recompute inception_4a/output;' &&
  pass || fail "googlenet does not recompute its concatenations"
"$swnc" --emit=ir "$root/examples/vgg16.swn" > vgg16.ir &&
  grep -q '^  backward conv1/c2/conv: recompute conv1/c1/conv;' vgg16.ir &&
  ! grep -Eq 'recompute conv[2-5]/c[0-9]/conv;' vgg16.ir && pass ||
  fail "vgg16 does not recompute just its first convolution"
# Sums that each read the two before them, over a value backward keeps: deciding what to
# recompute with chains asks about each op once per question, not exponentially often (this
# took minutes).
{
  echo 'train { batch = 4 }'
  echo 'data { source = synthetic  classes = 10  train_size = 8  test_size = 8 }'
  echo 'network chain {'
  echo '  data = input(shape=[1, 4, 4])'
  echo '  label = label()'
  echo '  c = conv(data, outputs=2, kernel=1)'
  echo '  s0 = add(c, c)'
  echo '  s1 = add(s0, c)'
  k=2
  while [ $k -lt 48 ]; do echo "  s$k = add(s$((k - 1)), s$((k - 2)))"; k=$((k + 1)); done
  echo '  d = conv(c, outputs=2, kernel=1)'
  echo '  t = add(s47, d)'
  echo '  f = fc(t, outputs=10)'
  echo '  loss = softmax_loss(f, label)'
  echo '}'
} > chain.swn
timeout 20 "$swnc" --emit=ir --recompute=chains chain.swn > chain.ir && pass || fail "a chain of 48 sums: swnc did not finish in 20 s"
finish
