#!/bin/sh
# Distributed training: N ranks with per-rank batch b train exactly like one process with batch
# N x b (losses to a relative 1e-4 for 20 iterations; N = 2, 3, 4, every algorithm, several
# gradient buckets); resuming on N ranks; checkpoints by rank 0 only; mismatched programs or
# options and failing ranks stop every rank with a message naming the rank, never a hang.
# cifar10_quick trains at a tenth of its rate without momentum, as in plans_test.sh.
# Usage: distributed_test.sh SWNC PROJECT_DIR WORKDIR MPIEXEC
swnc=$1 root=$2 work=$3 mpiexec=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1 # more ranks than cores: waiting ranks yield
mpi() { timeout 300 "$mpiexec" --oversubscribe "$@"; }
data="--train-size 2000 --test-size 200 --threads 1 --quiet --display 1"
rm -f ./*.one*.json # one-process logs are reused within a run, never from an earlier build


# Small buckets, so that several allreduces overlap backward.
"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K -o lenet || fail "cannot build lenet"
"$swnc" "$root/examples/cifar10_quick.swn" --fusion-threshold=64K -D train.lr=0.0001 -D train.momentum=0 \
  -o cifar || fail "cannot build cifar10_quick"
# The same with a gradient pool of their own (the default adds gradients into the momentum), to
# compare gradients (--save-gradients)
"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K --no-fold-gradients -o lenet-pool &&
  "$swnc" "$root/examples/cifar10_quick.swn" --fusion-threshold=64K --no-fold-gradients -o cifar-pool ||
  fail "cannot build with a gradient pool"

check() { # NET N PER_RANK_BATCH OPTIONS...
  net=$1 n=$2 b=$3; shift 3
  [ -f "$net.one$n.json" ] || ./$net --iterations "$iterations" --batch $((n * b)) $data --log "$net.one$n.json" >/dev/null ||
    fail "$net: one process with batch $((n * b)) does not train"
  mpi -np "$n" ./$net --iterations "$iterations" --batch "$b" $data --log "$net.many.json" "$@" >/dev/null ||
    fail "$net: $n ranks $* do not train"
  same_losses "$net on $n ranks $*" "$net.one$n.json" "$net.many.json"
}

check lenet 2 16
check lenet 2 16 --allreduce ring --no-overlap
check lenet 3 16 --allreduce topo
check lenet 3 16 --allreduce hier --chain 2
check lenet 4 8 --allreduce hier --chain 1 --hier-upper chain
check lenet 4 8 --allreduce topo --group-size 2
check lenet 4 8 --allreduce ring
check lenet 4 8 --allreduce mpi
check lenet 3 16 --allreduce shm
check lenet 2 16 --allreduce shm --no-overlap
# AdamW with clipping by the global norm (computed by every rank from the same mean gradient)
# and two micro-batches an iteration; and under reduce-to-root, where rank 0 alone clips
"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K -D train.optimizer=adamw -D train.lr=0.001 \
  -D train.weight_decay=0.01 -D train.clip_gradients=0.5 -D train.iter_size=2 -o lenet-adamw ||
  fail "cannot build lenet with adamw"
check lenet-adamw 2 8
check lenet-adamw 3 8 --sync sc-obr
# cifar10_quick on several ranks drifts past 1e-4 after a dozen iterations (max-pool near-ties
# amplify rounding ~3x per iteration; on 2 ranks of 25 it reached 1.7e-4 by the 20th on an EPYC
# with AVX2 only), so there the first iteration's gradients are compared: every parameter's to a
# relative 1e-5 (float rounding is ~1e-6).
same_gradients() { # NET N PER_RANK_BATCH OPTIONS...
  net=$1 n=$2 b=$3; shift 3
  ./$net-pool --iterations 1 --batch $((n * b)) $data --save-gradients one.grad >/dev/null &&
    mpi -np "$n" ./$net-pool --iterations 1 --batch "$b" $data --save-gradients many.grad "$@" >/dev/null ||
    { fail "$net: cannot save gradients"; return; }
  worst=$(/usr/bin/python3 - <<PY
import sys; sys.path.insert(0, "$root/tools")
import numpy as np, swnc_checkpoint as c
a, b = c.load("one.grad").params, c.load("many.grad").params
print(max(np.linalg.norm(a[k].astype(float) - b[k]) / max(np.linalg.norm(a[k]), 1e-30) for k in a))
PY
)
  if awk "BEGIN { exit !($worst <= 1e-5) }"; then pass; else fail "$net on $n ranks: gradients differ by $worst"; fi
}
same_gradients cifar 2 25 --allreduce topo
same_gradients cifar 4 8
same_gradients cifar 3 10 --allreduce hier --chain 2 --group-size 2
same_gradients lenet 3 16 --allreduce ring
same_gradients cifar 4 8 --allreduce shm

# S-Caffe's reduce-to-root schedules (--sync): the gradients summed on rank 0, which alone
# updates (a folded program's momentum counted once, a gradient pool's mean) and broadcasts the
# weights, whole or in stages that forward waits for; N ranks still train like one process,
# through hier's chains (every upper level) and MPI_Reduce / MPI_Bcast. Rank 0's saved gradients
# are the mean of all ranks'.
check lenet 2 16 --sync sc-b
check lenet 3 16 --sync sc-ob --allreduce hier --chain 2
check lenet 4 8 --sync sc-obr --group-size 2 --chain 1 --hier-upper chain
check lenet 4 8 --sync sc-obr --allreduce mpi
check lenet-pool 4 8 --sync sc-obr --group-size 2 --hier-upper binomial
same_gradients cifar 3 10 --sync sc-ob
mpi -np 2 ./lenet --iterations 4 --batch 16 $data --sync sc-obr --quiet > said.txt
grep -q "sc-obr: 3 gradient buckets reduced to rank 0 while backward runs, rank 0 updates, the weights broadcast in 3 stages overlapping forward (hier's chains of 8, heads: auto)" said.txt &&
  grep -q "^reduce and broadcast: .*the rest overlapped forward and backward; .* sums per iteration began while backward ran" said.txt &&
  pass || fail "--sync sc-obr start-up and summary lines: $(cat said.txt)"
expect_error "--sync with fp16" "--sync sc-ob reduces to rank 0 in fp32" ./lenet-pool --sync sc-ob --comm-precision fp16
expect_error "--sync with sparse" "--sync sc-b reduces every gradient to rank 0" ./lenet-pool --sync sc-b --sparse 0.1
expect_error "--sync with ring" "(--allreduce mpi), not --allreduce ring" ./lenet --sync sc-obr --allreduce ring
expect_error "bad --sync" "--sync must be allreduce, sc-b, sc-ob or sc-obr, not 'sc-x'" ./lenet --sync sc-x
expect_error "bad SWN_SYNC" "SWN_SYNC must be allreduce" env SWN_SYNC=ob ./lenet
expect_error "another --sync" "rank 1 runs with another --sync" \
  mpi -np 1 ./lenet $data : -np 1 ./lenet --sync sc-ob $data

# fp16 gradients: halves keep 11 significant bits of each (scaled) gradient, so 2 ranks stay
# within a relative 1e-3 of one process's losses over 20 iterations (1.3e-5 measured), through
# the message executor (topo) and MPI_Allreduce on halves.
./lenet-pool --iterations 20 --batch 32 $data --log pool.one.json >/dev/null || fail "lenet-pool, one process"
for algorithm in topo mpi; do
  mpi -np 2 ./lenet-pool --iterations 20 --batch 16 $data --log half.json --comm-precision fp16 \
    --allreduce $algorithm >/dev/null || fail "fp16 with $algorithm does not train"
  same_losses "fp16 on 2 ranks with $algorithm" pool.one.json half.json 20 1e-3
done
expect_error "fp16 of a folded program" "compile it with --no-fold-gradients" ./lenet --comm-precision fp16
expect_error "fp16 through shared memory" "--allreduce shm sends none" \
  ./lenet-pool --comm-precision fp16 --allreduce shm
expect_error "bad precision" "--comm-precision must be fp32 or fp16, not 'fp8'" ./lenet --comm-precision fp8

# Sparse gradients (comm/sparse.c; the residual's exactness is unit_allreduce's, the accuracy
# comm_accuracy's): 2 ranks train, say so at start-up, and report the share of chunks sent
# (no warm-up: 10% of lenet-pool's 3 buckets' chunks of 1024, rounded up per bucket).
mpi -np 2 ./lenet-pool --iterations 20 --batch 16 $data --log sparse.json --sparse 10% \
  --sparse-chunk 1024 --sparse-warmup 0 --allreduce topo > sparse.txt || fail "--sparse does not train"
grep -q "sparse: the top 10% of chunks of 1024 gradients, momentum correction 0.9" sparse.txt &&
  pass || fail "sparse start-up line: $(grep distributed sparse.txt)"
share=$(sed -n 's/.*fp32, \([0-9.]*\)% of the chunks.*/\1/p' sparse.txt)
[ -n "$share" ] && awk -v s="$share" 'BEGIN { exit !(s >= 10 && s < 13) }' && pass ||
  fail "sparse summary: $(grep '^allreduce' sparse.txt)"
