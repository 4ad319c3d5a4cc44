#!/bin/sh
# --emit=c for sw26010: a directory with the network's C, the runtime's and kernel set's sources
# and a Makefile for the Sunway toolchain. It cannot run here, so: the Makefile's chip build
# (make -n) compiles MPE code with sw5cc -host, CPE code with sw5cc -slave -msimd and links with
# mpicc -hybrid; the CPE sources include only the toolchain's CPE headers (and the arithmetic
# headers runtime/ shares with every target) and call only the athread interface and libc/libm; `make emulate` builds the same sources against the emulator,
# and the program trains with the losses of the one swnc builds. Bad -o is refused.
# Usage: sw26010_emit_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"

"$swnc" "$root/examples/vgg16.swn" --target=sw26010 --emit=c -o vgg16-out && [ -f vgg16-out/vgg16.c ] &&
  grep -q "^NET = vgg16" vgg16-out/Makefile && [ -f vgg16-out/swnc/targets/sw26010/kernels/gemm_cpe.c ] && pass ||
  fail "vgg16 --emit=c -o DIR"

"$swnc" "$root/examples/lenet.swn" --target=sw26010 --emit=c -o out || fail "lenet --emit=c"
kernels=out/swnc/targets/sw26010/kernels
make -s -n -C out > plan.txt 2>&1 || fail "make -n: $(head -3 plan.txt)"
cpe_count=$(ls $kernels/*_cpe.c | wc -l)
[ "$cpe_count" -ge 3 ] && [ "$(grep -c '^sw5cc -slave -msimd .*_cpe\.c' plan.txt)" -eq "$cpe_count" ] &&
  [ "$(grep -c '^sw5cc -host .*-c .*_cpe\.c' plan.txt)" -eq 0 ] && grep -q '^sw5cc -host .* -c lenet\.c' plan.txt &&
  grep -q '^sw5cc -host .*-c swnc/runtime/train\.c' plan.txt && grep -q '^mpicc -hybrid -o lenet ' plan.txt && pass ||
  fail "the chip build's commands: $(cat plan.txt)"
grep -q "^#.*bsub " out/Makefile && pass || fail "no job launch line in the Makefile"

# CPE sources: the toolchain's CPE headers, the kernel set's own CPE headers, standard C, and
# the arithmetic all targets share (runtime/lanes.h and pool_window.h, which include nothing,
# and runtime/rng.h, lrn_power.h, activations.h and softmax_loss.h, which include standard C only).
bad=$(cat $kernels/*_cpe.[ch] $kernels/cpe.h $kernels/args.h | grep '^#include' |
  grep -Ev '<(slave|dma|simd|stdbool|stddef|stdint|string|math|float)\.h>|"(args|cpe|[a-z_]+_cpe|lanes|rng|lrn_power|activations|pool_window|softmax_loss)\.h"')
for header in lanes pool_window; do
  grep -q '^#include' "$root/runtime/$header.h" && fail "runtime/$header.h includes a header" || pass
done
grep '^#include' "$root/runtime/rng.h" | grep -Evq '<(stdbool|stdint)\.h>' &&
  fail "runtime/rng.h includes more than standard C" || pass
for header in lrn_power activations softmax_loss; do
  grep '^#include' "$root/runtime/$header.h" | grep -Evq '<(math|float)\.h>' &&
    fail "runtime/$header.h includes more than standard C" || pass
done
[ -z "$bad" ] && pass || fail "CPE sources include more than the athread interface: $bad"

make -s -C out emulate > make.txt 2>&1 && [ -x out/lenet-emu ] && pass || fail "make emulate: $(tail -5 make.txt)"
# What the CPE objects call: functions the athread headers declare, and libc/libm.
interface=$(grep -E '^[a-z_][a-z0-9_ ]*[ *][a-z_][a-z0-9_]*\(' out/swnc/targets/sw26010/emu/athread.h |
  sed 's/(.*//; s/.*[ *]//' | grep -v '^__attribute__$' | sort -u)
libc="memcpy memset memmove expf exp logf log powf pow sqrtf sqrt tanhf tanh fabsf fabs floorf ceilf fmaxf fminf"
outside=$(for o in $(find out/build/emu -name '*_cpe.o'); do nm -u "$o"; done | awk '{print $2}' | sort -u |
  while read -r f; do echo "$interface $libc" | tr ' ' '\n' | grep -qx "$f" || echo "$f"; done)
[ -n "$interface" ] && [ -z "$outside" ] && pass || fail "CPE code calls outside the athread interface: $outside"

args="--iterations $iterations --threads 1 --display 1 --train-size 640 --test-size 32 --quiet"
"$swnc" "$root/examples/lenet.swn" --target=sw26010 -o lenet-sw || fail "lenet build"
./lenet-sw $args --batch 16 --log built.json >/dev/null
out/lenet-emu $args --batch 16 --log emitted.json >/dev/null || fail "the emitted program's run"
same_losses "sw26010: emitted tree built against the emulator vs swnc's build" built.json emitted.json

expect_error "--emit=c without -o" "writes a directory of sources and a Makefile: name it with -o DIR" \
  "$swnc" "$root/examples/lenet.swn" --target=sw26010 --emit=c
: > a-file
expect_error "--emit=c -o FILE" "cannot write into 'a-file': it is not a directory" \
  "$swnc" "$root/examples/lenet.swn" --target=sw26010 --emit=c -o a-file
"$swnc" "$root/examples/lenet.swn" --emit=c -o host.c && grep -q "swn_main" host.c && pass ||
  fail "host --emit=c still writes one C file"
finish
