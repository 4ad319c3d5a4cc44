#!/bin/sh
# Convolution plans: training with --conv=explicit, --conv=implicit, --conv=direct and
# --conv=auto gives the same losses to a relative 1e-4 for 20 iterations (one thread, so each run is reproducible).
# The plans sum in different orders; these nets amplify float rounding (cifar10_quick learns
# random synthetic labels from near-uniform outputs: one and two threads of the same plan
# already differ by 3e-5 at its own learning rate), so lenet and cifar10_quick train at a tenth
# of their learning rate, cifar10_quick without momentum, to compare the plans, not the chaos.
# Usage: plans_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib.sh"

check_net() { # NAME FILE DEFINES...
  name=$1 file=$2; shift 2
  for conv in explicit implicit direct auto; do
    if ! "$swnc" "$file" --conv=$conv "$@" -o "${name}_$conv"; then fail "$name: cannot build with --conv=$conv"; return; fi
    ./"${name}_$conv" --iterations 20 --threads 1 --train-size 2000 --test-size 100 --display 1 --quiet \
      --log "${name}_$conv.json" >/dev/null || fail "$name: --conv=$conv does not train"
  done
  losses "${name}_explicit.json" > "${name}_explicit.txt"
  for conv in implicit direct auto; do
    losses "${name}_$conv.json" > "${name}_$conv.txt"
    worst=$(paste "${name}_explicit.txt" "${name}_$conv.txt" |
      awk '{ d = ($1 - $2) / $1; if (d < 0) d = -d; if (d > w) w = d; n++ } END { if (n != 20) print "count" n; else print w + 0 }')
    case $worst in
      count*) fail "$name: $conv logged $worst losses, not 20" ;;
      *) if awk "BEGIN { exit !($worst <= 1e-4) }"; then pass; else fail "$name: $conv differs from explicit by $worst"; fi ;;
    esac
  done
}

check_net lenet "$root/examples/lenet.swn" -D train.lr=0.001
check_net cifar10_quick "$root/examples/cifar10_quick.swn" -D train.lr=0.0001 -D train.momentum=0
check_net small_resnet "$root/tests/nets/small_resnet.swn"

# The implicit plans really ran: the forced build has transforms, and their IR says so.
"$swnc" "$root/examples/cifar10_quick.swn" --conv=implicit --emit=ir > implicit.ir
[ "$(grep -c 'plan forward=implicit' implicit.ir)" -eq 3 ] && pass || fail "not every conv is implicit"
grep -q '= transform(' implicit.ir && pass || fail "no transform in an implicit cifar10_quick"
"$swnc" "$root/examples/cifar10_quick.swn" --conv=direct --emit=ir > direct.ir
[ "$(grep -c 'plan forward=direct' direct.ir)" -eq 3 ] && pass || fail "not every conv is direct"
grep -q 'bnrc16' direct.ir && pass || fail "no blocked tensor in a direct cifar10_quick"

# --autotune times every plan that can run a computation in the first iterations and reports a
# choice per computation (conv1 needs no input gradient: 2 + 3 + 3).
./cifar10_quick_explicit --iterations 8 --threads 1 --train-size 2000 --test-size 100 --quiet --autotune > tune.txt
[ "$(grep -c '^autotune: ' tune.txt)" -eq 8 ] && pass || { fail "--autotune reported $(grep -c '^autotune' tune.txt) choices, not 8"; cat tune.txt; }
finish
