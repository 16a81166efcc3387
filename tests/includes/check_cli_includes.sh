#!/usr/bin/env bash
# The CLI compiles as unity units (tools/eagle2/CMakeLists.txt): its files concatenated, so a file
# that uses a header it does not include still builds when an earlier file of its unit includes
# it, and breaks as soon as the files are regrouped. This compiles every tools/eagle2/*.cpp alone
# (syntax only, with the CLI's include path and flags) so that each keeps its own includes.
#   check_cli_includes.sh CXX SANITIZE TOOLS_DIR "INCLUDE_DIRS" "DEFINITIONS" "IMPLICIT_DIRS"
# (lists ';'-separated; the compiler's own include directories are left out of -I, as CMake does:
# -I/usr/include would break libstdc++'s #include_next).
set -euo pipefail
cxx=$1 sanitize=$2 tools=$3 include_dirs=$4 definitions=$5 implicit=";$6;"
if [[ $sanitize == 1 ]]; then
  echo "SKIP: the same sources are checked by the release build's suite"
  exit 77
fi
flags=(-std=c++20 -Wall -Wextra -Werror -fsyntax-only)
IFS=';' read -r -a dirs <<<"$include_dirs"
for d in "${dirs[@]}"; do
  [[ -n $d && $implicit != *";$d;"* ]] && flags+=("-I$d")
done
IFS=';' read -r -a defs <<<"$definitions"
for d in "${defs[@]}"; do [[ -n $d ]] && flags+=("-D$d"); done

files=("$tools"/*.cpp)
((${#files[@]} >= 10)) || { echo "FAIL: only ${#files[@]} files in $tools" >&2; exit 1; }
printf '%s\n' "${files[@]}" | xargs -P 2 -I{} sh -c \
  '"$0" "$@" || { echo "FAIL: $1 does not compile on its own (include what it uses)" >&2; exit 255; }' \
  "$cxx" {} "${flags[@]}" || exit 1
echo "ok: ${#files[@]} files compile on their own"
