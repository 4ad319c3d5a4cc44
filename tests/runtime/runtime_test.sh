#!/bin/sh
# A generated program's behaviour: determinism, exact resume, checkpoint checks, data-file
# validation and option errors. Usage: runtime_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"

"$swnc" "$root/examples/lenet.swn" -o lenet || { echo "FAIL: cannot build lenet"; exit 1; }
"$swnc" "$root/examples/cifar10_quick.swn" -o cifar || { echo "FAIL: cannot build cifar10_quick"; exit 1; }
small="--train-size 1024 --test-size 200 --threads 1 --display 1 --quiet"

# Determinism: one thread and a seed give identical losses.
./lenet $small --iterations 20 --log a.json >/dev/null && ./lenet $small --iterations 20 --log b.json >/dev/null
if [ -n "$(losses a.json)" ] && [ "$(losses a.json)" = "$(losses b.json)" ]; then pass; else fail "two runs differ"; fi
./lenet $small --iterations 20 --seed 2 --log c.json >/dev/null
[ "$(losses a.json)" != "$(losses c.json)" ] && pass || fail "the seed changes nothing"

# Resume in the middle of the second epoch (16 iterations per epoch) continues exactly.
./lenet $small --iterations 40 --log full.json >/dev/null
./lenet $small --iterations 24 --checkpoint mid.ckpt >/dev/null
./lenet $small --iterations 40 --resume mid.ckpt --log resumed.json >/dev/null
if [ "$(losses full.json | tail -16)" = "$(losses resumed.json)" ] && [ "$(losses resumed.json | wc -l)" -eq 16 ]; then
  pass
else
  fail "resumed losses differ from the uninterrupted run"
  paste full.json resumed.json | tail -3
fi

# Adam's two moments, gradient accumulation (8 iterations of 2 x 64 images per epoch) and
# clipping resume exactly too; a checkpoint of one optimizer's state does not resume another.
"$swnc" "$root/examples/lenet.swn" -D train.optimizer=adamw -D train.lr=0.001 -D train.weight_decay=0.01 \
  -D train.iter_size=2 -D train.clip_gradients=1 -o lenet_adamw || fail "cannot build lenet with adamw"
./lenet_adamw $small --iterations 20 --log adam_full.json >/dev/null
./lenet_adamw $small --iterations 12 --checkpoint adam_mid.ckpt >/dev/null
./lenet_adamw $small --iterations 20 --resume adam_mid.ckpt --log adam_resumed.json >/dev/null
[ "$(losses adam_full.json | tail -8)" = "$(losses adam_resumed.json)" ] && [ "$(losses adam_resumed.json | wc -l)" -eq 8 ] &&
  [ "$(losses adam_full.json)" != "$(losses full.json | head -20)" ] && pass ||
  fail "adamw's resumed losses differ from the uninterrupted run"
expect_error "adam checkpoint, sgd program" "holds the state of an optimizer with two moments (adam, adamw); this program's optimizer has momentum" \
  ./lenet $small --resume adam_mid.ckpt --iterations 30
expect_error "sgd checkpoint, adam program" "holds the state of an optimizer with momentum (sgd, lars, easgd)" \
  ./lenet_adamw $small --resume mid.ckpt --iterations 30
./lenet_adamw $small --iterations 1 --init-weights mid.ckpt >/dev/null && pass || fail "--init-weights across optimizers"
# A version 1 checkpoint (one momentum pool, a reserved word) still resumes.
/usr/bin/python3 -c "
import struct, sys; sys.path.insert(0, '$root/tools'); import swnc_checkpoint as ck
data = bytearray(open('mid.ckpt', 'rb').read())
assert struct.unpack('<II', data[8:16]) == (2, 1)
data[8:16] = struct.pack('<II', 1, 0)
data[-8:] = struct.pack('<Q', ck.fnv1a(bytes(data[:-8])))
open('v1.ckpt', 'wb').write(data)" || fail "cannot write a version 1 checkpoint"
./lenet $small --iterations 40 --resume v1.ckpt --log v1.json >/dev/null
[ "$(losses v1.json)" = "$(losses resumed.json)" ] && pass || fail "a version 1 checkpoint does not resume"