expect_error "sparse of a folded program" "compile it with --no-fold-gradients" ./lenet --sparse 0.1
expect_error "density 0" "--sparse needs a fraction in (0, 1] or a percentage, but got '0'" \
  ./lenet-pool --sparse 0
expect_error "density above 1" "but got '150%'" ./lenet-pool --sparse 150%

# --scale-lr: the learning rate times the ranks at every iteration (policy and warm-up alike),
# said at start-up; EASGD refuses it.
mpi -np 2 ./lenet --iterations "$iterations" --batch 16 $data --log scaled.json --scale-lr > scaled.txt ||
  fail "--scale-lr does not train"
grep -q "; learning rate x 2 (--scale-lr: linear scaling by ranks)" scaled.txt && pass ||
  fail "--scale-lr start-up line: $(grep distributed scaled.txt)"
lrs() { sed -n 's/.*"lr":\([0-9.e-]*\).*/\1/p' "$1"; }
lrs lenet.one2.json > lr.one && lrs scaled.json > lr.scaled
[ "$(wc -l < lr.one)" -eq "$iterations" ] && paste lr.one lr.scaled |
  awk '{ if ($2 < 2 * $1 * 0.99999 || $2 > 2 * $1 * 1.00001) exit 1 }' && pass ||
  fail "--scale-lr: learning rates $(paste lr.one lr.scaled | head -3)"

