#!/bin/sh
# Overlap pays: over a deliberately slow link (SWNC_TEST_LINK_NS_PER_BYTE, a test-only sleep of
# 10 ns a byte in every allreduce: about 17 ms per iteration for lenet's 1.7 MB against ~25 ms of
# compute at batch 128), 2 ranks of lenet whose buckets are summed while backward runs hide most
# of the allreduce (the update waits for at most 0.6 of it; about a fifth on an idle machine)
# where summing after backward waits for all of it, and run faster for it (about 1.4x on an idle
# machine; the test asks for 1.05x). Batch 128 leaves backward's convolutions enough
# time to hide most of fc1's 16 ms. A sleep does not compete for the cores. Not run under the
# sanitizers, whose instrumentation slows compute and not the link.
# Usage: overlap_test.sh SWNC PROJECT_DIR WORKDIR MPIEXEC
swnc=$1 root=$2 work=$3 mpiexec=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1

"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K -o lenet || { fail "cannot build lenet"; finish; exit; }

run() { # OPTIONS...: 30 iterations on 2 ranks over the slow link; prints images/s and rank 0's
  # allreduce line: "allreduce: B ms per iteration (...), update waited W ms of it ..."
  SWNC_TEST_LINK_NS_PER_BYTE=10 timeout 300 "$mpiexec" --oversubscribe -np 2 ./lenet --iterations 30 \
    --batch 128 --train-size 8000 --test-size 100 --threads 1 --quiet --allreduce shm "$@" |
    sed -n -e 's/.* \([0-9]*\) images\/s.*/rate \1/p' \
      -e 's/^allreduce: \([0-9.]*\) ms per iteration.*update waited \([0-9.]*\) ms.*/link \1 \2/p'
}
measure() { # OPTIONS...: the better of two runs: "RATE BUSY_MS WAITED_MS"
  for i in 1 2; do run "$@" | awk '$1 == "rate" { r = $2 } $1 == "link" { b = $2; w = $3 }
    END { print r + 0, b + 0, w + 0 }'; done | sort -n -r | head -1
}
# One round: both schedules, best of two runs each. Overlap is judged by the allreduce time it
# hides (the update waits for at most 0.6 of it overlapped, for nearly all of it after backward:
# broken overlap waits for all of it in every round) and by throughput (1.05x). A neighbour's
# load on the shared cores can slow the overlapped sums themselves (CI once measured 15.5 ms
# waited of 27.9), so a failing round is measured again, up to three rounds.
round() {
  read -r overlapped busy waited <<EOF2
$(measure)
EOF2
  read -r serial serial_busy serial_waited <<EOF2
$(measure --no-overlap)
EOF2
  verdict="$overlapped images/s (update waited $waited of $busy ms a step), not overlapped $serial images/s (waited $serial_waited of $serial_busy ms)"
  hidden=$(awk "BEGIN { print ($busy > 0 && $waited <= 0.6 * $busy && $serial_waited >= 0.9 * $serial_busy) }")
  [ "$hidden" = 1 ] && [ "$overlapped" -gt 0 ] && [ "$((overlapped * 100))" -ge "$((serial * 105))" ]
}
failures=""
passed_round=0
for attempt in 1 2 3; do
  if round; then passed_round=$attempt; break; fi
  failures="$failures
  round $attempt: $verdict"
done
if [ "$passed_round" -gt 0 ]; then
  pass
  [ -n "$failures" ] && echo "overlap held in round $passed_round after:$failures"
else
  fail "overlap over a slow link, in none of three rounds:$failures"
fi
finish
