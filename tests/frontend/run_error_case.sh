#!/bin/sh
# One bad-input case: swnc must print exactly NAME.expected on stderr and exit 1
# (0 for warn_* cases, which only warn). The input is NAME.swn, or NAME.prototxt (a Caffe
# network). Usage: run_error_case.sh SWNC DIR NAME
swnc=$1 dir=$2 name=$3
cd "$dir" || exit 1
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
input=$name.swn
[ -f "$input" ] || input=$name.prototxt
"$swnc" --verify-each --emit=ir "$input" >/dev/null 2>"$actual"
status=$?
case $name in warn_*) want=0 ;; *) want=1 ;; esac
if [ "$status" -ne "$want" ]; then
  echo "FAIL: $input: exit status $status, expected $want"
  cat "$actual"
  exit 1
fi
if ! diff -u "$name.expected" "$actual"; then
  echo "FAIL: $input: diagnostics differ from $name.expected"
  exit 1
fi
echo "ok: $input"
