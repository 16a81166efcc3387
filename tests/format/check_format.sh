#!/usr/bin/env bash
# Every C++ file in git (*.cpp, *.h) is formatted as .clang-format says, so that a change shows
# only what it changes. Fix with: git ls-files '*.cpp' '*.h' | xargs clang-format -i
#   check_format.sh SOURCE_DIR SANITIZE
# Skipped (77) where clang-format or git is missing, outside a git checkout, and in the sanitizer
# build (the same sources are checked by the release build's suite).
set -euo pipefail
src=$1 sanitize=$2
if [[ $sanitize == 1 ]]; then
  echo "SKIP: the same sources are checked by the release build's suite"
  exit 77
fi
command -v clang-format >/dev/null || {
  echo "SKIP: clang-format not found (scripts/install-test-deps.sh installs it)"
  exit 77
}
command -v git >/dev/null || { echo "SKIP: git not found"; exit 77; }
cd "$src"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: $src is not a git checkout"; exit 77; }

mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
((${#files[@]} >= 100)) || { echo "FAIL: only ${#files[@]} C++ files in git" >&2; exit 1; }
# One clang-format run for all files; it names each file that differs in its "error:" lines.
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 clang-format --dry-run --Werror 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*clang-format.*/\1/p' | sort -u)
if ((${#bad[@]})); then
  echo "FAIL: ${#bad[@]} file(s) not clang-format clean (clang-format -i FILE fixes each):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "ok: ${#files[@]} files clang-format clean ($(clang-format --version | head -n 1))"