# The start-up line says what runs.
mpi -np 4 ./lenet --iterations 1 --train-size 500 --test-size 100 --threads 1 --group-size 2 --allreduce hier \
  --chain 2 --hier-upper binomial > said.txt
grep -q "distributed: 4 ranks in 2 groups (2+2 ranks), allreduce hier, chains of 2, heads: binomial, 3 gradient buckets" said.txt &&
  pass || fail "start-up line: $(grep distributed said.txt)"

mpi -np 2 ./lenet --iterations 1 --train-size 500 --test-size 100 --threads 1 > said.txt
grep -q "distributed: 2 ranks in 1 group (2 ranks), allreduce auto (measured at start-up: [a-z]*.*; buckets merged to [0-9.]* [KM]*i*B or more)" said.txt &&
  pass || fail "start-up line of auto: $(grep distributed said.txt)"

# auto from a cost table: bench/allreduce writes one; one written here makes ring fastest at
# every size (n_1/2 of 1 us + 0.0945 ns/B: 16 KiB), and training still equals one process.
mpi -np 2 "$(dirname "$swnc")/../bench/allreduce" --max-size 65536 --write-costs bench.costs >/dev/null &&
  grep -q "^ranks 2$" bench.costs && pass || fail "bench/allreduce --write-costs: $(cat bench.costs)"
mpi -np 2 ./lenet --iterations 1 --train-size 500 --test-size 100 --threads 1 --comm-costs bench.costs > said.txt
grep -q "allreduce auto (from bench.costs: " said.txt && pass || fail "--comm-costs: $(grep distributed said.txt)"
printf 'swnc-allreduce-costs 1\nranks 2\ngroups 1\nsizes 1024 1048576\nring 1e-6 1e-4\nmpi 1e-5 1e-3\n' > ring.costs
mpi -np 2 ./lenet --iterations 1 --train-size 500 --test-size 100 --threads 1 --comm-costs ring.costs > said.txt
grep -q "allreduce auto (from ring.costs: ring; buckets merged to 16 KiB or more)" said.txt && pass ||
  fail "--comm-costs ring: $(grep distributed said.txt)"