# Synthetic images may not carry labels the loss cannot take.
"$swnc" "$root/tests/runtime/torch/every_layer.swn" -D data.source=synthetic -o every10 ||
  fail "cannot build every_layer on synthetic data"
expect_error "synthetic classes" "synthetic images of 10 classes (data.classes), but the network's loss has 5: compile with -D data.classes=5" \
  ./every10 --iterations 1

# Checkpoints of another network, damaged ones, and --init-weights.
expect_error "foreign checkpoint" "is a checkpoint of network 'lenet'" ./cifar --resume mid.ckpt --iterations 1
cp mid.ckpt bad.ckpt && printf '\377' | dd of=bad.ckpt bs=1 seek=4000 conv=notrunc 2>/dev/null
expect_error "damaged checkpoint" "is damaged" ./lenet $small --resume bad.ckpt
head -c 100 mid.ckpt > short.ckpt
expect_error "truncated checkpoint" "truncated" ./lenet $small --resume short.ckpt
expect_error "not a checkpoint" "is not a swnc checkpoint" ./lenet $small --resume "$root/examples/lenet.swn"
./lenet $small --eval-only --init-weights mid.ckpt > eval.txt && grep -q "test: loss" eval.txt && pass || fail "--eval-only"

# --lr overrides the compiled base rate: the same losses as a program compiled with it.
"$swnc" "$root/examples/lenet.swn" -D train.lr=0.03 -o lenet_lr || fail "cannot build lenet at lr 0.03"
./lenet $small --iterations 6 --lr 0.03 --log lr_run.json >/dev/null && ./lenet_lr $small --iterations 6 --log lr_built.json >/dev/null
[ -n "$(losses lr_run.json)" ] && [ "$(losses lr_run.json)" = "$(losses lr_built.json)" ] && [ "$(losses lr_run.json)" != "$(losses a.json | head -6)" ] &&
  pass || fail "--lr 0.03 differs from train.lr = 0.03"
expect_error "--lr bad" "--lr needs a positive number, but got '0'" ./lenet $small --lr 0

# Fine-tuning: LeNet with a narrower ip1 takes the other layers from the old checkpoint by name
# (their values exactly), reports ip1's and ip2's weights as another shape; --strict refuses.
sed 's/ip1   = fc(pool2, outputs=500/ip1   = fc(pool2, outputs=300/' "$root/examples/lenet.swn" >lenet_ft.swn
"$swnc" lenet_ft.swn -o lenet_ft || fail "cannot build the changed lenet"
./lenet_ft --train-size 1024 --test-size 200 --threads 1 --epochs 0 --init-weights mid.ckpt --checkpoint ft.ckpt >ft.txt &&
  grep -q "init-weights: 5 of 8 tensors from mid.ckpt (network 'lenet'); skipped, another shape: ip1.weight (300x800 here, 500x800 in the checkpoint), ip1.bias (300 here, 500 in the checkpoint), ip2.weight (10x300 here, 10x500 in the checkpoint)" ft.txt &&
  pass || fail "fine-tuning report: $(cat ft.txt)"
PYTHONPATH="$root/tools" /usr/bin/python3 -c "
import numpy as np, swnc_checkpoint as ck
old, new = ck.load('mid.ckpt'), ck.load('ft.ckpt')
for k in ['conv1.weight', 'conv1.bias', 'conv2.weight', 'conv2.bias', 'ip2.bias']:
    assert np.array_equal(old.params[k], new.params[k]), k
assert new.params['ip1.weight'].shape == (300, 800) and np.abs(new.params['ip1.weight']).max() > 0" &&
  pass || fail "fine-tuning: the loaded tensors differ from the checkpoint's"
expect_error "--strict" "mid.ckpt: error: holds 'ip1.weight' as 500x800; the network's is 300x800 (--strict: load all or none)" \
  ./lenet_ft $small --iterations 1 --init-weights mid.ckpt --strict
