#!/bin/sh
# CPE objects as the slave compiler makes them: every global the object defines is renamed
# slave_NAME, so the MPE side reaches kernel f as slave_f (athread_spawn, SLAVE_FUN).
# Usage: cpe_symbols.sh NM OBJCOPY IN.o OUT.o
nm=$1 objcopy=$2 in=$3 out=$4
"$nm" --defined-only -g --format=posix "$in" | awk '{ print $1, "slave_" $1 }' > "$out.syms" &&
  "$objcopy" --redefine-syms="$out.syms" "$in" "$out"
