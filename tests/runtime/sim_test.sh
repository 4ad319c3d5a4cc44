#!/bin/sh
# swnc-sim: a generated program's --comm-profile feeds the scaling prediction for 1..1024
# nodes; the message mode shows the supernode-aware numbering crossing fewer bytes; bad input
# is refused with a message. (The simulator's numbers are checked against closed forms in
# unit/test_sim.c.) Usage: sim_test.sh SWNC PROJECT_DIR WORKDIR SWNC_SIM
swnc=$1 root=$2 work=$3 sim=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"

"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K -o lenet || fail "cannot build lenet"
./lenet --iterations 3 --train-size 500 --test-size 100 --quiet --comm-profile lenet.prof > out.txt &&
  grep -q "^wrote lenet.prof" out.txt && pass || fail "--comm-profile: $(cat out.txt)"
grep -q "^buckets 3$" lenet.prof && [ "$(grep -c '^bucket ' lenet.prof)" -eq 3 ] && pass || fail "profile: $(cat lenet.prof)"

"$sim" --profile lenet.prof > scaling.txt || fail "swnc-sim --profile failed"
[ "$(grep -cv '^#' scaling.txt)" -eq 11 ] && pass || fail "not 11 node counts: $(cat scaling.txt)"
awk '$1 == 1 { exit !($6 == 1.0) }' scaling.txt && pass || fail "one node is not speedup 1"
awk '$1 == 1024 { exit !($6 > 1 && $6 <= 1024) }' scaling.txt && pass || fail "1024 nodes: $(grep '^1024' scaling.txt)"
# A slower network shows more communication.
"$sim" --profile lenet.prof --bandwidth 1e6 --nodes 64..64 > slow.txt
awk '!/^#/ { exit !($5 > 50) }' slow.txt && pass || fail "1 MB/s network, comm share: $(cat slow.txt)"
# Compression on a slow network: fp16 and 1% sparse both cut the allreduce (column 3).
"$sim" --profile lenet.prof --bandwidth 1e8 --nodes 64..64 > dense.txt &&
  "$sim" --profile lenet.prof --bandwidth 1e8 --nodes 64..64 --comm-precision fp16 > half.txt &&
  "$sim" --profile lenet.prof --bandwidth 1e8 --nodes 64..64 --sparse 0.01 --sparse-chunk 1024 > sparse.txt ||
  fail "swnc-sim with compression failed"
d=$(awk '!/^#/ { print $3 }' dense.txt) h=$(awk '!/^#/ { print $3 }' half.txt) s=$(awk '!/^#/ { print $3 }' sparse.txt)
awk -v d="$d" -v h="$h" -v s="$s" 'BEGIN { exit !(h < 0.6 * d && h > 0.4 * d && s < 0.2 * d) }' && pass ||
  fail "allreduce ms dense $d, fp16 $h, sparse 1% $s"
grep -q "allreduce topo (round-robin), fp32, sparse 1% of chunks of 1024" sparse.txt && pass || fail "sparse header: $(head -1 sparse.txt)"
# auto: the runtime's rule on the simulated costs (merged jobs, the algorithm of the largest).
"$sim" --profile lenet.prof --algorithm auto --nodes 1..64 > auto.txt || fail "swnc-sim --algorithm auto failed"
awk '!/^#/ && $1 > 1 { if (!($8 >= 1 && $8 <= 3 && $9 >= 1024) || $10 !~ /^(topo|ring|hier)$/) bad = 1; n++ }
  END { exit bad || n != 6 }' auto.txt && pass || fail "auto: $(cat auto.txt)"
expect_error "auto of a message" "auto chooses per gradient bucket: give --profile" "$sim" --bytes 4 --algorithm auto
expect_error "sparse of a message" "give --profile" "$sim" --bytes 4 --sparse 0.1
expect_error "density above 1" "--sparse needs a fraction in (0, 1], not '2'" "$sim" --profile lenet.prof --sparse 2

# Supernode-aware numbering: 2 (p/q - 1) n against 2 (p - q) n bytes cross supernodes.
"$sim" --bytes 1048576 --nodes 1024..1024 > rr.txt && "$sim" --bytes 1048576 --nodes 1024..1024 --mapping contiguous > c.txt
rr=$(awk '!/^#/ { print $4 }' rr.txt) contiguous=$(awk '!/^#/ { print $4 }' c.txt)
[ "$rr" = 6291456 ] && [ "$contiguous" = 1610612736 ] && pass || fail "bytes across supernodes: $rr, $contiguous"
"$sim" --bytes 4096 --nodes 8..8 --steps --per-supernode 2 > steps.txt
[ "$(awk '/^# step/ { on = 1; next } on' steps.txt | wc -l)" -eq 6 ] && pass || fail "per-step traffic: $(cat steps.txt)"