expect_error "--strict alone" "--strict says how --init-weights loads" ./lenet $small --iterations 1 --strict
./lenet $small --iterations 1 --init-weights mid.ckpt --strict && pass || fail "--strict on the same network"

# --infer (its scores against PyTorch's: torch_crosscheck): real bad arrays are refused.
/usr/bin/python3 -c "
import numpy as np
np.save('images.npy', np.zeros((5, 1, 28, 28), np.float32))
np.save('wide.npy', np.zeros((5, 1, 28, 27), np.float32))
np.save('doubles.npy', np.zeros((5, 1, 28, 28)))
np.save('fortran.npy', np.asfortranarray(np.zeros((5, 1, 28, 28), np.float32)))
np.save('empty.npy', np.zeros((0, 1, 28, 28), np.float32))"
./lenet --infer images.npy --output scores.npy --init-weights mid.ckpt &&
  /usr/bin/python3 -c "import numpy as np; s = np.load('scores.npy'); assert s.shape == (5, 10) and s.dtype == np.float32" &&
  pass || fail "--infer on lenet"
expect_error "infer wrong shape" "wide.npy: error: is a 5 x 1 x 28 x 27 array; network 'lenet' takes N x 1 x 28 x 28 images" \
  ./lenet --infer wide.npy --output s.npy --init-weights mid.ckpt
expect_error "infer doubles" "holds '<f8' values; --infer reads float32" ./lenet --infer doubles.npy --output s.npy --init-weights mid.ckpt
expect_error "infer fortran order" "is in Fortran order" ./lenet --infer fortran.npy --output s.npy --init-weights mid.ckpt
expect_error "infer no images" "is a 0 x 1 x 28 x 28 array" ./lenet --infer empty.npy --output s.npy --init-weights mid.ckpt
head -c 300 images.npy > cut.npy
expect_error "infer truncated" "cut.npy: error: is truncated: its shape needs 3920 floats" ./lenet --infer cut.npy --output s.npy --init-weights mid.ckpt
expect_error "infer not npy" "not a .npy file" ./lenet --infer mid.ckpt --output s.npy --init-weights mid.ckpt
expect_error "infer no output" "--infer FILE.npy needs --output FILE.npy" ./lenet --infer images.npy --init-weights mid.ckpt
expect_error "infer no weights" "--infer runs trained weights" ./lenet --infer images.npy --output s.npy
[ ! -e s.npy ] && pass || fail "a refused --infer left s.npy"

# Evaluation runs forward alone on its own memory plan: batch norm's running statistics,
# dropout off, residual adds; its result is the same whatever the evaluation batch, and the
# automatic batch (test_batch 0) is the largest that fits in a training batch's memory.
"$swnc" "$root/tests/lib/nets/small_resnet.swn" -o resnet || fail "cannot build small_resnet"
./resnet --iterations 8 --threads 1 --quiet --checkpoint resnet.ckpt >/dev/null
for tb in 1 7 64 auto; do
  ./resnet --eval-only --init-weights resnet.ckpt --threads 1 $([ $tb = auto ] || echo --test-batch $tb) | grep "^test:"
done > evals.txt
[ "$(wc -l < evals.txt)" -eq 4 ] && [ "$(uniq evals.txt | wc -l)" -eq 1 ] && pass || fail "evaluation depends on the test batch: $(cat evals.txt)"
auto=$("$swnc" --stats "$root/tests/lib/nets/small_resnet.swn" | sed -n 's/.*(test batch \([0-9]*\): as many images as fit.*/\1/p')
./resnet --help | grep -q -- "--test-batch N .*(default $auto: as many as fit in a training batch's memory)" && [ "$auto" -gt 16 ] &&
  pass || fail "the automatic test batch: --stats says '$auto', --help says '$(./resnet --help | grep -- --test-batch)'"