check lenet 2 16 --comm-costs ring.costs
expect_error "cost table of other ranks" "ring.costs: measured on 2 ranks in 1 group, but this run has 3 in 1" \
  mpi -np 3 ./lenet --iterations 1 --comm-costs ring.costs
printf 'swnc-allreduce-costs 1\nranks 2\nsizes 4 2\n' > bad.costs
expect_error "bad cost table" "bad.costs:3: not a line of an allreduce cost table" \
  mpi -np 2 ./lenet --iterations 1 --comm-costs bad.costs

# Overlap happens: the communication thread starts bucket sums while backward still runs (the
# summary counts them); without overlap none. What it buys in time is tests/runtime/overlap_test.sh.
# (shm: auto may merge lenet's three buckets into one, leaving nothing to overlap.)
summary() { mpi -np 2 ./lenet --iterations 10 --batch 64 --train-size 1000 --test-size 100 --threads 1 \
  --quiet --allreduce shm "$@" | grep '^allreduce:'; }
summary > said.txt
began=$(sed -n 's/.*; \([0-9.]*\) of [0-9.]* sums per iteration began while backward ran.*/\1/p' said.txt)
[ -n "$began" ] && awk -v n="$began" 'BEGIN { exit !(n > 0) }' && pass || fail "overlap: $(cat said.txt)"
summary --no-overlap > said.txt
grep -q "(not overlapped)" said.txt && pass || fail "--no-overlap: $(cat said.txt)"

# Checkpoints: rank 0 writes; 10 + 10 iterations resumed on 2 ranks equal 20 straight.
rm -f half.ckpt half.ckpt.tmp*
mpi -np 2 ./lenet --iterations 10 --batch 16 $data --checkpoint half.ckpt >/dev/null || fail "2 ranks, 10 iterations"
[ -f half.ckpt ] && [ "$(ls half.ckpt* | wc -l)" -eq 1 ] && pass || fail "rank 0's checkpoint: $(ls half.ckpt*)"
mpi -np 2 ./lenet --iterations 20 --batch 16 $data --resume half.ckpt --log resumed.json >/dev/null ||
  fail "resume on 2 ranks"
mpi -np 2 ./lenet --iterations 20 --batch 16 $data --log straight.json >/dev/null
losses resumed.json > r.txt; losses straight.json | tail -10 > s.txt
cmp -s r.txt s.txt && pass || fail "resumed losses differ from straight: $(paste r.txt s.txt | head -3)"

# Mismatched programs and options are found at start-up, naming the rank.
expect_error "another batch" "rank 1 runs with another --batch than rank 0 (32, not 16)" \
  mpi -np 1 ./lenet --batch 16 $data : -np 1 ./lenet --batch 32 $data
expect_error "another network" "rank 1 runs with another network" \
  mpi -np 1 ./lenet $data : -np 1 ./cifar $data
expect_error "another algorithm" "rank 2 runs with another --allreduce" \
  mpi -np 2 ./lenet $data : -np 1 ./lenet --allreduce ring $data

# A failing rank stops every rank, with a message naming it.
expect_error "rank 1 has no data" "lenet (rank 1 of 2): " \
  mpi -np 1 ./lenet $data : -np 1 ./lenet $data --train /nonexistent/train-images,/nonexistent/train-labels
expect_error "rank 0 cannot write its checkpoint mid-run" "lenet (rank 0 of 3): /nonexistent/dir/c.ckpt" \
  mpi -np 3 ./lenet --iterations 30 --checkpoint-every 5 --checkpoint /nonexistent/dir/c.ckpt $data
# Synchronous EASGD: trains on 2 ranks; with elastic 0 the center never moves, so the saved model
# (the center) is exactly the initial weights; a pull that overshoots is refused.
"$swnc" "$root/examples/lenet.swn" -D train.optimizer=easgd -D train.elastic=5 -o easgd || fail "cannot build easgd"
mpi -np 2 ./easgd --iterations 60 --batch 32 --train-size 4000 --test-size 1000 --threads 1 --quiet --display 1 \
  --log easgd.json > easgd.txt || fail "easgd on 2 ranks"
grep -q "synchronous EASGD" easgd.txt && pass || fail "easgd start-up line: $(cat easgd.txt)"
expect_error "easgd with --scale-lr" "EASGD's ranks each take their own steps" ./easgd --scale-lr
awk -F'"accuracy":' '/"test"/ { split($2, a, /[,}]/); exit !(a[1] > 0.55) }' easgd.json && pass ||
  fail "easgd did not learn: $(grep test easgd.json)"
