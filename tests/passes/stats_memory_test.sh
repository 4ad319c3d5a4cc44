#!/bin/sh
# `swnc --stats` predicts a run's peak memory (its "memory of a run") within 10% of the peak
# resident set the program reaches, each net at the batch the benchmark runs it at with its
# default thread count (the prediction's): googlenet b8 on synthetic data, whose convolution
# workspaces and loader batches are a tenth of its memory, and lenet b64 on Fashion-MNIST,
# whose data sets are most of it. The kernels' workspace it counts is the host kernels' own
# definition (targets/host/workspace.h). Not run under the sanitizers, whose shadow memory is
# most of a process's.
# Usage: stats_memory_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"

# peak_mib COMMAND...: the peak resident set of COMMAND, in MiB
peak_mib() {
  /usr/bin/python3 -c 'import resource, subprocess, sys
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if status == 0 else -1)' "$@"
}

# within_tenth NET BATCH: --stats's prediction against a run of 3 iterations
within_tenth() {
  net=$1 batch=$2
  "$swnc" --stats -D train.batch="$batch" -D data.test_size=8 "$root/examples/$net.swn" > "$net.stats"
  grep -q "^scratch .*kernels' workspace" "$net.stats" || fail "$net: --stats counts no workspace"
  predicted=$(sed -n 's/^memory of a run *\([0-9.]*\) MiB.*/\1/p' "$net.stats")
  "$swnc" "$root/examples/$net.swn" -o "$net" || { fail "$net: does not build"; return; }
  measured=$(peak_mib "./$net" --iterations 3 --batch "$batch" --test-size 8 --quiet)
  awk "BEGIN { r = $predicted / $measured; exit !($measured > 0 && r > 0.9 && r < 1.1) }" && pass ||
    fail "$net b$batch: --stats predicts $predicted MiB, the run peaks at $measured MiB"
}
within_tenth googlenet 8
within_tenth lenet 64

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
