#!/bin/sh
# The allreduce benchmark at 2, 4 and 8 ranks on this machine (more ranks than cores:
# --oversubscribe), 4 B to 256 MiB. Usage: bench/allreduce.sh [BUILD_DIR] [MAX_BYTES]
build=${1:-build} max=${2:-268435456}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 2 4 8; do
  mpirun --oversubscribe -np $np "$build/bench/allreduce" --max-size "$max" || exit 1
  echo
done