# Data files are validated with messages that name the file and the problem.
fm=/usr/share/datasets/fashion-mnist
expect_error "missing file" "cannot open" ./lenet --train nosuch.gz,$fm/train-labels-idx1-ubyte.gz --iterations 1
expect_error "not IDX" "is not an IDX file" ./lenet --train "$root/README.md,$fm/train-labels-idx1-ubyte.gz" --iterations 1
expect_error "images vs labels" "holds 10000 labels, but" ./lenet --train $fm/train-images-idx3-ubyte.gz,$fm/t10k-labels-idx1-ubyte.gz --iterations 1
gzip -dc $fm/t10k-images-idx3-ubyte.gz | head -c 100000 > truncated-images
expect_error "truncated IDX" "truncated" ./lenet --train truncated-images,$fm/t10k-labels-idx1-ubyte.gz --iterations 1
# truncated-images holds 127 whole images: --train-size reads only those it keeps.
./lenet --train truncated-images,$fm/t10k-labels-idx1-ubyte.gz --train-size 100 --test-size 10 \
  --iterations 1 --quiet >/dev/null 2>&1 && pass || fail "the first 100 images of a truncated IDX file"
expect_error "truncated IDX within --train-size" "truncated" ./lenet --train truncated-images,$fm/t10k-labels-idx1-ubyte.gz \
  --train-size 200 --iterations 1
gzip -dc $fm/t10k-labels-idx1-ubyte.gz > labels-raw && printf '\001\002' >> labels-raw
expect_error "trailing bytes" "has bytes after the data" ./lenet --train $fm/t10k-images-idx3-ubyte.gz,labels-raw --iterations 1
python3 -c "import sys; sys.stdout.buffer.write(bytes([0,0,8,1,0,0,0,2,3,11]))" > badlabels
python3 -c "import sys; sys.stdout.buffer.write(bytes([0,0,8,3,0,0,0,2,0,0,0,28,0,0,0,28]) + bytes(2*784))" > twoimages
expect_error "label range" "label 11 of image 1 is out of range: the network has 10 classes" ./lenet --train twoimages,badlabels --iterations 1
head -c 3073 /dev/zero > one.bin
expect_error "one file for idx" "are two files, images and labels" ./lenet --train one.bin --iterations 1
"$swnc" -D data.source=cifar "$root/examples/lenet.swn" -o lenet_cifar 2>/dev/null
expect_error "cifar images into lenet" "the image is 32x32 with 3 channels, but the network's input is 1x28x28" ./lenet_cifar --train one.bin --test one.bin --iterations 1
head -c 3000 /dev/zero > partial.bin
expect_error "files for synthetic data" "was compiled for synthetic data" ./cifar --train partial.bin --iterations 1
"$swnc" -D data.source=cifar "$root/examples/cifar10_quick.swn" -o cifar_files
expect_error "partial cifar record" "not a whole number of 3073-byte CIFAR-10 records" ./cifar_files --train partial.bin --test one.bin --iterations 1

# Options.
expect_error "bad number" "--epochs needs an integer from 0 to 9007199254740992, but got 'many'" ./lenet --epochs many
expect_error "unknown option" "unknown option '--frobnicate'" ./lenet --frobnicate
expect_error "resume and init" "exclude each other" ./lenet --resume a --init-weights b
./lenet --help | grep -q "usage: lenet" && pass || fail "--help"

# Synthetic data trains: the loss of cifar10_quick falls (means of the first and last 10 of 60
# iterations). At the example's rate, 0.001 with momentum 0.9, a run on 2000 synthetic images
# sometimes jumps and stays near chance whatever the arithmetic: a fifth of it trains calmly.
"$swnc" -D train.lr=0.0002 "$root/examples/cifar10_quick.swn" -o cifar_calm
./cifar_calm --iterations 60 --threads 2 --display 1 --train-size 2000 --log syn.json >/dev/null
means=$(losses syn.json | awk '{ l[NR] = $1 } END { for (i = 1; i <= 10; i++) { f += l[i]; e += l[NR - 10 + i] }; print f / 10, e / 10 }')
awk -v m="$means" 'BEGIN { split(m, x, " "); exit !(x[2] < x[1] - 0.05) }' && pass ||
  fail "synthetic loss did not fall (means of the first and last 10 iterations: $means)"

finish
