#!/bin/sh
# Every C source and header of the project is formatted as .clang-format says (clang-format
# --dry-run reports each place that differs). Usage: format_test.sh PROJECT_DIR
root=$1
cd "$root" || exit 1
command -v clang-format >/dev/null || { echo "FAIL: clang-format is not installed"; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h')
else
  files=$(find . -path ./build -prune -o -path './build-*' -prune -o -name '*.[ch]' -print)
fi
bad=0
for f in $files; do
  clang-format --dry-run --Werror "$f" 2>/dev/null || { echo "FAIL: $f is not formatted (clang-format -i $f)"; bad=$((bad + 1)); }
done
n=$(echo "$files" | wc -w)
echo "$((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
