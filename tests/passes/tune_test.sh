#!/bin/sh
# swnc tune and tuning files: an interrupted tune continues where it stopped, the file reads
# back (every cost of --explain is a measurement), measurements decide the plans, stale,
# foreign and malformed entries are ignored with warnings, and a forced illegal plan is an
# error naming the layer. Usage: tune_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
lenet=$root/examples/lenet.swn
rm -f t.tune
entries() { grep -vc '^#' "$1"; }

# lenet: 2 convs x 4 plans (explicit, implicit, direct, winograd2) x 4 (forward, wgrad, dgrad,
# both gradients) and the direct plan's other loop order for forward and dgrad
# (direct_tiling.h: each has at most two input blocks), 5 tensor shapes x 4 transforms (to and from (R,C,N,B) and the blocked layout)
"$swnc" tune --repeat=1 --limit=5 "$lenet" -o t.tune 2>err.txt && pass || { fail "tune --limit"; cat err.txt; }
# (a transform timed 10x its inverse is measured again, below: one more line each)
[ "$(entries t.tune)" -eq $((5 + $(grep -c "measured again" err.txt))) ] && pass || fail "--limit=5 wrote $(entries t.tune) entries"
grep -q "stopped after 5" err.txt && pass || fail "no word of stopping"
# timed on every core, as the program runs by default (not on the kernels' default of one)
grep -q "timing on $(nproc) thread" err.txt && pass || { fail "tune does not time on $(nproc) threads"; cat err.txt; }
"$swnc" tune --repeat=1 "$lenet" -o t.tune 2>err.txt && pass || { fail "tune, continued"; cat err.txt; }
again=$(grep -c "measured again" err.txt)
[ "$(entries t.tune)" -eq $((56 + again)) ] && pass || fail "the continued tune left $(entries t.tune) entries, not 56 + $again"
grep -q "51 measured, 5 already" err.txt && pass || { fail "the continued tune re-measured"; cat err.txt; }
[ "$(grep -v '^#' t.tune | cut -d' ' -f1-5 | sort -u | wc -l)" -eq 56 ] && pass || fail "duplicate entries"

# Round trip: every conv cost --explain shows comes from the file, and no warning.
"$swnc" "$lenet" --tune=t.tune --explain >explain.txt 2>err.txt && pass || fail "--tune"
[ "$(grep -c 'ms (t)' explain.txt)" -eq 8 ] && pass || fail "$(grep -c 'ms (t)' explain.txt) tuned costs, not 8"
[ -s err.txt ] && { fail "warnings from a fresh tuning file"; cat err.txt; } || pass

# Measurements decide: a file saying conv2's implicit plan is nearly free makes it implicit.
machine=$(grep -v '^#' t.tune | head -1 | cut -d' ' -f8-)
key=$(grep ' forward explicit ' t.tune | sed -n 2p | cut -d' ' -f3)
grep -v "^conv host $key" t.tune >fake.tune
for c in forward wgrad dgrad backward; do
  for plan in explicit direct winograd2; do
    echo "conv host $key $c $plan 1 2026-01-01T00:00:00Z $machine" >>fake.tune
  done
  echo "conv host $key $c implicit 0.000001 2026-01-01T00:00:00Z $machine" >>fake.tune
done
"$swnc" "$lenet" --tune=fake.tune --emit=ir >ir.txt 2>err.txt
grep -q "conv2 = conv.* rcnb plan forward=implicit wgrad=implicit dgrad=implicit" ir.txt && pass || fail "the tuning file did not decide"

# A tiling measured faster than the direct plan's rule by more than 3% replaces it (the IR and
# --explain name it, the program gets its word), and trains bit for bit as the rule does; one
# within 3% does not.
key1=$(grep ' forward direct ' t.tune | head -1 | cut -d' ' -f3)
grep -v "^conv host $key1 forward" t.tune >tiled.tune
for plan in explicit implicit; do echo "conv host $key1 forward $plan 1 2026-01-01T00:00:00Z $machine" >>tiled.tune; done
echo "conv host $key1 forward direct 0.001 2026-01-01T00:00:00Z $machine" >>tiled.tune
cp tiled.tune close.tune
echo "conv host $key1 forward direct:filters 0.0005 2026-01-01T00:00:00Z $machine" >>tiled.tune
echo "conv host $key1 forward direct:filters 0.00098 2026-01-01T00:00:00Z $machine" >>close.tune
"$swnc" "$lenet" --tune=tiled.tune --emit=ir >ir.txt 2>err.txt
grep -q "conv1 = conv.* plan forward=direct:filters " ir.txt && pass || { fail "the tiling was not chosen"; grep conv1 ir.txt; }
"$swnc" "$lenet" --tune=tiled.tune --explain 2>&1 | grep -q "chosen: .*(forward direct:filters," && pass ||
  fail "--explain does not name the tiling"
