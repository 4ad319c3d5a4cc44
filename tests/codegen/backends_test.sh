#!/bin/sh
# The two backends agree: for lenet, cifar10_quick and a small ResNet, the executable built from
# C, the one built by LLVM, and `swnc run` (ORC JIT) print bit-identical losses for 20
# iterations with one thread and a seed. Every example's LLVM IR passes opt -verify. Error
# cases of the LLVM paths. Usage: backends_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
args="--iterations $iterations --threads 1 --display 1 --train-size 640 --test-size 64 --quiet"

# `swnc run` under the sanitizers: fast unwinding (the slow unwinder, which the MPI leak
# suppressions need, deadlocks on libgcc's lock while LLVM registers the JIT's EH frames), so
# no leak check: what MPI keeps would show up unattributed. Every other swnc run checks leaks.
jit() { LSAN_OPTIONS= ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$swnc" run "$@"; }

for net in "$root/examples/lenet.swn" "$root/examples/cifar10_quick.swn" "$root/tests/lib/nets/small_resnet.swn"; do
  name=$(basename "$net" .swn)
  "$swnc" "$net" -o "$name-c" && "$swnc" "$net" --backend=llvm -o "$name-llvm" || { fail "$name: build"; continue; }
  ./"$name-c" $args --log "$name-c.json" >/dev/null
  ./"$name-llvm" $args --log "$name-llvm.json" >/dev/null
  jit "$net" -- $args --log "$name-jit.json" >/dev/null
  n=$(losses "$name-c.json" | wc -l)
  if [ "$n" -eq "$iterations" ] && [ "$(losses "$name-c.json")" = "$(losses "$name-llvm.json")" ]; then pass; else
    fail "$name: LLVM executable's losses differ from C's ($n lines)"; fi
  if [ "$(losses "$name-c.json")" = "$(losses "$name-jit.json")" ]; then pass; else fail "$name: swnc run's losses differ"; fi
done

# A concat of N inputs (70 and 1000: more than any fixed array of arguments would hold) builds
# and trains through both backends with the same losses; its inputs are N activations of one
# convolution, so backward runs the concat's N gradients and adds them up. Built unoptimised:
# what is tested is the calls' arguments, and optimising functions of thousands of calls is
# most of this test's time (1000 inputs: cc -O2 35 s, LLVM -O2 19 s; at -O0 2 s each).
wide_concat() { # N
  printf 'train {\n  batch = 4\n  lr = 0.01\n  seed = 1\n}\ndata {\n  source = synthetic\n  classes = 3\n}\n'
  printf 'network wide%s {\n  data = input(shape=[1, 4, 4])\n  label = label()\n' "$1"
  printf '  base = conv(data, outputs=1, kernel=1)\n'
  i=0; while [ $i -lt "$1" ]; do printf '  r%d = relu(base)\n' $i; i=$((i + 1)); done
  printf '  cat = concat('; i=0; while [ $i -lt "$1" ]; do printf '%sr%d' "$([ $i -gt 0 ] && echo ', ')" $i; i=$((i + 1)); done
  printf ')\n  out = fc(cat, outputs=3)\n  loss = softmax_loss(out, label)\n}\n'
}
for n in 70 1000; do
  wide_concat $n > wide$n.swn
  CFLAGS=-O0 "$swnc" wide$n.swn -o wide$n-c && "$swnc" wide$n.swn --backend=llvm -O0 -o wide$n-llvm ||
    { fail "concat of $n: build"; continue; }
  ./wide$n-c --iterations 3 --threads 1 --display 1 --train-size 16 --test-size 4 --quiet --log wide$n-c.json >/dev/null
  ./wide$n-llvm --iterations 3 --threads 1 --display 1 --train-size 16 --test-size 4 --quiet --log wide$n-llvm.json >/dev/null
  if [ "$(losses wide$n-c.json | wc -l)" -eq 3 ] && [ "$(losses wide$n-c.json)" = "$(losses wide$n-llvm.json)" ]; then pass
  else fail "concat of $n: the backends' losses differ or are missing"; fi
done

if command -v opt-14 >/dev/null; then
  for net in "$root"/examples/*.swn; do
    "$swnc" --emit=llvm -o x.ll "$net" && opt-14 -verify -disable-output x.ll && pass || fail "opt -verify $(basename "$net")"
  done
fi
"$swnc" --emit=bc -o lenet.bc "$root/examples/lenet.swn" && [ "$(head -c 2 lenet.bc)" = "BC" ] && pass || fail "--emit=bc"
"$swnc" --emit=obj -o lenet.o "$root/examples/lenet.swn" && file lenet.o 2>/dev/null | grep -q "ELF" && pass || { [ -s lenet.o ] && pass || fail "--emit=obj"; }
"$swnc" --emit=asm -O3 "$root/examples/lenet.swn" | grep -q "swn_conv_forward" && pass || fail "--emit=asm -O3"
"$swnc" --emit=obj --triple=aarch64-linux-gnu -o arm.o "$root/examples/lenet.swn" && pass || fail "--triple=aarch64"

expect_error "unknown triple" "unknown target triple 'frobnitz-unknown-linux'" "$swnc" --emit=obj --triple=frobnitz-unknown-linux -o x.o "$root/examples/lenet.swn"
expect_error "unwritable output" "cannot write object '/nonexistent/dir/x.o'" "$swnc" --emit=obj -o /nonexistent/dir/x.o "$root/examples/lenet.swn"
expect_error "runtime not found" "cannot find the swnc runtime" env SWNC_RUNTIME_DIR=/nonexistent "$swnc" run "$root/examples/lenet.swn" -- --iterations 1
mkdir -p fake/include fake/lib && cp "$(dirname "$swnc")/../swnc-runtime/include/"* fake/include/ && touch fake/lib/libswnc_rt.a fake/lib/libswnc_host.a
expect_error "runtime library unloadable" "cannot load the runtime library" "$swnc" run --runtime-dir=fake "$root/examples/lenet.swn" -- --iterations 1
jit "$root/examples/lenet.swn" -- --frobnicate >out.txt 2>err.txt; [ $? -eq 1 ] && grep -q "unknown option '--frobnicate'" err.txt && pass || fail "program options through run"

finish
