#!/bin/sh
# A generated program under hostile inputs and events: forged checkpoint headers, counts near
# 2^63, full disks and unwritable outputs, signals during training, temporary files left by
# killed saves, options that mean nothing alone, and ranks that disagree.
#   hostile_test.sh SWNC PROJECT_DIR WORKDIR MPIEXEC [sanitized]
swnc=$1 root=$2 work=$3 mpiexec=$4 sanitized=$5
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf ./*

"$swnc" "$root/examples/lenet.swn" -o lenet || { echo "FAIL: cannot build lenet"; exit 1; }
small="--train-size 1024 --test-size 200 --threads 1 --quiet"
./lenet $small --iterations 3 --checkpoint base.ckpt >/dev/null || fail "a first checkpoint"

# ---- tools/swnc_checkpoint.py: Debian's python3 (numpy) whatever python3 comes first, help, errors
ck="$root/tools/swnc_checkpoint.py"
"$ck" --help | grep -q "^usage: swnc_checkpoint.py \[-h\] checkpoint" && pass || fail "swnc_checkpoint.py --help"
"$ck" base.ckpt | grep -q "^network lenet (hash [0-9a-f]*), iteration 3, seed 1$" && pass || fail "swnc_checkpoint.py base.ckpt"
/usr/bin/python3 -c 'import runpy, sys; sys.modules["numpy"] = None; runpy.run_path(sys.argv[1], run_name="__main__")' \
  "$ck" base.ckpt >out.txt 2>err.txt
[ $? -eq 1 ] && grep -q "^swnc_checkpoint.py: needs numpy (apt-get install python3-numpy)" err.txt && pass ||
  fail "swnc_checkpoint.py without numpy: $(cat err.txt)"
"$ck" nosuch.ckpt >out.txt 2>err.txt
[ $? -eq 1 ] && grep -q "^swnc_checkpoint.py: error: .*nosuch.ckpt" err.txt && pass || fail "swnc_checkpoint.py nosuch.ckpt: $(cat err.txt)"

# ---- checkpoint headers with a valid checksum but an impossible iteration counter
cat > forge.py <<'PY'
import struct, sys  # forge.py IN ITERATION OUT: the header's iteration set, the checksum redone
data = bytearray(open(sys.argv[1], 'rb').read())
data[88:96] = struct.pack('<Q', int(sys.argv[2]))
h = 14695981039346656037
for byte in data[:-8]:
    h = ((h ^ byte) * 1099511628211) & (2**64 - 1)
data[-8:] = struct.pack('<Q', h)
open(sys.argv[3], 'wb').write(data)
PY
for n in 9223372036854775807 9223372036854775808 18446744073709551615; do
  /usr/bin/python3 forge.py base.ckpt $n forged.ckpt
  expect_error "iteration $n in a checkpoint" "says $n iterations were trained, more than a run can count" \
    ./lenet $small --resume forged.ckpt
done
/usr/bin/python3 forge.py base.ckpt 3 same.ckpt
cmp -s base.ckpt same.ckpt && pass || fail "forge.py does not rewrite a checkpoint as the program writes it"

# ---- counts near 2^63: refused where they are read, or where they multiply
expect_error "--epochs 2^63-1" "--epochs needs an integer from 0 to 9007199254740992" ./lenet $small --epochs 9223372036854775807
expect_error "--iterations 2^64" "--iterations needs an integer from 0" ./lenet $small --iterations 18446744073709551616
expect_error "--epochs 2^53" "more images than a run can count" ./lenet $small --epochs 9007199254740992
expect_error "--iterations 2^53" "more images than a run can count" ./lenet $small --iterations 9007199254740992
expect_error "--batch 2^31" "--batch needs an integer from 1 to 16777216" ./lenet $small --batch 2147483648

# ---- options that mean nothing alone, and a batch no epoch can fill
expect_error "--checkpoint-every alone" "--checkpoint-every 5 needs --checkpoint FILE" ./lenet $small --checkpoint-every 5
expect_error "--eval-only without weights" "--eval-only evaluates trained weights" ./lenet $small --eval-only
expect_error "a batch larger than the training set" "--batch 64 is more images than the 10 of the training set" \
  ./lenet --train-size 10 --iterations 1

# ---- threads the system cannot start: an error naming them, not OpenMP's abort
if [ -z "$sanitized" ]; then # the sanitizers need more address space than the limit leaves
  (ulimit -v 3000000; exec ./lenet $small --iterations 1 --threads 1000) >out.txt 2>err.txt
  [ $? -eq 1 ] && grep -q -- "--threads 1000: this process can start only" err.txt && pass ||
    fail "--threads 1000 under a memory limit: $(cat err.txt)"
fi

# ---- OpenMP threads wait passively (a shared machine), unless the user says otherwise
OMP_DISPLAY_ENV=true ./lenet $small --iterations 1 2>&1 | grep -q "OMP_WAIT_POLICY = 'PASSIVE'" && pass ||
  fail "the default wait policy is not passive"
OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=true ./lenet $small --iterations 1 2>&1 | grep -q "OMP_WAIT_POLICY = 'ACTIVE'" &&
  pass || fail "OMP_WAIT_POLICY=active is not kept"

# ---- --profile beside two busy processes says that its times include waiting for them
(while :; do :; done) & busy1=$!
(while :; do :; done) & busy2=$!
./lenet $small --iterations 10 --profile >profile.txt 2>&1
kill $busy1 $busy2
grep -q "^note: other processes kept [0-9]*% of this machine's [0-9]* cores busy" profile.txt && pass ||
  fail "--profile on a busy machine: $(tail -2 profile.txt)"

# ---- every write checked: a full device for the log and for standard output
expect_error "--log on a full device" "/dev/full: error: cannot write the log: No space left on device" \
  ./lenet $small --iterations 2 --display 1 --log /dev/full
./lenet $small --iterations 1 >/dev/full 2>err.txt
[ $? -eq 1 ] && grep -q "cannot write standard output: No space left" err.txt && pass ||
  fail "standard output on a full device: $(cat err.txt)"

# ---- failed saves leave no temporary file; a killed save's is removed by the next save
mkdir dir.ckpt
expect_error "a directory as the checkpoint" "dir.ckpt: error: cannot replace" ./lenet $small --iterations 1 --checkpoint dir.ckpt
ls | grep -q "dir.ckpt.tmp" && fail "a failed save left $(ls | grep dir.ckpt.tmp)" || pass
dead=$(sh -c 'echo $$') # a process that no longer exists
echo "half a checkpoint" > keep.ckpt.tmp$dead
echo "another program's" > keep.ckpt.tmpnotapid
./lenet $small --iterations 1 --checkpoint keep.ckpt >/dev/null || fail "save beside a stale temporary file"
[ ! -e keep.ckpt.tmp$dead ] && [ -e keep.ckpt.tmpnotapid ] && [ -s keep.ckpt ] && pass ||
  fail "the stale temporary file of process $dead: $(ls keep.ckpt*)"
if mkdir -p full && mount -t tmpfs -o size=700k tmpfs full 2>/dev/null; then
  # LeNet's checkpoint is 3.4 MB: the save fails for want of space and leaves the space free
  expect_error "a checkpoint on a full disk" "cannot write: No space left on device" \
    ./lenet $small --iterations 1 --checkpoint full/x.ckpt
  [ -z "$(ls full)" ] && pass || fail "a save on a full disk left $(ls full)"
  expect_error "the log on a full disk" "cannot write the log: No space left on device" \
    sh -c "cat /dev/zero > full/filler 2>/dev/null; exec ./lenet $small --iterations 50 --display 1 --log full/log.json"
  umount full
else
  echo "note: no tmpfs can be mounted here; the full-disk save is checked with /dev/full only"
fi

# ---- SIGINT and SIGTERM: the loop stops after the iteration in hand, says so and saves
for sig in INT TERM; do
  rm -f sig.ckpt* sig.json
  ./lenet --train-size 1024 --test-size 200 --threads 1 --iterations 1000000 --display 1 \
    --checkpoint sig.ckpt --log sig.json >sig.txt 2>&1 &
  pid=$!
  for i in $(seq 300); do grep -q '"train"' sig.json 2>/dev/null && break; sleep 0.1; done
  kill -$sig $pid
  wait $pid; status=$?
  want=$([ $sig = INT ] && echo 130 || echo 143)
  at=$(sed -n "s/^interrupted by SIG$sig after iteration \([0-9]*\) of 1000000: saving sig.ckpt$/\1/p" sig.txt)
  if [ "$status" -eq "$want" ] && [ -n "$at" ] && [ -s sig.ckpt ] && [ -z "$(ls | grep sig.ckpt.tmp)" ]; then pass; else
    fail "SIG$sig: exit $status (expected $want), checkpoint $(ls sig.ckpt* 2>&1), output: $(tail -3 sig.txt)"
  fi
  grep -q "\"iteration\":$at," sig.json && pass || fail "SIG$sig: the log does not reach iteration $at"
  ./lenet --train-size 1024 --test-size 200 --threads 1 --iterations $((at + 1)) --resume sig.ckpt >out.txt 2>&1 &&
    grep -q "^trained 1 iteration (64 images)" out.txt && pass || fail "SIG$sig: resume after $at: $(cat out.txt)"
done

# ---- ranks that disagree are named in words; a file for rank 1 alone is refused
mpi() { "$mpiexec" --oversubscribe "$@"; }
mpi -np 1 ./lenet $small --iterations 1 --sync sc-b : -np 1 ./lenet $small --iterations 1 >out.txt 2>err.txt
grep -q "rank 1 runs with another --sync than rank 0 (allreduce, not sc-b)" err.txt && pass ||
  fail "--sync differing between ranks: $(cat err.txt)"
mpi -np 1 ./lenet $small --iterations 1 : -np 1 ./lenet $small --iterations 1 --checkpoint r1.ckpt >out.txt 2>err.txt
grep -q "rank 1 runs with another --checkpoint than rank 0 (given, not not given)" err.txt && pass ||
  fail "--checkpoint for rank 1 alone: $(cat err.txt)"
# under mpirun a rank's output is a pseudo-terminal: no progress bar goes into a redirected log
mpi -np 1 ./lenet --train-size 1024 --test-size 200 --threads 1 --iterations 20 >mpi.txt 2>&1
! grep -q "$(printf '\r')" mpi.txt && grep -q "^trained 20 iterations" mpi.txt && pass ||
  fail "a progress bar under mpirun: $(od -c mpi.txt | head -3)"

# ---- a test interval that is no multiple of the epoch (7 iterations) says where it is
"$swnc" "$root/examples/lenet.swn" -D train.test_interval=5 -D train.eval_interval=0 -o lenet_ti || fail "build lenet_ti"
./lenet_ti --train-size 448 --test-size 100 --threads 1 --batch 64 --iterations 14 >ti.txt
grep -q "^test at iteration 5 (epoch 1, 5/7): loss" ti.txt && grep -q "^test at iteration 10 (epoch 2, 3/7): loss" ti.txt &&
  grep -q "^test after epoch 2: loss" ti.txt && pass || fail "test lines: $(grep test ti.txt)"
finish
