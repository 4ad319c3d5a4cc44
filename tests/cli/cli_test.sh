#!/bin/sh
# The command line: help, version, pass listing, IR dumps, overrides, output files, usage
# errors. Usage: cli_test.sh SWNC PROJECT_DIR
swnc=$1 root=$2
lenet=$root/examples/lenet.swn
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
expect_status() { # want, description, command...
  want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" -eq "$want" ]; then pass; else fail "$what: exit $got, expected $want"; cat "$tmp/err"; fi
}
contains() { # file, text, description
  if grep -qF -- "$2" "$1"; then pass; else fail "$3: '$2' not in output"; fi
}

expect_status 0 "--help" "$swnc" --help
contains "$tmp/out" "usage: swnc [options] FILE.swn" "--help"
expect_status 0 "--version" "$swnc" --version
contains "$tmp/out" "swnc 0." "--version"
expect_status 0 "--passes" "$swnc" --passes
for p in elaborate infer-shapes verify training-steps memplan bucket-gradients; do contains "$tmp/out" "$p" "--passes"; done

expect_status 2 "no input" "$swnc"
contains "$tmp/err" "no input file" "no input"
expect_status 2 "unknown option" "$swnc" --frobnicate "$lenet"
contains "$tmp/err" "unknown option '--frobnicate'" "unknown option"
expect_status 2 "bad --emit" "$swnc" --emit=pdf "$lenet"
expect_status 2 "bad --print-after" "$swnc" --print-after=nosuch "$lenet"
expect_status 1 "missing file" "$swnc" "$tmp/none.swn"
contains "$tmp/err" "cannot open" "missing file"

# The golden IR of LeNet after all passes (AVX2's model, as golden() below says why).
expect_status 0 "--emit=ir" env SWN_ISA=avx2 "$swnc" --emit=ir "$lenet"
if diff -u "$root/tests/cli/golden/lenet.ir" "$tmp/out" >"$tmp/diff"; then pass; else fail "golden lenet.ir"; cat "$tmp/diff"; fi

# Golden IR of vgg16 (16 MB buckets) and resnet50 (default), with the cost model's plans and
# with every convolution implicit: plans, transforms, schedule, memory plan, buckets. The host
# model's rates depend on the kernels' instruction set: the goldens are AVX2's (every x86-64
# machine CI runs on has it; plain C's rates are the same).
golden() { # NAME OPTIONS...
  name=$1; shift
  SWN_ISA=avx2 "$swnc" --emit=ir "$@" >"$tmp/$name.ir" &&
    diff -u "$root/tests/cli/golden/$name.ir" "$tmp/$name.ir" >"$tmp/diff" && pass || { fail "golden $name.ir"; head -20 "$tmp/diff"; }
}
golden vgg16 --fusion-threshold=16M "$root/examples/vgg16.swn"
golden vgg16_implicit --conv=implicit --fusion-threshold=16M "$root/examples/vgg16.swn"
golden resnet50 "$root/examples/resnet50.swn"
golden resnet50_implicit --conv=implicit "$root/examples/resnet50.swn"
expect_status 2 "bad --fusion-threshold" "$swnc" --fusion-threshold=lots "$lenet"
contains "$tmp/err" "--fusion-threshold takes bytes" "bad --fusion-threshold"

# --print-after-all: one dump per pass, on stderr; stdout stays clean.
expect_status 0 "--print-after-all" "$swnc" --print-after-all "$lenet"
n=$(grep -c "^; IR after pass" "$tmp/err")
passes=$("$swnc" --passes | wc -l)
[ "$n" -eq "$passes" ] && [ "$n" -ge 12 ] && pass || fail "--print-after-all printed $n dumps for $passes passes"
[ -s "$tmp/out" ] && fail "--print-after-all wrote to stdout" || pass
expect_status 0 "--print-after=infer-shapes" "$swnc" --print-after=infer-shapes "$lenet"
contains "$tmp/err" "; IR after pass 'infer-shapes'" "--print-after"
contains "$tmp/err" "conv1 = conv(data) outputs=20 kernel=5 stride=1 pad=0 bias_lr_mult=2 -> f32 64x20x24x24 bnrc" "--print-after"
if grep -q "^steps" "$tmp/err"; then fail "steps before their pass"; else pass; fi
expect_status 0 "--print-after=elaborate" "$swnc" --print-after=elaborate "$lenet"
contains "$tmp/err" "conv1 = conv(data) outputs=20 kernel=5 stride=1 pad=0 bias_lr_mult=2 -> ?" "shapes unknown after elaborate"

