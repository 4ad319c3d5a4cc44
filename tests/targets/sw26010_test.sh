#!/bin/sh
# The sw26010 target end to end, on the CPE-cluster emulator: lenet and cifar10_quick train
# with the same losses as the host target (relative 1e-4 over 20 iterations), from C and from
# LLVM; --profile prints the estimated time per layer; `swnc run` loads the target's kernels;
# two ranks (the allreduce's sums on the CPEs) match one process of twice the batch; the
# chip's 4 core groups (the default) on uneven shares and with dropout match one group; the
# emulator's checking mode finds no direct main-memory access in the kernel set; lenet with
# implicit convolutions matches the host's. The host builds keep the explicit plan, which the
# sw26010 target shares (the direct plan sums in another order). swnc tune, --autotune and
# --comm-profile measure the chip's estimated time, not the emulator's; --estimate agrees with
# the emulated estimate.
# Usage: sw26010_test.sh SWNC PROJECT_DIR WORKDIR MPIEXEC
swnc=$1 root=$2 work=$3 mpiexec=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
args="--iterations $iterations --threads 1 --display 1 --train-size 640 --test-size 32 --quiet"

for net in lenet cifar10_quick; do
  batch=16
  [ $net = cifar10_quick ] && batch=8
  "$swnc" "$root/examples/$net.swn" --conv=explicit -o "$net-host" && "$swnc" "$root/examples/$net.swn" --target=sw26010 -o "$net-sw" ||
    { fail "$net: build"; continue; }
  ./"$net-host" $args --batch $batch --log "$net-host.json" >/dev/null
  ./"$net-sw" $args --batch $batch --log "$net-sw.json" >/dev/null || fail "$net: sw26010 run"
  same_losses "$net: sw26010 vs host" "$net-host.json" "$net-sw.json"
  # the reference plan set (below): its products single-buffered
  "$swnc" "$root/examples/$net.swn" --target=sw26010 --conv=swcaffe -o "$net-swcaffe" &&
    ./"$net-swcaffe" $args --batch $batch --log "$net-swcaffe.json" >/dev/null ||
    fail "$net: sw26010 --conv=swcaffe"
  same_losses "$net: sw26010 --conv=swcaffe vs host" "$net-host.json" "$net-swcaffe.json"
done

# AdamW (on the MPE) with clipping and two micro-batches an update, and the every_layer network's
# upsampling, softmax and mul (MPE fallbacks): the same losses as the host's
adam="-D train.optimizer=adamw -D train.lr=0.001 -D train.weight_decay=0.01 -D train.clip_gradients=1 -D train.iter_size=2"
"$swnc" "$root/examples/lenet.swn" --conv=explicit $adam -o lenet-adam-host &&
  "$swnc" "$root/examples/lenet.swn" --target=sw26010 $adam -o lenet-adam-sw || fail "lenet with adamw: build"
./lenet-adam-host $args --batch 16 --log adam-host.json >/dev/null
./lenet-adam-sw $args --batch 16 --log adam-sw.json >/dev/null || fail "lenet with adamw: sw26010 run"
same_losses "lenet with adamw, clipping and iter_size: sw26010 vs host" adam-host.json adam-sw.json
every="$root/tests/runtime/torch/every_layer.swn"
"$swnc" "$every" --conv=explicit -D data.source=synthetic -D data.classes=5 -o every-host &&
  "$swnc" "$every" --target=sw26010 -D data.source=synthetic -D data.classes=5 -o every-sw ||
  fail "every_layer: build"
./every-host $args --batch 8 --log every-host.json >/dev/null
# one core group: batch norm normalises each core group's share of the batch on its own
./every-sw $args --batch 8 --core-groups 1 --log every-sw.json >/dev/null || fail "every_layer: sw26010 run"
same_losses "every_layer (upsample, softmax, mul, ...): sw26010 vs host" every-host.json every-sw.json