"$swnc" "$lenet" --tune=close.tune --emit=ir >ir.txt 2>err.txt
grep -q "conv1 = conv.* plan forward=direct " ir.txt && pass || { fail "a tiling within 3% was chosen"; grep conv1 ir.txt; }
"$swnc" "$lenet" --tune=tiled.tune -o tiled && "$swnc" "$lenet" --tune=close.tune -o rule || fail "build"
run="--iterations 20 --threads 2 --display 1 --train-size 640 --test-size 32 --quiet"
./tiled $run --log tiled.json && ./rule $run --log rule.json || fail "train"
same_losses "lenet, conv1 tiled" tiled.json rule.json 20 0

# Stale, foreign and malformed entries: warnings with the file's line, then ignored.
cp t.tune bad.tune
n=$(wc -l < t.tune) # the lines below are n+1 to n+4
echo "conv host b64:c9x9x9:o9x9x9:k3x3:s1x1:p1x1:g1 forward explicit 0.001 2026-01-01T00:00:00Z $machine" >>bad.tune
echo "conv sw26010 $key forward implicit 0.001 2026-01-01T00:00:00Z $machine" >>bad.tune
echo "conv host $key forward implicit 0.000001 2026-01-01T00:00:00Z another machine x64" >>bad.tune
echo "conv host half a line" >>bad.tune
"$swnc" "$lenet" --tune=bad.tune --emit=ir >ir.txt 2>err.txt && pass || fail "bad entries are not errors"
contains() { grep -qF -- "$2" "$1" && pass || { fail "'$2' not in $1"; cat "$1"; }; }
contains err.txt "bad.tune:$((n + 1)):1: warning: tuning entry for conv b64:c9x9x9"
contains err.txt "bad.tune:$((n + 2)):1: warning: 1 tuning entry is for target 'sw26010', not 'host'; ignored"
contains err.txt "bad.tune:$((n + 3)):1: warning: 1 tuning entry was measured on 'another machine x64'"
contains err.txt "bad.tune:$((n + 4)):1: warning: not a tuning entry"
"$swnc" "$lenet" --tune=t.tune --emit=ir >clean.txt
cmp -s ir.txt clean.txt && pass || fail "the ignored entries changed the choice"

# Errors: a missing tuning file, tune without -o. A forced plan that cannot run a layer leaves
# it explicit, with a warning naming the first such layer and counting the others.
expect_error "missing tuning file" "cannot read tuning file 'none.tune'" "$swnc" "$lenet" --tune=none.tune
"$swnc" tune "$lenet" 2>err.txt; [ $? -eq 2 ] && pass || fail "tune without -o"
"$swnc" "$root/examples/alexnet.swn" --conv=implicit --emit=ir >forced.ir 2>err.txt && pass ||
  fail "a forced plan that cannot run every layer: $(cat err.txt)"
contains err.txt "layer 'conv2' (conv): --conv=implicit, but the implicit plan cannot compute it on target 'host' (256x96x27x27 -> 256x256x27x27): it has groups, and the host's implicit kernels have none; it runs explicit (and 2 other layers)"
grep -q "conv2 = conv(.* plan forward=explicit wgrad=explicit dgrad=explicit" forced.ir &&
  grep -q "conv3 = conv(.* plan forward=implicit" forced.ir && pass ||
  fail "--conv=implicit: conv2 explicit, conv3 implicit: $(grep ' = conv(' forced.ir)"
"$swnc" "$lenet" --conv=sideways 2>err.txt; [ $? -eq 2 ] && pass || fail "bad --conv"

# A transform timed 10 times its inverse was disturbed: the slower is measured again, and said.
tkey=$(grep '^transform host .* to_rcnb ' t.tune | tail -1 | cut -d' ' -f3)
grep -v "^transform host $tkey to_bnrc \|^transform host $tkey to_rcnb " t.tune >inv.tune
echo "transform host $tkey to_rcnb - 1 2026-01-01T00:00:00Z $machine" >>inv.tune
"$swnc" tune --repeat=1 "$lenet" -o inv.tune 2>err.txt && pass || { fail "tune beside a disturbed inverse"; cat err.txt; }
grep -q "swnc tune: .* transform $tkey to_rcnb took 1000.000 ms, over 10 times its inverse's .* ms; measured again: " err.txt &&
  pass || fail "no word of the disturbed transform: $(tail -3 err.txt)"
again=$(grep "^transform host $tkey to_rcnb " inv.tune | tail -1 | cut -d' ' -f6)
awk "BEGIN { exit !($again < 1) }" && pass || fail "the transform measured again is still $again s"
finish
