#!/bin/sh
# Packed image data end to end, on real image files made here (Fashion-MNIST upscaled to 64x64,
# saved as PNG and JPEG) and on the photographs python3-skimage ships: packing from a class tree
# and from a list file, pixels and JPEG storage, resizing, info and verify, pixel equality with
# the sources, training that learns, determinism over loader threads, ranks and resuming, and
# every bad input named.
#   data_test.sh SWNC ROOT BUILD
swnc=$1 root=$2 build=$3
. "$root/tests/lib/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
data=$build/tools/swnc-data
py=/usr/bin/python3
check=$root/tests/runtime/data/check_pack.py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpiexec=$(command -v mpiexec || command -v mpirun)

# expect_status WHAT STATUS TEXT COMMAND...: that exit status and TEXT on standard error.
expect_status() {
  what=$1 want=$2 text=$3; shift 3
  "$@" >out.txt 2>err.txt; status=$?
  if [ "$status" -ne "$want" ]; then fail "$what: exit $status, expected $want"; cat err.txt; return; fi
  if grep -qF -- "$text" err.txt; then pass; else fail "$what: '$text' not in: $(cat err.txt)"; fi
}
ok() { what=$1; shift; if "$@" >out.txt 2>err.txt; then pass; else fail "$what"; cat out.txt err.txt; fi; }

$py "$root/tests/runtime/data/make_images.py" train 150 || exit 1
$py "$root/tests/runtime/data/make_images.py" test 30 --test || exit 1

"$data" --version | grep -q "^swnc-data (swnc 0\." && pass || fail "swnc-data --version"

# ---- packing, info, verify, and the records against their sources
ok "pack a class tree" "$data" pack train tr --shard-size 400 --threads 2
grep -q "^images 1500$" tr/dataset.txt && grep -q "^shards 4$" tr/dataset.txt && pass || fail "manifest: $(cat tr/dataset.txt)"
grep -q "^0 0_tshirt$" tr/classes.txt && grep -q "^9 9_boot$" tr/classes.txt && pass || fail "classes.txt"
ok "info" "$data" info tr
grep -q "1500 images of 10 classes in 4 shards" out.txt && grep -q "every image 64x64" out.txt && pass || fail "info: $(cat out.txt)"
ok "verify" "$data" verify tr
ok "pixels equal the sources (PNG exactly)" $py "$check" pixels tr train
ok "pack the test set as JPEG" "$data" pack test te --store jpeg --quiet
ok "JPEG inputs kept byte for byte" $py "$check" jpeg te test
ok "verify a JPEG pack" "$data" verify te
ok "pack from a list file" "$data" pack test.list tl --quiet
[ "$(grep '^images' tl/dataset.txt)" = "images 300" ] && [ ! -e tl/classes.txt ] && pass || fail "list pack"
# one thread or two, the same bytes (a thread writes whole shards)
ok "pack with one thread" "$data" pack train tr1 --shard-size 400 --threads 1 --quiet
for f in shard-00000.swd shard-00003.swd mean.bin dataset.txt; do cmp -s tr/$f tr1/$f && pass || fail "threads change $f"; done

# resizing: the shorter side, or exactly W x H
ok "resize to 48 on the short side" "$data" pack test rs --resize 48 --quiet
ok "resized shapes" $py "$check" shapes rs 48 48
ok "resize to 40x30" "$data" pack test rw --resize 40x30 --store jpeg --quiet
ok "resized shapes" $py "$check" shapes rw 30 40