# --conv=swcaffe: swCaffe's plans, implicit where it runs swDNN (alexnet_bn's conv3: forward with
# a multiple of 128 images per core group, backward with 64 or more), explicit elsewhere (conv2
# has groups), all single-buffered as swCaffe's kernels are; a plan set of sw26010 only.
chosen() {
  "$swnc" "$root/examples/alexnet_bn.swn" --target=sw26010 --conv=swcaffe --explain -D batch=$1 \
    -o /dev/null 2>&1 | awk -v layer="$2:" '$1 == layer { c = 1 } c && $1 == "chosen:" { print; exit }'
}
chosen 512 conv3 | grep -q "(forward implicit:single, wgrad implicit:single, dgrad implicit:single): the reference plan set" &&
  chosen 256 conv3 | grep -q "(forward explicit:single, wgrad implicit:single, dgrad implicit:single)" &&
  chosen 512 conv2 | grep -q "(forward explicit:single, wgrad explicit:single, dgrad explicit:single)" && pass ||
  fail "--conv=swcaffe plans: $(chosen 512 conv3) / $(chosen 256 conv3) / $(chosen 512 conv2)"
"$swnc" "$root/examples/lenet.swn" --conv=swcaffe -o lenet-swcaffe-host 2> swcaffe-host.txt
[ $? -eq 2 ] && grep -q "error: --conv=swcaffe is a plan set of --target=sw26010 only" swcaffe-host.txt &&
  [ ! -e lenet-swcaffe-host ] && pass || fail "--conv=swcaffe on the host: $(cat swcaffe-host.txt)"

"$swnc" "$root/examples/lenet.swn" --target=sw26010 --backend=llvm -o lenet-sw-llvm || fail "llvm build"
./lenet-sw-llvm $args --iterations 3 --batch 16 --log lenet-llvm.json >/dev/null
./lenet-sw $args --iterations 3 --batch 16 --log lenet-c.json >/dev/null
[ "$(losses lenet-llvm.json)" = "$(losses lenet-c.json)" ] && [ -n "$(losses lenet-c.json)" ] && pass ||
  fail "sw26010: LLVM executable's losses differ from C's"

./lenet-sw --iterations 2 --batch 16 --train-size 64 --test-size 16 --quiet --profile > profile.txt 2>&1
grep -q "^estimated time on the target.*core group 0 of 4, on 4 of the 16 images" profile.txt &&
  awk '$1 == "conv2" && $6 > 0 { found = 1 } END { exit !found }' profile.txt &&
  grep -Eq "^estimated: [0-9.]+ ms per iteration of 16 images on 4 core groups, [0-9.]+ images/s" profile.txt && pass ||
  fail "--profile estimate: $(cat profile.txt)"
"$swnc" "$root/examples/lenet.swn" -o lenet-host-p && ./lenet-host-p --iterations 1 --train-size 64 --test-size 16 \
  --quiet --profile > host-profile.txt 2>&1
grep -q "estimated" host-profile.txt && fail "the host target printed an estimate" || pass
# Both say what the kernels run on: the host's instruction set (SWN_ISA=c narrows it to plain
# C on any CPU), the emulated chip for sw26010.
SWN_ISA=c ./lenet-host-p --iterations 1 --train-size 64 --test-size 16 --quiet --profile 2>&1 |
  grep -q "^profile over 1 training iteration (ms per iteration), kernels: c$" && pass ||
  fail "host --profile does not name the instruction set"
grep -q "kernels: sw26010 CPE clusters, emulated" profile.txt && pass ||
  fail "sw26010 --profile does not name the kernels: $(head -5 profile.txt)"
SWN_ISA=c "$swnc" "$root/examples/lenet.swn" --explain | grep -q "^# kernels: c on this machine" &&
  pass || fail "host --explain does not name the instruction set"

