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

# The losses of a JSON log, one per line.
losses() { grep '"train"' "$1" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