# hier's upper level at 1024 nodes (128 chain heads), 256 MiB: the chain of chains pipelines
# it in 2 (1024 + 126) chunk times against the binomial tree's 14 whole-vector times.
for u in binomial chain auto; do
  "$sim" --bytes 268435456 --nodes 1024..1024 --algorithm hier --hier-upper $u > upper-$u.txt ||
    fail "hier --hier-upper $u failed"
done
b=$(awk '!/^#/ { print $2 }' upper-binomial.txt) c=$(awk '!/^#/ { print $2 }' upper-chain.txt)
awk -v b="$b" -v c="$c" 'BEGIN { exit !(c < b / 2) }' && pass || fail "chain of chains $c us, binomial $b us"
grep -q "hier (chains of 8, heads: chain)" upper-chain.txt && pass || fail "header: $(head -1 upper-chain.txt)"
expect_error "bad upper level" "--hier-upper must be auto, binomial, ring or chain, not 'tree'" "$sim" --bytes 4 --hier-upper tree

# S-Caffe's reduce-to-root schedules on a slow network: sc-b exposes all of its reduce and
# broadcast; sc-ob hides part of the broadcast under forward, sc-obr also part of the reduce
# under backward (the closed forms are unit/test_sim.c's).
for sync in sc-b sc-ob sc-obr; do
  "$sim" --profile lenet.prof --sync $sync --bandwidth 1e9 --nodes 8..8 > $sync.txt || fail "--sync $sync failed"
done
eb=$(awk '!/^#/ { print $4 }' sc-b.txt) cb=$(awk '!/^#/ { print $3 }' sc-b.txt)
eob=$(awk '!/^#/ { print $4 }' sc-ob.txt) eobr=$(awk '!/^#/ { print $4 }' sc-obr.txt)
awk -v eb="$eb" -v cb="$cb" -v eob="$eob" -v eobr="$eobr" 'BEGIN { exit !(eb == cb && eob < eb && eobr < eob) }' &&
  pass || fail "exposed ms: sc-b $eb of $cb, sc-ob $eob, sc-obr $eobr"
grep -q "sc-obr: reduce to rank 0 and broadcast, hier (chains of 8, heads: auto)" sc-obr.txt && pass ||
  fail "--sync header: $(head -1 sc-obr.txt)"
"$sim" --bytes 1048576 --collective broadcast --nodes 16..16 --chain 4 > bcast.txt &&
  grep -q "^# broadcast from node 0 of 1048576 bytes, hier (chains of 4" bcast.txt && pass ||
  fail "--collective broadcast: $(cat bcast.txt)"
expect_error "rooted topo" "reduce to node 0 and broadcast run hier's chains, not --algorithm topo" \
  "$sim" --profile lenet.prof --sync sc-ob --algorithm topo
expect_error "sync of a message" "--sync models training iterations" "$sim" --bytes 4 --sync sc-b
expect_error "collective of a profile" "--collective is one message's" "$sim" --profile lenet.prof --collective reduce
expect_error "bad sync" "--sync must be allreduce, sc-b, sc-ob or sc-obr, not 'x'" "$sim" --profile lenet.prof --sync x

# swCaffe's schedule (--no-overlap): the three buckets packed into one allreduce after
# backward expose all of it; the runtime's overlaps the first two with backward.
printf 'swnc-profile 1\nnetwork x\nbatch 32\nforward 0.1\nbackward 0.2\nupdate 0.01\nbuckets 3\n' > three.prof
printf 'bucket 0 bytes 4000000 ready 0.05\nbucket 1 bytes 4000000 ready 0.1\nbucket 2 bytes 4000000 ready 0.2\n' >> three.prof
"$sim" --profile three.prof --nodes 8..8 --bandwidth 1e9 > overlap.txt &&
  "$sim" --profile three.prof --nodes 8..8 --bandwidth 1e9 --no-overlap > packed.txt || fail "--no-overlap failed"
po=$(awk '!/^#/ { print $3, $4 }' packed.txt) oe=$(awk '!/^#/ { print $4 }' overlap.txt)
echo "$po $oe" | awk '{ exit !($1 == $2 && $3 < $2 && $3 > 0) }' && grep -q "packed after backward (no overlap)" packed.txt &&
  pass || fail "--no-overlap: allreduce and exposed $po ms, overlapped exposed $oe ms"
expect_error "no-overlap of a message" "--no-overlap models training iterations" "$sim" --bytes 4 --no-overlap
expect_error "no-overlap with sync" "--no-overlap is the allreduce's schedule" "$sim" --profile three.prof --no-overlap --sync sc-b