LSAN_OPTIONS= ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$swnc" run --target=sw26010 "$root/examples/lenet.swn" -- $args --iterations 3 --batch 16 --log lenet-jit.json >/dev/null
[ "$(losses lenet-jit.json)" = "$(losses lenet-c.json)" ] && pass || fail "swnc run --target=sw26010"

# Checking mode: the kernel set touches main memory only by DMA (else the run stops), and
# guarding it changes nothing computed.
SWEMU_CHECK_MEMORY=1 ./lenet-sw $args --iterations 3 --batch 16 --log checked.json >/dev/null 2>check.txt &&
  [ "$(losses checked.json)" = "$(losses lenet-c.json)" ] && pass || fail "SWEMU_CHECK_MEMORY=1: $(cat check.txt)"

# Core groups: each worker's gradients weighted by its share (10 images: 3+3+2+2), and the
# dropout masks of each image as in one group.
./lenet-host $args --batch 10 --log uneven-host.json >/dev/null
./lenet-sw $args --batch 10 --log uneven-sw.json >/dev/null || fail "4 core groups on 10 images"
same_losses "sw26010: 4 core groups on 3+3+2+2 images vs host" uneven-host.json uneven-sw.json
./lenet-sw $args --batch 16 --core-groups 1 --log one-group.json >/dev/null
same_losses "sw26010: 1 core group vs host" lenet-host.json one-group.json
sed 's/relu1 = relu(ip1)/relu1 = relu(ip1)\n  drop1 = dropout(relu1, ratio=0.5)/; s/ip2   = fc(relu1/ip2   = fc(drop1/' \
  "$root/examples/lenet.swn" > lenet_dropout.swn
"$swnc" lenet_dropout.swn --target=sw26010 -o dropout-sw || fail "dropout build"
./dropout-sw $args --batch 16 --log dropout-4.json >/dev/null
./dropout-sw $args --batch 16 --core-groups 1 --log dropout-1.json >/dev/null
same_losses "sw26010: dropout on 4 core groups vs 1" dropout-1.json dropout-4.json
./lenet-sw --core-groups 5 2>err.txt; [ $? -ne 0 ] && grep -q "core-groups 5: this target has 4 core groups" err.txt &&
  pass || fail "--core-groups 5: $(cat err.txt)"

# The implicit plan end to end (filters reordered on the CPEs, (R,C,N,B) transforms and
# pooling): a product per pixel and tap is slow to emulate, so 3 iterations on one core group.
"$swnc" "$root/examples/lenet.swn" --conv=implicit -o implicit-host &&
  "$swnc" "$root/examples/lenet.swn" --target=sw26010 --conv=implicit -o implicit-sw || fail "implicit builds"
small="--iterations 3 --threads 1 --display 1 --train-size 64 --test-size 4 --quiet --batch 4"
./implicit-host $small --log implicit-host.json >/dev/null
./implicit-sw $small --core-groups 1 --log implicit-sw.json >/dev/null || fail "implicit run"
same_losses "sw26010: lenet with implicit convolutions vs host" implicit-host.json implicit-sw.json 3

one="--iterations $iterations --threads 1 --display 1 --train-size 640 --test-size 32 --quiet"
./lenet-sw $one --batch 16 --log one.json >/dev/null
timeout 300 "$mpiexec" -np 2 ./lenet-sw $one --batch 8 --log two.json >/dev/null 2>&1 || fail "mpirun -np 2"
same_losses "sw26010: 2 ranks vs 1" one.json two.json

