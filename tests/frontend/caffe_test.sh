#!/bin/sh
# Caffe models in and out (docs/language.md, "Caffe models"):
#   caffe_test.sh SWNC ROOT project   the project's own prototxts: import, compile, train, weights
#                                     written by python3-protobuf, export round trips
#   caffe_test.sh SWNC ROOT shared    Caffe's real files in ROOT/../shared/caffe (exit 77, ctest's
#                                     skip, where that folder is absent)
#   caffe_test.sh SWNC ROOT shared_training   LeNet imported from them trains as the example
swnc=$1 root=$2 part=$3
. "$root/tests/lib/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
caffe=$root/tests/frontend/caffe
shared=$root/../shared/caffe
models=$caffe/caffemodel.py
proto=$caffe/caffe_subset.proto
[ -f "$shared/src/caffe/proto/caffe.proto" ] && proto=$shared/src/caffe/proto/caffe.proto

# params FILE [OPTIONS]: the parameter count --stats prints.
params() { "$swnc" "$@" --stats 2>/dev/null | sed -n 's/^parameters *\([0-9,]*\).*/\1/p'; }

# same WHAT A B: the two values are equal.
same() { if [ "$2" = "$3" ]; then pass; else fail "$1: '$2' is not '$3'"; fi; }

project() {
  # The import reads as the hand-made .swn would, and compiles to the same IR as the prototxt.
  "$swnc" import-caffe "$caffe/small_bn.prototxt" "$caffe/small_solver.prototxt" -o small.swn \
    2>err.txt && pass || { fail "import small_bn"; cat err.txt; }
  for line in "bn1      = batchnorm(conv1, momentum=0.9)" "steps = [4, 8]" "lr_policy = multistep" \
    "kernel=[3, 1], pad=[1, 0], groups=2" "test_interval = 6" "accuracy(fc, label, top=2)"; do
    grep -qF "$line" small.swn && pass || fail "small.swn lacks '$line'"
  done
  "$swnc" small.swn --emit=ir >from_swn.ir 2>/dev/null
  "$swnc" "$caffe/small_bn.prototxt" --solver "$caffe/small_solver.prototxt" --emit=ir >from_prototxt.ir
  cmp -s from_swn.ir from_prototxt.ir && pass || fail "the .swn and the prototxt compile differently"
  "$swnc" small.swn -o small && ./small --quiet --log small.json >/dev/null && pass || fail "train small"
  same "iterations evaluated at (test_interval 6)" "$(grep -c '"test"' small.json)" 2

  # An Adam solver (the string type and the old enum alike) with gradient accumulation and
  # clipping; and the values Caffe would misread or swnc cannot train.
  printf '%s\n' 'net: "small_bn.prototxt"' 'type: "Adam"' 'base_lr: 0.001' 'momentum: 0.8' \
    'momentum2: 0.99' 'delta: 1e-6' 'iter_size: 2' 'clip_gradients: 5' 'max_iter: 4' >adam.solver
  "$swnc" import-caffe "$caffe/small_bn.prototxt" adam.solver -o adam.swn 2>err.txt && pass ||
    { fail "import an Adam solver"; cat err.txt; }
  for line in "optimizer = adam" "beta1 = 0.8" "beta2 = 0.99" "epsilon = 1e-06" "iter_size = 2" \
    "clip_gradients = 5"; do
    grep -qF "$line" adam.swn && pass || fail "adam.swn lacks '$line'"
  done
  sed 's/^type: "Adam"/solver_type: ADAM/' adam.solver >adam_enum.solver
  "$swnc" import-caffe "$caffe/small_bn.prototxt" adam_enum.solver -o adam_enum.swn &&
    cmp -s adam.swn adam_enum.swn && pass || fail "solver_type: ADAM imports differently from type: \"Adam\""
  "$swnc" adam.swn -o adam && ./adam --quiet >/dev/null && pass || fail "train the Adam solver's network"
  sed 's/^iter_size: 2/iter_size: 0/' adam.solver >bad_iter.solver
  expect_error "iter_size 0" "bad_iter.solver:7:1: error: the solver: iter_size 0: at least 1 micro-batch an iteration" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" bad_iter.solver -o bad.swn
  sed 's/^clip_gradients: 5/clip_gradients: 0/' adam.solver >bad_clip.solver
  expect_error "clip_gradients 0" "bad_clip.solver:8:1: error: the solver: clip_gradients 0 would scale every gradient to zero" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" bad_clip.solver -o bad.swn
  sed 's/^type: "Adam"/type: "RMSProp"/' adam.solver >rms.solver
  expect_error "RMSProp" "rms.solver:2:1: error: the solver: type 'RMSProp' is not supported by swnc (SGD, Adam)" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" rms.solver -o bad.swn

  # Weights: a caffemodel written by the reference protobuf implementation, into a checkpoint.
  ./small --iterations 0 --epochs 0 --checkpoint init.ckpt --quiet >/dev/null
  layers=conv1:Convolution,bn1:BatchNorm,scale1:Scale=bn1,conv2:Convolution,fc:InnerProduct
  /usr/bin/python3 "$models" write "$proto" init.ckpt $layers m.caffemodel m.npz || fail "write m"
  "$swnc" import-caffe "$caffe/small_bn.prototxt" -o w.swn --weights m.caffemodel && pass ||
    fail "import --weights"
  /usr/bin/python3 "$models" check w.ckpt m.npz && pass || fail "the checkpoint's values"
  ./small --eval-only --init-weights w.ckpt --quiet >/dev/null && pass || fail "--init-weights w.ckpt"
  /usr/bin/python3 "$models" write "$proto" init.ckpt $layers bad.caffemodel bad.npz --wrong-shape
  expect_error "blob shape" "layer 'conv1' (Convolution): blob 0 is 9x3x3x3, but the network's conv1.weight is 8x3x3x3" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" -o bad.swn --weights bad.caffemodel
  head -c 3000 m.caffemodel >cut.caffemodel
  expect_error "truncated caffemodel" "cut.caffemodel: error: truncated" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" -o cut.swn --weights cut.caffemodel
  /usr/bin/python3 "$models" huge "$proto" huge.caffemodel
  expect_error "blob dims past 64 bits" "huge.caffemodel: error: malformed: the blob's dimensions (their product past 2^63)" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" -o h.swn --weights huge.caffemodel
  printf 'not a model' >text.caffemodel
  expect_error "not a caffemodel" "text.caffemodel: error:" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" -o t.swn --weights text.caffemodel
  expect_error "no such caffemodel" "none.caffemodel: error: cannot open" \
    "$swnc" import-caffe "$caffe/small_bn.prototxt" -o t.swn --weights none.caffemodel

  # Export, then import: the same network (parameters, FLOPs, layers); Caffe's parser reads it.
  for net in lenet cifar10_quick alexnet_bn googlenet resnet50; do
    "$swnc" export-caffe "$root/examples/$net.swn" -o $net.prototxt 2>err.txt || { fail "export $net"; cat err.txt; continue; }
    for what in "^parameters" "^forward FLOPs" "^layers"; do
      a=$("$swnc" "$root/examples/$net.swn" --stats 2>/dev/null | grep "$what")
      b=$("$swnc" $net.prototxt --stats 2>/dev/null | grep "$what")
      [ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "$net exported and imported: '$a' became '$b'"
    done
  done
  # swish and relu6 go out as Swish and Clip(0, 6) and come back; hardswish has no Caffe type.
  "$swnc" export-caffe "$caffe/activations.swn" -o activations.prototxt &&
    grep -q 'type: "Swish"' activations.prototxt && grep -q 'type: "Clip"' activations.prototxt &&
    grep -q 'min: 0' activations.prototxt && grep -q 'max: 6' activations.prototxt && pass ||
    fail "export of swish and relu6: $(cat activations.prototxt)"
  "$swnc" activations.prototxt --no-fuse --emit=ir >back.ir 2>err.txt && grep -q "s1 = swish(c1" back.ir &&
    grep -q "r1 = relu6(s1)" back.ir && pass || fail "import of Swish and Clip: $(cat err.txt)"
  # Dilation goes out as Caffe's repeated `dilation` (height, width) and comes back.
  sed 's/kernel=3, pad=1)/kernel=3, pad=[2, 3], dilation=[2, 3])/' "$caffe/activations.swn" >dilated.swn
  "$swnc" export-caffe dilated.swn -o dilated.prototxt 2>err.txt &&
    [ "$(grep -c 'dilation: [23]$' dilated.prototxt)" = 2 ] && pass ||
    fail "export of a dilated convolution: $(cat err.txt dilated.prototxt)"
  "$swnc" dilated.prototxt --emit=ir 2>err.txt | grep -q "pad=\[2, 3\] dilation=\[2, 3\] -> f32 64x4x8x8" &&
    pass || fail "import of a dilated convolution: $(cat err.txt)"
  # Kaiming He's ResNet-50 deploy prototxt's form: BatchNorm with use_global_stats becomes a
  # frozen batch norm (its running statistics in training too), 25,557,032 parameters; the
  # export writes use_global_stats back.
  /usr/bin/python3 "$caffe/resnet50_deploy.py" >resnet50_deploy.prototxt
  "$swnc" resnet50_deploy.prototxt --stats 2>err.txt | grep -q "^parameters *25,557,032 " &&
    [ "$("$swnc" resnet50_deploy.prototxt --emit=ir 2>/dev/null | grep -c ' = batchnorm(.* frozen=true')" = 53 ] &&
    pass || fail "ResNet-50 deploy prototxt: $(cat err.txt)"
  "$swnc" import-caffe resnet50_deploy.prototxt -o r50.swn 2>err.txt &&
    "$swnc" export-caffe r50.swn -o r50_back.prototxt 2>>err.txt &&
    [ "$(grep -c 'use_global_stats: true' r50_back.prototxt)" = 53 ] && pass ||
    fail "ResNet-50 deploy round trip: $(cat err.txt)"
  # A transposed convolution is Caffe's Deconvolution, both ways.
  sed 's/  s1    = swish(c1)/  u1    = deconv(c1, outputs=6, kernel=4, stride=2, pad=1, groups=2)\n  s1    = swish(u1)/' \
    "$caffe/activations.swn" >deconv.swn
  "$swnc" export-caffe deconv.swn -o deconv.prototxt 2>err.txt &&
    grep -q 'type: "Deconvolution"' deconv.prototxt && pass ||
    fail "export of a transposed convolution: $(cat err.txt deconv.prototxt)"
  "$swnc" deconv.prototxt --emit=ir 2>err.txt |
    grep -q "u1 = deconv(c1[.a-z_]*) outputs=6 kernel=4 stride=2 pad=1 groups=2 -> f32 64x6x16x16" &&
    pass || fail "import of a Deconvolution: $(cat err.txt)"
  sed 's/relu6(s1)/hardswish(s1)/' "$caffe/activations.swn" >hardswish.swn
  "$swnc" export-caffe hardswish.swn -o hardswish.prototxt 2>err.txt
  same "export of hardswish: exit status" $? 1
  grep -q "layer 'r1' (hardswish) has no Caffe equivalent" err.txt && pass ||
    fail "export of hardswish: $(cat err.txt)"
  [ "$proto" = "$caffe/caffe_subset.proto" ] ||
    { /usr/bin/python3 "$models" parse "$proto" *.prototxt && pass || fail "protobuf cannot parse the exports"; }

  # The legacy V1 `layers` form, with num/channels/height/width dims (the exported LeNet).
  "$swnc" lenet.prototxt -o lenet && ./lenet --iterations 0 --epochs 0 --checkpoint l0.ckpt \
    --train-size 64 --test-size 64 --quiet >/dev/null
  /usr/bin/python3 "$models" write "$proto" l0.ckpt conv1:Convolution,conv2:Convolution,ip1:InnerProduct,ip2:InnerProduct \
    v1.caffemodel v1.npz --v1
  "$swnc" import-caffe lenet.prototxt --weights v1.caffemodel --checkpoint v1.ckpt >/dev/null && pass ||
    fail "import V1 weights"
  /usr/bin/python3 "$models" check v1.ckpt v1.npz && pass || fail "the V1 checkpoint's values"

  "$swnc" import-caffe "$root/examples/lenet.swn" >/dev/null 2>err.txt
  same "import-caffe of a .swn: exit status" $? 2
  grep -q "reads a Caffe network, NET.prototxt" err.txt && pass || fail "import-caffe of a .swn: $(cat err.txt)"
}

shared() {
  [ -d "$shared" ] || { echo "skipped: no Caffe files at $shared (shared/ beside the checkout)"; exit 77; }
  same "lenet_train_test" "$(params "$shared/examples/mnist/lenet_train_test.prototxt" --input-shape 1,28,28)" 431,080
  same "lenet deploy" "$(params "$shared/examples/mnist/lenet.prototxt")" 431,080
  same "cifar10_quick" "$(params "$shared/examples/cifar10/cifar10_quick_train_test.prototxt" --input-shape 3,32,32)" 145,578
  for f in models/bvlc_alexnet/train_val.prototxt models/bvlc_alexnet/deploy.prototxt models/bvlc_reference_caffenet/train_val.prototxt; do
    same "$f" "$(params "$shared/$f")" 60,965,224
  done
  # GoogLeNet with its two auxiliary heads: the example's 6,998,552 plus, per head, a 1x1 conv
  # to 128 (512 or 528 channels in: 65,664 or 67,712), fc 4x4x128 -> 1024 (2,098,176) and
  # fc 1024 -> 1000 (1,025,000): 6,998,552 + 3,188,840 + 3,190,888.
  same "googlenet" "$(params "$shared/models/bvlc_googlenet/train_val.prototxt")" 13,378,280
  expect_error "cifar10_full" "norm_region WITHIN_CHANNEL is not supported" \
    "$swnc" "$shared/examples/cifar10/cifar10_full_train_test.prototxt" --input-shape 3,32,32
  for s in examples/mnist/lenet_solver.prototxt examples/cifar10/cifar10_quick_solver.prototxt \
    examples/cifar10/cifar10_full_solver.prototxt models/bvlc_alexnet/solver.prototxt models/bvlc_googlenet/solver.prototxt; do
    "$swnc" import-caffe "$shared/examples/mnist/lenet_train_test.prototxt" "$shared/$s" --input-shape 1,28,28 \
      -o s.swn 2>err.txt && pass || { fail "solver $s"; cat err.txt; }
  done
}

# Imported LeNet with its solver trains Fashion-MNIST as examples/lenet.swn does (1000 iterations
# each: a test of its own, which the instrumented suite leaves out as it does the main job's).
shared_training() {
  [ -d "$shared" ] || { echo "skipped: no Caffe files at $shared (shared/ beside the checkout)"; exit 77; }
  fm=/usr/share/datasets/fashion-mnist
  data="-D data.source=idx -D data.train=[\"$fm/train-images-idx3-ubyte.gz\",\"$fm/train-labels-idx1-ubyte.gz\"]"
  data="$data -D data.test=[\"$fm/t10k-images-idx3-ubyte.gz\",\"$fm/t10k-labels-idx1-ubyte.gz\"]"
  "$swnc" import-caffe "$shared/examples/mnist/lenet_train_test.prototxt" "$shared/examples/mnist/lenet_solver.prototxt" \
    --input-shape 1,28,28 -o lenet_caffe.swn 2>/dev/null
  # shellcheck disable=SC2086
  "$swnc" lenet_caffe.swn $data -D iterations=1000 -D test_interval=0 -D eval_interval=1 -o imported &&
    "$swnc" "$root/examples/lenet.swn" -D iterations=1000 -o example && pass || fail "build the two LeNets"
  ./imported --quiet --log a.json >/dev/null && ./example --quiet --log b.json >/dev/null
  acc_a=$(sed -n 's/.*"test".*"accuracy":\([0-9.]*\).*/\1/p' a.json | tail -1)
  acc_b=$(sed -n 's/.*"test".*"accuracy":\([0-9.]*\).*/\1/p' b.json | tail -1)
  echo "test accuracy after 1000 iterations: imported $acc_a, examples/lenet.swn $acc_b"
  same "imported LeNet's accuracy" "$acc_a" "$acc_b"
  awk "BEGIN { exit !($acc_a > 0.8) }" && pass || fail "imported LeNet learns: accuracy $acc_a"
}

$part
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