# The default machine (taihulight: its bandwidth under load, fitted to swCaffe's AlexNet run)
# against that run at 1024 nodes with swCaffe's schedule: 715.45x / 561.58x / 409.50x at
# sub-batches 256 / 128 / 64 from one node's 94.17 img/s, 244 MB of gradients; within 20%.
for row in "256 715.45" "128 561.58" "64 409.50"; do
  set -- $row
  awk -v b="$1" 'BEGIN { t = b / 94.17; printf "swnc-profile 1\nnetwork alexnet\nbatch %d\n", b
    printf "forward %f\nbackward %f\nupdate 0\nbuckets 1\nbucket 0 bytes 244000000 ready %f\n", t / 3, 2 * t / 3, 2 * t / 3 }' > "alexnet$1.prof"
  got=$("$sim" --profile "alexnet$1.prof" --no-overlap --nodes 1024..1024 | awk '!/^#/ { print $6 }')
  awk -v s="$got" -v m="$2" 'BEGIN { exit !(s > 0.8 * m && s < 1.2 * m) }' && pass ||
    fail "alexnet at sub-batch $1 on 1024 nodes: ${got}x against swCaffe's ${2}x"
done
# The links' preset: 12 GB/s (28x), the allreduce of those 244 MB 15-30x faster (the sums cost both the same).
"$sim" --bytes 244e6 --nodes 1024..1024 > loaded.txt && "$sim" --bytes 244e6 --nodes 1024..1024 --machine taihulight-links > links.txt &&
  grep -q "; taihulight-links: alpha 1e-06 s, 1.2e+10 B/s inside" links.txt && pass || fail "links preset: $(cat links.txt)"
l=$(awk '!/^#/ { print $2 }' loaded.txt) k=$(awk '!/^#/ { print $2 }' links.txt)
awk -v l="$l" -v k="$k" 'BEGIN { exit !(l > 15 * k && l < 30 * k) }' && pass || fail "allreduce us: default $l, links $k"
"$sim" --bytes 4 --nodes 2..2 --machine taihulight-links --bandwidth 1e9 | grep -q "taihulight-links as given: alpha 1e-06 s, 1e+09 B/s" &&
  pass || fail "a figure given over the preset"
expect_error "bad machine" "--machine must be taihulight or taihulight-links, not 'k'" "$sim" --bytes 4 --machine k

printf 'swnc-profile 1\nnetwork x\nbatch 0\n' > bad.prof
expect_error "bad profile" "bad.prof:3: not a swnc profile line" "$sim" --profile bad.prof
expect_error "missing profile" "cannot open the profile" "$sim" --profile missing.prof
expect_error "no mode" "give one of --bytes and --profile" "$sim"
expect_error "bad nodes" "--nodes takes A..B" "$sim" --bytes 4 --nodes 8..2
expect_error "bad algorithm" "--algorithm must be topo, ring, hier or auto, not 'mpi'" "$sim" --bytes 4 --algorithm mpi
expect_error "bad number" "--alpha needs a positive number" "$sim" --bytes 4 --alpha -1
"$sim" --version | grep -q "^swnc-sim (swnc 0\." && pass || fail "swnc-sim --version"

# Bucket sizes are checked, and a huge one is simulated in bounded memory and time: the chains'
# pipelined chunks grow past 1024 of them (a 32 GiB bucket once took memory without bound).
expect_error "--bytes beyond 1 TiB" "--bytes 2e12 is more than 1 TiB" "$sim" --bytes 2e12
printf 'swnc-profile 1\nnetwork big\nbatch 32\nforward 0.1\nbackward 0.2\nupdate 0.01\nbuckets 1\nbucket 0 bytes 1e300 ready 0.1\n' > huge.prof
expect_error "a bucket beyond 1 TiB" "huge.prof:8: not a swnc profile line" "$sim" --profile huge.prof
sed 's/1e300/34359738368/' huge.prof > big.prof
limit=4000000 # KB of address space; the sanitizers' shadow memory needs more
ldd "$sim" | grep -q libasan && limit=unlimited
for how in "--algorithm hier" "--sync sc-obr"; do
  (ulimit -v $limit; exec "$sim" --profile big.prof $how --nodes 1..256) > big.txt 2>&1 && grep -q "^256 " big.txt && pass ||
    fail "a 32 GiB bucket with $how: $(tail -2 big.txt)"
done
# out of memory: an error that names this program (it named "swnc-program")
if [ $limit != unlimited ]; then
  (ulimit -v 150000; exec "$sim" --bytes 1e11 --algorithm hier) >out.txt 2>err.txt
  [ $? -eq 1 ] && grep -q "^swnc-sim: error: out of memory allocating" err.txt && pass ||
    fail "swnc-sim out of memory: $(cat err.txt)"
fi
finish
