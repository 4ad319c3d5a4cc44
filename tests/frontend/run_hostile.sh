#!/bin/sh
# A hostile input: swnc may accept or reject it (exit 0 or 1) but must not crash or hang.
# Usage: run_hostile.sh SWNC FILE
timeout 20 "$1" --verify-each --emit=ir "$2" >/dev/null 2>&1
status=$?
case $status in
  0|1) echo "ok: exit $status" ;;
  124) echo "FAIL: hung on $2"; exit 1 ;;
  *) echo "FAIL: exit $status on $2"; exit 1 ;;
esac
