#!/bin/sh
# The README's mpirun lines run as written on a 2-core machine (as root, with the environment
# the README names), each cut short by options appended after it.
#   readme_test.sh SWNC PROJECT_DIR WORKDIR
swnc=$1 root=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$swnc" "$root/examples/lenet.swn" -o lenet || { echo "FAIL: cannot build lenet"; exit 1; }
grep '^    mpirun .* ./lenet' "$root/README.md" | sed 's/ *#.*//' > lines.txt
[ "$(wc -l < lines.txt)" -ge 3 ] && pass || fail "the README's mpirun lines: $(cat lines.txt)"
while read -r line; do
  sh -c "$line --iterations 2 --train-size 512 --test-size 64 --threads 1 --quiet" </dev/null >out.txt 2>&1 &&
    grep -q "^trained 2 iterations" out.txt && pass || fail "$line: $(tail -3 out.txt)"
done < lines.txt
finish
