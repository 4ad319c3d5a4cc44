#!/bin/sh
# Overlap pays: over a deliberately slow link (SWNC_TEST_LINK_NS_PER_BYTE, a test-only sleep of
# 10 ns a byte in every allreduce: about 17 ms per iteration for lenet's 1.7 MB against ~25 ms of
# compute at batch 128), 2 ranks of lenet whose buckets are summed while backward runs are
# measurably faster than summing them after it (about 1.4x; the test asks for 1.15x, the best of
# two runs each). Batch 128 leaves backward's convolutions enough time to hide most of fc1's
# 16 ms: at batch 64 on an idle machine only 4 ms of it hid (1.13x), and a loaded machine, whose
# slower compute hides more, passed. A sleep does not compete for the cores. Not run under the
# sanitizers, whose instrumentation slows compute and not the link.
# Usage: overlap_test.sh SWNC PROJECT_DIR WORKDIR MPIEXEC
swnc=$1 root=$2 work=$3 mpiexec=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1

"$swnc" "$root/examples/lenet.swn" --fusion-threshold=64K -o lenet || fail "cannot build lenet"

rate() { # OPTIONS...: images/s of 30 iterations on 2 ranks over the slow link
  SWNC_TEST_LINK_NS_PER_BYTE=10 timeout 300 "$mpiexec" --oversubscribe -np 2 ./lenet --iterations 30 \
    --batch 128 --train-size 8000 --test-size 100 --threads 1 --quiet --allreduce shm "$@" |
    sed -n 's/.* \([0-9]*\) images\/s.*/\1/p'
}
best() { # OPTIONS...: the higher images/s of two runs
  a=$(rate "$@") b=$(rate "$@")
  [ "${a:-0}" -ge "${b:-0}" ] && echo "${a:-0}" || echo "$b"
}
overlapped=$(best) serial=$(best --no-overlap)
if [ "$overlapped" -gt 0 ] && [ "$((overlapped * 100))" -ge "$((serial * 115))" ]; then
  pass
else
  fail "overlap over a slow link: $overlapped images/s, not overlapped $serial"
fi
finish
