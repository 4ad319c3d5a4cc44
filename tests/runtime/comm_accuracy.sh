#!/bin/sh
# Compressed gradients keep LeNet's accuracy: 3 epochs on Fashion-MNIST on 4 ranks (batch 16
# each, the global batch 64 of examples/lenet.swn) with --comm-precision fp16 reach the fp32
# run's test accuracy within 0.3 points, and send half the bytes (the summary line); with
# --sparse 10% (the top tenth of the chunks, one epoch of warm-up) within 1 point, and send less
# than a quarter of the bytes (the norms and warm-up's larger share included). Three epochs,
# not the example's five: the three runs were the suite's longest test (321 s of its 510 on 2
# cores), and the gaps were no wider at the third epoch than at the fifth (on an AVX-512 Xeon:
# fp16 0.10 and 0.05 points, sparse 0.43 and 0.68).
# Usage: comm_accuracy.sh SWNC PROJECT_DIR WORKDIR MPIEXEC
swnc=$1 root=$2 work=$3 mpiexec=$4
mkdir -p "$work" && cd "$work" || exit 1
. "$root/tests/lib/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
"$swnc" "$root/examples/lenet.swn" --no-fold-gradients -o lenet || fail "cannot build lenet"
run() { # NAME OPTIONS...: final test accuracy in percent, and the summary line in NAME.out
  name=$1; shift
  timeout 1200 "$mpiexec" --oversubscribe -np 4 ./lenet --batch 16 --epochs 3 --threads 1 \
    --display 1000 --log "$name.json" "$@" > "$name.out" || { fail "$name: training failed"; return; }
  grep '"test"' "$name.json" | tail -1 | sed 's/.*"accuracy":\([0-9.]*\).*/\1/'
}
fp32=$(run fp32 --allreduce topo) fp16=$(run fp16 --allreduce topo --comm-precision fp16)
sparse=$(run sparse --allreduce topo --sparse 10%)
echo "test accuracy after 3 epochs on 4 ranks: fp32 $fp32, fp16 $fp16, sparse 10% $sparse"
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($fp32 - $fp16) <= 0.003 else 1)" && pass ||
  fail "fp16 reaches $fp16, fp32 $fp32: more than 0.3 points apart"
sent() { sed -n 's/.*; \([0-9.]*\) MB sent per iteration.*/\1/p' "$1.out"; }
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($(sent fp16) * 2 - $(sent fp32)) < 0.01 else 1)" &&
  pass || fail "fp16 sent $(sent fp16) MB per iteration, fp32 $(sent fp32)"
/usr/bin/python3 -c "import sys; sys.exit(0 if abs($fp32 - $sparse) <= 0.01 else 1)" && pass ||
  fail "sparse 10% reaches $sparse, fp32 $fp32: more than 1 point apart"
/usr/bin/python3 -c "import sys; sys.exit(0 if $(sent sparse) * 4 < $(sent fp32) else 1)" &&
  pass || fail "sparse 10% sent $(sent sparse) MB per iteration, fp32 $(sent fp32)"
finish
