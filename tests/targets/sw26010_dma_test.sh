#!/bin/sh
# The sw26010 DMA model against the published DMA experiments (bench/sw26010_dma runs them as
# emulator kernels and prices their counters): every row within 15% of the published rate but
# the four docs/targets.md names (8-byte copy and triad requests, copy at 128 B, triad at
# 256 B), and those within the bounds it states. Guards the fitted constants (cost/model.c).
# Usage: sw26010_dma_test.sh PROJECT_DIR SW26010_DMA
root=$1 bench=$2
. "$root/tests/lib/lib.sh"

"$bench" > dma.txt || fail "sw26010_dma failed"
[ "$(grep -c 'x$' dma.txt)" -eq 33 ] && pass || fail "not 33 rows: $(cat dma.txt)"
bad=$(awk 'NR > 1 {
  ratio = $NF; sub("x", "", ratio); size = $(NF - 4); block = $(NF - 3)
  named = ($1 == "STREAM" && (size == 8 || ($2 == "copy" && size == 128) || ($2 == "triad" && size == 256)))
  low = named ? 0.5 : 1 / 1.15; high = named ? 1.2 : 1.15
  if (ratio < low || ratio > high) print }' dma.txt)
[ -z "$bad" ] && pass || fail "model outside the documented bounds: $bad"
finish