# -D overrides reach shapes and settings; the documented lookup order.
expect_status 0 "-D batch" "$swnc" -D batch=128 -D train.lr=0.05 --emit=ir "$lenet"
contains "$tmp/out" "-> f32 128x20x24x24 bnrc" "-D batch=128"
contains "$tmp/out" "lr=0.05" "-D train.lr"
expect_status 1 "-D unknown" "$swnc" -D nosuch=1 "$lenet"
contains "$tmp/err" "<command line>:1:1: error: -D nosuch: no constant or setting named 'nosuch'" "-D unknown"
expect_status 1 "-D typo" "$swnc" -D bacth=1 "$lenet"
contains "$tmp/err" "-D bacth: no constant or setting named 'bacth'; did you mean 'batch'?" "-D typo"
expect_status 1 "-D bad value" "$swnc" -D batch=0 "$lenet"
contains "$tmp/err" "'batch' must be at least 1, but is 0" "-D batch=0"

# Outputs: -o writes a file; dot output; --stats.
expect_status 0 "-o" "$swnc" --emit=dot -o "$tmp/l.dot" "$lenet"
contains "$tmp/l.dot" "digraph \"lenet\"" "--emit=dot -o"
contains "$tmp/l.dot" "g2 -> g3 [label=\"64x20x24x24\"" "--emit=dot edges"
expect_status 1 "unwritable -o" "$swnc" --emit=ir -o "$tmp/no/such/dir/x.ir" "$lenet"
contains "$tmp/err" "cannot write" "unwritable -o"
expect_status 0 "--stats" "$swnc" --stats "$lenet"
contains "$tmp/out" "conv2                        conv          64x50x8x8                  25,050        205,004,800      1,048,576" "--stats row" # 50 channels in 4 blocks
contains "$tmp/out" "forward FLOPs        295,455,360 per batch" "--stats total"
# The data sets a run holds, from the files' sizes (a gzip file's trailer), a size limit, or
# nothing to count with.
contains "$tmp/out" "data sets            52.60 MiB" "--stats: Fashion-MNIST's 70000 images"
expect_status 0 "--stats, train_size" "$swnc" --stats -D data.train_size=1000 "$lenet"
contains "$tmp/out" "data sets            8.27 MiB" "--stats: 1000 + 10000 images"
{ printf '\000\000\010\003\000\000\007\320\000\000\000\034\000\000\000\034'; head -c 1568000 /dev/zero; } >"$tmp/images.idx"
expect_status 0 "--stats, plain IDX" "$swnc" --stats -D "data.train=[\"$tmp/images.idx\", \"x\"]" \
  -D "data.test=[\"$tmp/images.idx\", \"x\"]" "$lenet"