# photographs of several sizes, one class per kind, to 72 on the short side
photos=/usr/lib/python3/dist-packages/skimage/data
if [ -d "$photos" ]; then
  mkdir -p ph/animal ph/object ph/person
  cp "$photos/chelsea.png" "$photos/cat.png" ph/animal/ 2>/dev/null
  cp "$photos/coffee.png" "$photos/rocket.jpg" "$photos/motorcycle_left.png" ph/object/ 2>/dev/null
  cp "$photos/astronaut.png" "$photos/retina.jpg" ph/person/ 2>/dev/null
  ok "pack photographs" "$data" pack ph php --resize 72 --quiet
  grep -q "^shape varied$" php/dataset.txt && [ ! -e php/mean.bin ] && pass || fail "varied shapes: $(cat php/dataset.txt)"
  ok "verify photographs" "$data" verify php
  ok "photograph shapes" $py "$check" shapes php 0 0
  grep -q "72x" out.txt && pass || fail "photo shapes: $(cat out.txt)"
else
  echo "note: no python3-skimage photographs; that part is skipped"
fi

# ---- training on it
"$swnc" "$root/tests/lib/nets/packed_small.swn" -D "data.mean_file=\"$tmp/tr/mean.bin\"" -o net || exit 1
"$swnc" "$root/tests/lib/nets/packed_small.swn" -D "data.mean=[70, 60, 60]" -o net_values || exit 1
ok "train on packed data" ./net --train tr --test te --epochs 4 --log train.json
acc=$(sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' out.txt)
awk "BEGIN { exit !(${acc:-0} >= 70) }" && pass || fail "packed_small learnt only ${acc}% (want >= 70)"
echo "packed_small on Fashion-MNIST images: ${acc}% test accuracy after 4 epochs"
# the photographs through the same loader (crops of 56 out of 72 x N)
[ -d php ] && { ok "train on photographs" ./net_values --train php --test php --iterations 2 --batch 4; }
expect_status "a mean image of another size" 1 "the mean image is 3x64x64 (channels x height x width); it must have the input's 3 channels and the images' size or the input's (56x56)" \
  ./net --train rs --iterations 1

# determinism: crops and flips hash (seed, epoch, image), not threads, ranks or resumption
ok "one loader thread" ./net --train tr --iterations 12 --loader-threads 1 --checkpoint a.ckpt --quiet
ok "three loader threads" ./net --train tr --iterations 12 --loader-threads 3 --checkpoint b.ckpt --quiet
cmp -s a.ckpt b.ckpt && pass || fail "loader threads change the weights"
ok "first half" ./net --train tr --iterations 6 --checkpoint h.ckpt --quiet
ok "resumed" ./net --train tr --iterations 12 --resume h.ckpt --checkpoint r.ckpt --quiet
cmp -s a.ckpt r.ckpt && pass || fail "a resumed run's crops differ"
if [ -n "$mpiexec" ]; then
  ok "one rank, batch 32" ./net --train tr --test te --iterations 8 --epochs 1 --log one.json --display 1 --threads 1
  ok "two ranks, batch 16" timeout 300 "$mpiexec" --oversubscribe -np 2 ./net --train tr --test te --iterations 8 --batch 16 --log two.json --display 1 --threads 1
  same_losses "two ranks see the crops of one" one.json two.json 8 1e-4
fi

# ---- bad input
"$swnc" "$root/examples/lenet.swn" -D data.source=packed -o lenet_packed || exit 1
expect_status "a network of other channels" 1 "holds RGB images (3 channels), but the network's input has 1 channel" \
  ./lenet_packed --train tr --test tr --iterations 1
expect_status "images smaller than the crop" 1 "record 0: the image is 48x48 with 3 channels, but the network's input is 3x56x56" \
  ./net_values --train rs --iterations 1 --no-shuffle --loader-threads 1
expect_status "not a pack" 1 "dataset.txt: cannot open" ./net --train train --iterations 1
mkdir bad && cp -r train/0_tshirt train/1_trouser bad/ && mkdir bad/2_empty
expect_status "an empty class folder" 1 "bad/2_empty: error: the class folder holds no images" "$data" pack bad badp
rmdir bad/2_empty
head -c $(($(wc -c <train/1_trouser/00021.jpg) / 2)) train/1_trouser/00021.jpg >bad/1_trouser/00021.jpg
expect_status "a truncated JPEG" 1 "bad/1_trouser/00021.jpg: error: corrupt JPEG" "$data" pack bad badp --quiet
[ ! -e badp/dataset.txt ] && pass || fail "a failed pack left a manifest"
echo "not an image" >bad/0_tshirt/00999.png
expect_status "a garbage file" 1 "bad/0_tshirt/00999.png: error: neither JPEG nor PNG" "$data" pack bad badq --quiet
ok "--skip-bad" "$data" pack bad badq --skip-bad --quiet
grep -q "^skipped 2$" badq/dataset.txt && pass || fail "skipped count: $(cat badq/dataset.txt)"
grep -q "skipped bad/0_tshirt/00999.png" err.txt && pass || fail "skipped file not named: $(cat err.txt)"
ok "verify after skipping" "$data" verify badq
printf 'train/0_tshirt/missing.png 0\n' >missing.list
expect_status "a missing file" 1 "train/0_tshirt/missing.png: error: cannot open: No such file or directory" "$data" pack missing.list mp --quiet
printf 'train/0_tshirt/00001.jpg zero\n' >badlabel.list
expect_status "a bad list line" 1 "badlabel.list:1: error: expected 'path label'" "$data" pack badlabel.list ml --quiet
mkdir stuff && touch stuff/x
expect_status "an output directory of other things" 1 "exists and is not a swnc-data pack in progress" "$data" pack test stuff --quiet
expect_status "another plan in the directory" 1 "holds a pack of other inputs or options" "$data" pack test te --quiet

# a record whose bytes changed, and a truncated shard: verify names them, training stops on them
cp -r tr cr && set -- $($py "$check" offset cr 405)
printf 'X' | dd of=cr/shard-00001.swd bs=1 seek=$(($1 + 100)) conv=notrunc 2>/dev/null
expect_status "verify a corrupt record" 1 "1 problem" "$data" verify cr
grep -q "shard-00001.swd: record 5 is corrupt (checksum mismatch)" out.txt && pass || fail "corrupt record not named: $(cat out.txt)"
expect_status "train on a corrupt record" 1 "shard-00001.swd: record 5 is corrupt (checksum mismatch)" \
  ./net --train cr --iterations 60 --no-shuffle --quiet
cp -r tr tt && truncate -s 100000 tt/shard-00002.swd
expect_status "verify a truncated shard" 1 "problems (listed above)" "$data" verify tt
grep -q "shard-00002.swd: is truncated" out.txt && pass || fail "truncated shard not named: $(cat out.txt)"
expect_status "train on a truncated shard" 1 "shard-00002.swd: is truncated" ./net --train tt --iterations 1
# labels at or above the manifest's class count: refused as verify refuses them
cp -r tr lc && sed -i 's/^classes 10$/classes 3/' lc/dataset.txt
expect_status "labels beyond the pack's classes" 1 "is out of range: its manifest says 3 classes" \
  ./net --train lc --iterations 1

# an interrupted pack resumes and ends with the bytes of an uninterrupted one
SWNC_DATA_TEST_STOP_AFTER=700 "$data" pack train ip --shard-size 400 --threads 1 --quiet >/dev/null 2>&1
[ $? -eq 3 ] && [ ! -e ip/dataset.txt ] && pass || fail "the interrupted pack did not stop as the test asked"
ok "resume the pack" "$data" pack train ip --shard-size 400 --threads 2
grep -q "resuming: 1 of 4 shards are complete" out.txt && pass || fail "no resumption: $(cat out.txt)"
for f in shard-00000.swd shard-00001.swd shard-00002.swd shard-00003.swd mean.bin dataset.txt; do
  cmp -s tr/$f ip/$f && pass || fail "resumed pack differs in $f"
done
ls ip | grep -q part && fail "a .part file remains" || pass
ok "pack again: nothing to do" "$data" pack train ip --shard-size 400 --threads 2
grep -q "already packed" out.txt && pass || fail "second pack: $(cat out.txt)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
