#!/bin/sh
# An example network compiles with the verifier on, and its figures are the published ones.
# Usage: check_example.sh SWNC FILE PARAMETERS TENSORS
swnc=$1 file=$2 params=$3 tensors=$4
out=$("$swnc" --verify-each --stats "$file") || { echo "FAIL: swnc exited $?"; exit 1; }
echo "$out" | tail -6
echo "$out" | grep -qx "parameters  *$params ([0-9.]* MiB)" || { echo "FAIL: expected $params parameters"; exit 1; }
echo "$out" | grep -qx "parameter tensors  *$tensors" || { echo "FAIL: expected $tensors parameter tensors"; exit 1; }
"$swnc" --emit=ir "$file" >/dev/null || { echo "FAIL: --emit=ir"; exit 1; }
if command -v dot >/dev/null; then
  "$swnc" --emit=dot "$file" | dot -Tsvg >/dev/null || { echo "FAIL: --emit=dot is not valid Graphviz"; exit 1; }
fi
echo "ok: $file"
