#!/bin/sh
# swnc-plot on real output: a LeNet run's JSON logs and --profile=FILE, swnc-sim's prediction
# from its --comm-profile, and bench/allreduce on two ranks. Each picture must be a valid PNG of
# the expected size or an SVG, and not trivial; bad inputs are refused with status 1 or 2.
#   plot_test.sh SWNC ROOT BUILD
swnc=$1 root=$2 build=$3
. "$root/tests/lib/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
plot=$root/tools/swnc-plot

"$plot" --help | head -1 | grep -q "^usage: swnc-plot curves" && pass || fail "swnc-plot --help: $("$plot" --help | head -1)"

# png_size FILE: "WIDTHxHEIGHT" from a PNG's header, or nothing if it is not a PNG.
png_size() {
  /usr/bin/python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(24)
if d[:8] == b"\x89PNG\r\n\x1a\n": print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1"
}

# picture WHAT FILE SIZE: a PNG of SIZE pixels, at least 20 KB (axes, lines and labels).
picture() {
  got=$(png_size "$2")
  [ "$got" = "$3" ] && pass || fail "$1: '$2' is '$got', not a ${3} PNG"
  [ "$(wc -c <"$2")" -gt 20000 ] && pass || fail "$1: '$2' is only $(wc -c <"$2") bytes"
}

"$swnc" "$root/examples/lenet.swn" -D test_interval=20 -o lenet || exit 1
./lenet --iterations 60 --train-size 2000 --test-size 200 --display 5 --log a.json --quiet \
  --profile=profile.json --comm-profile comm.prof >/dev/null || fail "run lenet"
./lenet --iterations 60 --train-size 2000 --test-size 200 --display 5 --batch 32 --log b.json \
  --quiet >/dev/null || fail "run lenet at batch 32"
"$plot" curves a.json b.json --label "batch 64" --label "batch 32" -o curves.png && pass ||
  fail "curves"
picture curves curves.png 1650x1125
"$plot" curves a.json -o curves.svg && grep -q "<svg" curves.svg && pass || fail "curves as SVG"
"$plot" profile profile.json -o profile.png && pass || fail "profile"
picture profile profile.png "$(png_size profile.png | grep '^1500x')"
"$build/tools/swnc-sim" --profile comm.prof >sim.txt && "$plot" scaling sim.txt -o scaling.png &&
  pass || fail "scaling"
picture scaling scaling.png 1650x675
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
  "$build/bench/allreduce" --max-size 65536 >allreduce.txt 2>&1
"$plot" allreduce allreduce.txt -o allreduce.png && pass || fail "allreduce"
picture allreduce allreduce.png 1200x750

# Bad inputs: a file that is not a log, a missing file, a wrong output kind.
echo "not json" >bad.json
"$plot" curves bad.json -o x.png 2>err.txt; [ $? -eq 1 ] && grep -q "bad.json:1: not a JSON line" err.txt &&
  pass || fail "a bad log: $(cat err.txt)"
"$plot" profile none.json -o x.png 2>err.txt; [ $? -eq 1 ] && grep -q "cannot read 'none.json'" err.txt &&
  pass || fail "a missing profile: $(cat err.txt)"
"$plot" curves a.json -o x.jpg 2>err.txt; [ $? -eq 2 ] && pass || fail "a .jpg output: $(cat err.txt)"
"$plot" allreduce a.json -o x.png 2>err.txt; [ $? -eq 1 ] && pass || fail "a log as allreduce output"
[ ! -e x.png ] && pass || fail "a failed plot left x.png"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
