#!/bin/sh
# Convolution plans: training with --conv=explicit, implicit, direct, winograd2, winograd4 and
# auto gives the same losses to a relative 1e-4 for 20 iterations (one thread, so each run is
# reproducible). Winograd computes stride-1 layers only: winograd2 the 3x3 of small_resnet and
# the 5x5 of lenet and cifar10_quick (F(2x2, 5x5)), winograd4 the 3x3 only (the 5x5 keep
# explicit under it), which the IR check below shows.
# The plans sum in different orders; these nets amplify float rounding (cifar10_quick learns
# random synthetic labels from near-uniform outputs: one and two threads of the same plan
# already differ by 3e-5 at its own learning rate), so lenet and cifar10_quick train at a tenth
# of their learning rate, cifar10_quick without momentum, to compare the plans, not the chaos.
# Usage: plans_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"

all_plans="implicit direct winograd2 winograd4 auto"
check_net() { # NAME FILE DEFINES... (plans: $plans, against explicit)
  name=$1 file=$2; shift 2
  for conv in explicit $plans; do
    if ! "$swnc" "$file" --conv=$conv "$@" -o "${name}_$conv"; then fail "$name: cannot build with --conv=$conv"; return; fi
    ./"${name}_$conv" --iterations "$iterations" --threads 1 --train-size 2000 --test-size 100 --display 1 --quiet \
      --log "${name}_$conv.json" >/dev/null || fail "$name: --conv=$conv does not train"
  done
  losses "${name}_explicit.json" > "${name}_explicit.txt"
  for conv in $plans; do
    losses "${name}_$conv.json" > "${name}_$conv.txt"
    worst=$(paste "${name}_explicit.txt" "${name}_$conv.txt" |
      awk -v count="$iterations" '{ d = ($1 - $2) / $1; if (d < 0) d = -d; if (d > w) w = d; n++ } END { if (n != count) print "count" n; else print w + 0 }')
    case $worst in
      count*) fail "$name: $conv logged $worst losses, not $iterations" ;;
      *) if awk "BEGIN { exit !($worst <= 1e-4) }"; then pass; else fail "$name: $conv differs from explicit by $worst"; fi ;;
    esac
  done
}

plans=$all_plans
check_net lenet "$root/examples/lenet.swn" -D train.lr=0.001
check_net cifar10_quick "$root/examples/cifar10_quick.swn" -D train.lr=0.0001 -D train.momentum=0
# small_resnet at a fifth of its rate: at 0.05 with momentum 0.9 the rounding of F(4x4, 3x3)
# (1e-5 of a layer's outputs against 1e-7) grew to 2.3e-4 in the loss by iteration 20; at 0.01
# every plan stays within 5e-7 of explicit.
check_net small_resnet "$root/tests/lib/nets/small_resnet.swn" -D train.lr=0.01
# Depthwise layers have the explicit plan and the depthwise plan only (--conv=NAME refuses a
# plan that cannot run a layer), so auto, which gives them the depthwise plan and the others
# direct, is compared with explicit everywhere.
plans=auto
check_net small_mobilenet "$root/tests/lib/nets/small_mobilenet.swn" -D train.lr=0.01

# Two threads take pieces of a convolution as they finish (targets/host/balance.h), so which
# thread computes what varies from run to run; the losses must not: each output is summed by
# one thread in a fixed order.
for conv in explicit direct winograd4; do
  for run in 1 2; do
    ./"small_resnet_$conv" --iterations 10 --threads 2 --train-size 2000 --test-size 100 --display 1 \
      --quiet --log "again_${conv}_$run.json" >/dev/null
    losses "again_${conv}_$run.json" > "again_${conv}_$run.txt"
  done
  if [ -s "again_${conv}_1.txt" ] && cmp -s "again_${conv}_1.txt" "again_${conv}_2.txt"; then pass
  else fail "small_resnet --conv=$conv on two threads: losses differ between runs"; fi
done

# The implicit plans really ran: the forced build has transforms, and their IR says so.
"$swnc" "$root/examples/cifar10_quick.swn" --conv=implicit --emit=ir > implicit.ir
[ "$(grep -c 'plan forward=implicit' implicit.ir)" -eq 3 ] && pass || fail "not every conv is implicit"
grep -q '= transform(' implicit.ir && pass || fail "no transform in an implicit cifar10_quick"
# The depthwise layers run the depthwise plan by the cost model's choice (auto) too.
"$swnc" "$root/tests/lib/nets/small_mobilenet.swn" --emit=ir > mobile.ir
[ "$(grep -c 'plan forward=depthwise' mobile.ir)" -eq 3 ] && pass || fail "not every depthwise layer is depthwise: $(grep -c 'plan forward=depthwise' mobile.ir)"
"$swnc" "$root/examples/cifar10_quick.swn" --conv=direct --emit=ir > direct.ir
[ "$(grep -c 'plan forward=direct' direct.ir)" -eq 3 ] && pass || fail "not every conv is direct"
grep -q 'bnrc16' direct.ir && pass || fail "no blocked tensor in a direct cifar10_quick"
for m in 2 4; do # the 3x3 stride-1 convolutions of small_resnet (not its stride-2 ones)
  "$swnc" "$root/tests/lib/nets/small_resnet.swn" --conv=winograd$m --emit=ir > winograd$m.ir
  [ "$(grep -c "plan forward=winograd$m wgrad=winograd$m dgrad=winograd$m" winograd$m.ir)" -eq 4 ] &&
    pass || fail "small_resnet: $(grep -c "plan forward=winograd$m" winograd$m.ir) convolutions in winograd$m, not 4"
done
# cifar10_quick's three 5x5: F(2x2, 5x5) under winograd2,
# explicit under winograd4
"$swnc" "$root/examples/cifar10_quick.swn" --conv=winograd2 --emit=ir > cifar_winograd2.ir
[ "$(grep -c 'plan forward=winograd2 wgrad=winograd2' cifar_winograd2.ir)" -eq 3 ] && pass ||
  fail "cifar10_quick: $(grep -c 'plan forward=winograd2' cifar_winograd2.ir) 5x5 convolutions in winograd2, not 3"
"$swnc" "$root/examples/cifar10_quick.swn" --conv=winograd4 --emit=ir > cifar_winograd4.ir
[ "$(grep -c 'plan forward=explicit' cifar_winograd4.ir)" -eq 3 ] && pass || fail "cifar10_quick: 5x5 in winograd4"

# --autotune times every plan that can run a computation in the first iterations and reports a
# choice per computation (conv1 needs no input gradient: 2 + 3 + 3).
./cifar10_quick_explicit --iterations 10 --threads 1 --train-size 2000 --test-size 100 --quiet --autotune > tune.txt
[ "$(grep -c '^autotune: ' tune.txt)" -eq 8 ] && pass || { fail "--autotune reported $(grep -c '^autotune' tune.txt) choices, not 8"; cat tune.txt; }
finish
