# Helpers shared by the shell tests: counting, expected failures, and the closing line
# ("N passed, N failed") that ctest's log and CI read.
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_error DESCRIPTION TEXT COMMAND...: exit status 1 and TEXT on standard error.
expect_error() {
  what=$1 text=$2; shift 2
  "$@" >out.txt 2>err.txt; status=$?
  if [ "$status" -ne 1 ]; then fail "$what: exit $status, expected 1"; cat err.txt; return; fi
  if grep -qF -- "$text" err.txt; then pass; else fail "$what: '$text' not in: $(cat err.txt)"; fi
}

# Iterations of the runs the tests compare loss by loss: 20, or SWNC_TEST_ITERATIONS (the
# instrumented build sets 5 for its longest tests, whose runs are several times slower there).
iterations=${SWNC_TEST_ITERATIONS:-20}

# The losses of a JSON log, one per line.
losses() { grep '"train"' "$1" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }

# worst_difference A.json B.json [COUNT]: the largest relative difference of their training
# losses, of which there must be COUNT ($iterations).
worst_difference() {
  losses "$1" > a.txt; losses "$2" > b.txt
  paste a.txt b.txt | awk -v count="${3:-$iterations}" '{ d = ($1 - $2) / $1; if (d < 0) d = -d; if (d > w) w = d; n++ }
                                              END { if (n != count) print "count" n; else print w + 0 }'
}

# same_losses WHAT A.json B.json [COUNT [TOLERANCE]]: COUNT ($iterations) training losses each,
# equal to a relative TOLERANCE (1e-4).
same_losses() {
  worst=$(worst_difference "$2" "$3" "$4")
  case $worst in
    count*) fail "$1: $worst losses, not ${4:-$iterations}" ;;
    *) if awk "BEGIN { exit !($worst <= ${5:-1e-4}) }"; then pass; else fail "$1: losses differ by $worst"; fi ;;
  esac
}

# close_losses WHAT A.json B.json: $iterations training losses each, equal to a relative 1e-5.
close_losses() { same_losses "$1" "$2" "$3" "$iterations" 1e-5; }

# per_image FILE.ir: the training plan's words per image in an --emit=ir dump.
per_image() { sed -n 's/^  train: per-image \([0-9]*\) words.*/\1/p' "$1"; }

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