# EASGD under a rooted schedule: rank 0 alone sums the weights and moves the center, which it
# broadcasts (overlapped, or before forward with sc-b): the same training as the allreduce's to
# the rounding of the sums' order (a relative 1e-4 over 20 iterations, then it drifts), and the
# evaluation on every rank sees rank 0's center (the same accuracy, to 2 images of 500).
mpi -np 3 ./easgd --iterations 20 --batch 32 --train-size 4000 --test-size 500 --threads 1 --quiet --display 1 \
  --log easgd.all.json > /dev/null || fail "easgd on 3 ranks"
for sync in sc-b sc-ob; do
  mpi -np 3 ./easgd --iterations 20 --batch 32 --train-size 4000 --test-size 500 --threads 1 --quiet --display 1 \
    --sync $sync --log easgd.$sync.json > easgd.txt || fail "easgd with --sync $sync"
  same_losses "easgd with --sync $sync" easgd.all.json easgd.$sync.json 20
  a=$(sed -n 's/.*"test".*"accuracy":\([0-9.]*\).*/\1/p' easgd.all.json)
  b=$(sed -n 's/.*"test".*"accuracy":\([0-9.]*\).*/\1/p' easgd.$sync.json)
  [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 0.005 && d > -0.005) }' &&
    pass || fail "easgd --sync $sync evaluates to accuracy $b, not $a"
done
grep -q "sc-ob: synchronous EASGD: the weights reduced to rank 0, which moves the center, and the center broadcast, overlapped" easgd.txt &&
  pass || fail "easgd --sync start-up line: $(grep distributed easgd.txt)"
"$swnc" "$root/examples/lenet.swn" -D train.optimizer=easgd -D train.elastic=0 -o still || fail "cannot build"
./still --iterations 0 --epochs 0 --checkpoint initial.ckpt >/dev/null
mpi -np 2 ./still --iterations 5 $data --checkpoint moved.ckpt >/dev/null || fail "easgd, elastic 0"
/usr/bin/python3 - "$root/tools" <<'PY' && pass || fail "easgd with elastic 0 moved the center"
import sys; sys.path.insert(0, sys.argv[1])
import numpy as np, swnc_checkpoint as c
a, b = c.load("initial.ckpt").params, c.load("moved.ckpt").params
sys.exit(0 if all(np.array_equal(a[k], b[k]) for k in a) else 1)
PY
"$swnc" "$root/examples/lenet.swn" -D train.optimizer=easgd -D train.elastic=60 -o wild || fail "cannot build"
expect_error "easgd overshoot" "must be below 1 (lower train.elastic)" mpi -np 2 ./wild $data

# A rank killed mid-run: mpirun stops the others and names it (no hang: `mpi` has a timeout).
mpi -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 3; kill -9 $$) & fi; exec ./lenet --iterations 100000 \
  --threads 1 --quiet' > killed.txt 2>&1; status=$?
[ $status -ne 0 ] && [ $status -ne 124 ] && grep -q "rank 1" killed.txt && pass ||
  fail "killed rank: exit $status, $(tail -5 killed.txt)"

expect_error "bad algorithm" "--allreduce must be auto, topo, ring, hier, shm or mpi, not 'star'" \
  ./lenet --allreduce star
expect_error "bad algorithm in the environment" "SWN_ALLREDUCE must be auto" env SWN_ALLREDUCE=star ./lenet
expect_error "bad group size" "--group-size needs an integer from 1 to 1048576, but got '0'" ./lenet --group-size 0
expect_error "bad upper level" "--hier-upper must be auto, binomial, ring or chain, not 'star'" ./lenet --hier-upper star
expect_error "bad upper level in the environment" "SWN_HIER_UPPER must be auto, binomial, ring or chain, not 'x'" env SWN_HIER_UPPER=x ./lenet
expect_error "huge chain" "--chain needs an integer from 1 to 1048576, but got '99999999999'" ./lenet --chain 99999999999
expect_error "bad chain in the environment" "SWN_CHAIN needs an integer" env SWN_CHAIN=x ./lenet
finish