contains "$tmp/out" "data sets            3.01 MiB" "--stats: 2 x 2000 images of an uncompressed file"
expect_status 0 "--stats, no files" "$swnc" --stats -D 'data.train=["/no/such.gz", "x"]' "$lenet"
contains "$tmp/out" "data sets            not counted: their files cannot be read from here" "--stats: missing files"
# A test set smaller than the test batch: evaluation's plan holds only its images (as the
# program's arena does).
# A network of blocks: instances one node each, each block's body once as a cluster; layers
# say their kernel, stride, padding, groups; ResNet-50 fits a page, not a 16,000-pixel strip.
expect_status 0 "--emit=dot resnet50" "$swnc" --emit=dot -o "$tmp/r.dot" "$root/examples/resnet50.swn"
contains "$tmp/r.dot" 'label="res2a\nbottleneck\n32x256x56x56"' "an instance as one node"
contains "$tmp/r.dot" 'label="res2a: bottleneck"' "the bottleneck's body as a cluster"
contains "$tmp/r.dot" 'label="res2a/b: conv_bn"' "a nested instance as a cluster"
contains "$tmp/r.dot" 'conv 7x7 /2 pad 3, 64 outputs' "kernel, stride and padding"
"$swnc" --emit=dot "$root/examples/resnet50.swn" | cmp -s - "$tmp/r.dot" && pass || fail "--emit=dot differs between runs"
if command -v dot >/dev/null; then
  dot -Tpng "$tmp/r.dot" -o "$tmp/r.png" && height=$(/usr/bin/python3 -c 'import struct, sys
print(struct.unpack(">II", open(sys.argv[1], "rb").read(24)[16:24])[1])' "$tmp/r.png")
  [ "${height:-99999}" -lt 4000 ] && pass || fail "resnet50's picture is $height pixels tall"
fi
expect_status 0 "--stats, small test set" "$swnc" --stats -D data.test_size=8 "$lenet"
contains "$tmp/out" "(test batch 8: the test set's images)" "--stats: a test set of 8"
contains "$tmp/out" "for 8 images" "--stats: the evaluation plan of 8 images"

# Building programs: C output, a missing runtime, a failing C compiler.
expect_status 0 "--emit=c" "$swnc" --emit=c -o "$tmp/lenet.c" "$lenet"
contains "$tmp/lenet.c" "int main(int argc, char **argv) { return swn_main(&network, argc, argv); }" "--emit=c"
# the plan word: blocked layout, direct for all three, explicit, direct or winograd2 may be
# timed (no conversion between (R,C,N,B) and the blocked layout)
contains "$tmp/lenet.c" "swn_conv_forward(&L2, B, s, 2, 110783050, ACT(" "--emit=c kernel calls"
expect_status 1 "runtime not found" env SWNC_RUNTIME_DIR="$tmp/nowhere" "$swnc" -o "$tmp/x" "$lenet"
contains "$tmp/err" "cannot find the swnc runtime for target 'host' (looked in: $tmp/nowhere)" "runtime not found"
expect_status 1 "no such compiler" env CC=/nonexistent/cc "$swnc" -o "$tmp/x" "$lenet"
contains "$tmp/err" "cannot run the C compiler '/nonexistent/cc'" "no such compiler"
contains "$tmp/err" "the generated C is kept in" "C kept for inspection"
expect_status 1 "compiler fails" env CC=false "$swnc" -o "$tmp/x" "$lenet"
contains "$tmp/err" "the C compiler 'false' failed (exit status 1)" "compiler fails"
expect_status 2 "unknown target" "$swnc" --target=cray "$lenet"
expect_status 0 "build" "$swnc" -o "$tmp/lenet" "$lenet"
[ -x "$tmp/lenet" ] && pass || fail "no executable"
# as cc: neither -o nor --emit builds a.out; a report option alone builds nothing
(cd "$tmp" && rm -f a.out && "$swnc" "$lenet" && [ -x a.out ]) && pass || fail "no a.out"
(cd "$tmp" && rm -f a.out && "$swnc" --stats "$lenet" >/dev/null && [ ! -e a.out ]) && pass || fail "--stats built a.out"
"$tmp/lenet" --version >"$tmp/out" && contains "$tmp/out" "lenet: network 'lenet' from $lenet, built by swnc 0." "program --version"

# Errors: at most --error-limit (20) printed, each excerpt a window around its caret.
/usr/bin/python3 -c 'print("network n {\n  x = input(shape=[1, 8, 8])\n  y = " + "$" * 40000 + "\n}")' >"$tmp/bad.swn"
expect_status 1 "many errors" "$swnc" --emit=ir "$tmp/bad.swn"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 20 ] && [ "$(wc -c <"$tmp/err")" -lt 4000 ] && pass ||
  fail "many errors: $(grep -c ': error: ' "$tmp/err") errors in $(wc -c <"$tmp/err") bytes"
contains "$tmp/err" "swnc: note: stopping after 20 errors (--error-limit=N for more, 0 for all)" "the error limit"
expect_status 1 "--error-limit=3" "$swnc" --error-limit=3 --emit=ir "$tmp/bad.swn"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 3 ] && pass || fail "--error-limit=3 printed $(grep -c ': error: ' "$tmp/err")"
expect_status 1 "--error-limit=0" "$swnc" --error-limit=0 --emit=ir "$tmp/bad.swn"
[ "$(grep -c ': error: ' "$tmp/err")" -gt 1000 ] && pass || fail "--error-limit=0 printed $(grep -c ': error: ' "$tmp/err")"
grep "^  y = \\$" "$tmp/err" | awk 'length > 130 { long++ } END { exit long > 0 }' && pass || fail "an excerpt longer than its window"
expect_status 2 "bad --error-limit" "$swnc" --error-limit=-1 "$lenet"

# The man page names every option of --help; it is well-formed troff where groff is here.
for o in $("$swnc" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$root/docs/man/swnc.1" || fail "the man page lacks $o"
done
pass
! command -v groff >/dev/null || groff -man -ww -z "$root/docs/man/swnc.1" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && pass ||
  fail "groff on swnc.1: $(cat "$tmp/err")"

# Bash completion: options from --help, their values, subcommands, network files.
complete() { # WORDS...: what completing the last word offers
  bash -c '. "$1"; shift; PATH=$(dirname "$1"):$PATH; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _swnc; echo "${COMPREPLY[*]}"' \
    sh "$root/tools/completion/swnc.bash" "$@"
}
[ "$(complete "$swnc" --error-l)" = "--error-limit=" ] && pass || fail "completing --error-l: $(complete "$swnc" --error-l)"
[ "$(complete "$swnc" --emit=d)" = "--emit=dot" ] && pass || fail "completing --emit=d: $(complete "$swnc" --emit=d)"
[ "$(complete "$swnc" --conv=winograd)" = "--conv=winograd2 --conv=winograd4" ] && pass ||
  fail "completing --conv=winograd: $(complete "$swnc" --conv=winograd)"
[ "$(complete "$swnc" import)" = "import-caffe" ] && pass || fail "completing import: $(complete "$swnc" import)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