# Tuning from the chip model: swnc tune, --autotune and --comm-profile measure the estimated
# chip time (the emulator's counters through the cost model), never the emulator's speed, so
# two runs agree to the last digit; a tuned convolution is the model's price for its kernels
# (--explain) within 10% (the price leaves out a launch's argument reads and the bias).
# The instrumented build (SWNC_TEST_INSTRUMENTED) runs each once and leaves agreement unchecked:
# it is not what the sanitizers check, and the pairs were a third of the test's time there.
runs="1 2"
[ -z "${SWNC_TEST_INSTRUMENTED:-}" ] || runs=1
agree() { [ "$runs" = 1 ] || "$@"; } # a check of two runs' agreement, where both ran
rm -f tune1.tune tune2.tune # swnc tune keeps what a file has: start from none
for run in $runs; do
  "$swnc" tune --target=sw26010 "$root/examples/lenet.swn" -o tune$run.tune 2>/dev/null ||
    fail "swnc tune --target=sw26010"
done
[ -s tune1.tune ] && agree [ "$(cut -d' ' -f1-6 tune1.tune)" = "$(cut -d' ' -f1-6 tune2.tune 2>/dev/null)" ] &&
  pass || fail "two sw26010 tunes measured differently"
tuned=$(awk '$3 ~ /c1x28x28/ && $4 == "forward" && $5 == "explicit" { print $6 * 1e3 }' tune1.tune)
model=$("$swnc" "$root/examples/lenet.swn" --target=sw26010 --explain -o /dev/null 2>&1 |
  awk '/^conv1:/ { c = 1 } c && $1 == "forward" { print $2; exit }')
awk -v t="$tuned" -v m="$model" 'BEGIN { exit !(t > 0 && m > 0 && t / m > 0.9 && t / m < 1.1) }' &&
  pass || fail "tuned conv1 forward $tuned ms against the model's $model ms"
tune_run="--iterations 5 --batch 8 --train-size 40 --test-size 8 --quiet --autotune"
for run in $runs; do
  ./lenet-sw $tune_run --comm-profile comm$run.txt > autotune$run.txt 2>&1 || fail "--autotune runs"
done
grep -q "^autotune: conv2 .* -> [a-z]* (estimated on the target)$" autotune1.txt &&
  agree [ "$(grep autotune autotune1.txt)" = "$(grep autotune autotune2.txt 2>/dev/null)" ] && pass ||
  fail "sw26010 --autotune: $(cat autotune1.txt autotune2.txt 2>/dev/null)"
grep -q "^forward 0\.0" comm1.txt && agree cmp -s comm1.txt comm2.txt && pass ||
  fail "sw26010 --comm-profile: $(cat comm1.txt comm2.txt 2>/dev/null)"

# --estimate prices from the model alone what the emulator's counters price (--profile):
# lenet's forward and backward within 10%; the host target has no model of its kernels' time.
"$swnc" "$root/examples/lenet.swn" --target=sw26010 --estimate -D batch=64 > estimate.txt &&
  grep -Eq "^iteration: [0-9.]+ ms, [0-9.]+ images/s" estimate.txt && pass || fail "--estimate: $(cat estimate.txt)"
./lenet-sw --iterations 3 --batch 64 --train-size 192 --test-size 16 --quiet --profile > profile64.txt 2>&1
est=$(awk '$1 == "total" { print $2, $3 }' estimate.txt)
emu=$(awk '/^estimated time on the target/ { e = 1 } e && $1 == "total" { print $2, $3; exit }' profile64.txt)
echo "$est $emu" | awk '{ exit !($1 > 0 && $3 > 0 && $1 / $3 > 0.9 && $1 / $3 < 1.1 && $2 / $4 > 0.9 && $2 / $4 < 1.1) }' &&
  pass || fail "--estimate's forward and backward ($est ms) against --profile's ($emu ms)"
"$swnc" "$root/examples/lenet.swn" --estimate > /dev/null 2>err.txt; [ $? -eq 1 ] &&
  grep -q "target 'host' has no model of its kernels' time" err.txt && pass || fail "host --estimate: $(cat err.txt)"

"$swnc" "$root/examples/lenet.swn" --target=sw26011 -o x 2>err.txt; [ $? -eq 2 ] && grep -q "unknown target .sw26011. (host, sw26010)" err.txt && pass || fail "unknown target"
finish
