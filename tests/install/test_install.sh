#!/usr/bin/env bash
# The installed library as a user gets it (docs/LIBRARY.md):
#   test_install.sh BUILD_DIR SOURCE_DIR CMAKE CXX SANITIZE CLI MODEL HEAD
# installs BUILD_DIR to a fresh temporary prefix; checks every public header is there and compiles
# on its own against that prefix alone; builds examples/ (copied out of the tree) as a project of
# its own with find_package(eagle2) from the prefix and runs it on the bundled model; compiles the
# batch example with `pkg-config --cflags --libs eagle2` and runs that too. Both runs must print
# what `eagle2 generate` prints.
set -euo pipefail
build=$1 source=$2 cmake=$3 cxx=$4 sanitize=$5 cli=$6 model=$7 head=$8

if [[ $sanitize == 1 ]]; then
  # The installed archives would carry ASan/UBSan references that a plain consumer cannot link
  # without the same -fsanitize flags; the release pass (scripts/test.sh) runs this test.
  echo "SKIP: install test in a sanitizer build (the release build's suite runs it)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/eagle2-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "--- $*"; }

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  fail "cmake --install: $(cat "$work/install.log")"

step "every public header installed, and each compiles alone against the prefix"
headers=()
for h in "$source"/include/eagle2/*.h; do
  name=eagle2/$(basename "$h")
  [[ -f $prefix/include/$name ]] || fail "$name is not installed under $prefix/include"
  headers+=("$name")
done
((${#headers[@]} >= 10)) || fail "only ${#headers[@]} public headers found in $source/include"
# Only the prefix's include/ on the path: a header that needs something of src/ (or forgets a
# standard header it uses) fails here.
printf '%s\n' "${headers[@]}" | xargs -P 2 -I{} sh -c \
  'printf "#include \"%s\"\n" "$1" | "$2" -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$3" -x c++ - ||
   { echo "FAIL: $1 does not compile on its own against the installed headers" >&2; exit 255; }' \
  sh {} "$cxx" "$prefix/include" || exit 1
for f in eagle2Config.cmake eagle2ConfigVersion.cmake eagle2Targets.cmake; do
  [[ -n $(find "$prefix" -path "*/cmake/eagle2/$f") ]] || fail "no $f under $prefix"
done

step "examples/ as a project of its own: find_package(eagle2) from the prefix"
cp -r "$source/examples" "$work/examples"  # nothing in it can reach back into the source tree
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
"$cmake" -S "$work/examples" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$work/configure.log" 2>&1 ||
  fail "configuring examples/ against the installed package: $(cat "$work/configure.log")"
found=$(sed -n 's/^eagle2_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package(eagle2) found '$found', not the prefix's package"
echo "eagle2_DIR=$found"
# The version file: this minor version is found; another minor version is not, older or newer
# (0.x: minor versions may change the API, docs/LIBRARY.md "Stability").
version=$(sed -n 's/^project(eagle2cpp VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
[[ $version =~ ^([0-9]+)\.([0-9]+) ]] || fail "no project version in $source/CMakeLists.txt"
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
refused=("$major.$((minor + 1))" "$((major + 1)).0")
((minor > 0)) && refused+=("$major.$((minor - 1))")
mkdir "$work/version-check"
{
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(version_check LANGUAGES CXX)\n'
  for v in "${refused[@]}"; do
    printf 'find_package(eagle2 %s CONFIG QUIET)\n' "$v"
    printf 'if(eagle2_FOUND)\n  message(FATAL_ERROR "find_package(eagle2 %s) accepted ${eagle2_VERSION}")\nendif()\n' "$v"
  done
  printf 'find_package(eagle2 %s CONFIG REQUIRED)\n' "$major.$minor"
} >"$work/version-check/CMakeLists.txt"
"$cmake" -S "$work/version-check" -B "$work/version-check/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" >"$work/version.log" 2>&1 ||
  fail "the package's version check: $(cat "$work/version.log")"
"$cmake" --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
  fail "building examples/ against the installed package: $(cat "$work/build.log")"

prompt=$'def fibonacci(n):\n'
n=24
"$cli" generate -m "$model" -p "$prompt" -n $n >"$work/expected" 2>"$work/cli.err" ||
  fail "eagle2 generate: $(cat "$work/cli.err")"
"$work/build/speculative_generate" "$model" "$head" "$prompt" $n >"$work/actual" 2>"$work/err" ||
  fail "the installed-package build of speculative_generate: $(cat "$work/err")"
cmp "$work/expected" "$work/actual" || fail "speculative_generate (find_package build) differs"
cat "$work/err"

# The same installed program on stories260K and its EAGLE head from ../shared (the issue's model),
# where that folder is present.
stories=$source/../shared/data/models
if [[ -d $stories/stories260K-hf && -d $stories/stories260K-eagle-head ]]; then
  "$cli" generate -m "$stories/stories260K-hf" -p "Once upon a time" -n $n >"$work/expected260" \
    2>"$work/cli.err" || fail "eagle2 generate on stories260K: $(cat "$work/cli.err")"
  "$work/build/speculative_generate" "$stories/stories260K-hf" "$stories/stories260K-eagle-head" \
    "Once upon a time" $n >"$work/actual260" 2>"$work/err" ||
    fail "speculative_generate on stories260K: $(cat "$work/err")"
  cmp "$work/expected260" "$work/actual260" || fail "speculative_generate differs on stories260K"
  echo "stories260K: the installed program's text is the CLI's"
else
  echo "skipped the stories260K run: $stories/stories260K-hf not found"
fi

step "pkg-config --cflags --libs eagle2"
if ! command -v pkg-config >/dev/null; then
  echo "skipped: pkg-config not found (scripts/install-deps.sh installs it)"
  echo "ok (without the pkg-config part)"
  exit 0
fi
pc_dir=$(dirname "$(find "$prefix" -name eagle2.pc -path '*/pkgconfig/*' | head -1)")
[[ -f $pc_dir/eagle2.pc ]] || fail "no pkgconfig/eagle2.pc under $prefix"
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs eagle2) ||
  fail "pkg-config cannot read $pc_dir/eagle2.pc"
echo "pkg-config: $flags"
# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++20 -O1 "$work/examples/batch_generate.cpp" -o "$work/batch_generate" $flags \
  >"$work/pc-build.log" 2>&1 || fail "compiling with pkg-config's flags: $(cat "$work/pc-build.log")"
"$work/batch_generate" "$model" "$head" $n "$prompt" >"$work/actual" 2>"$work/err" ||
  fail "the pkg-config build of batch_generate: $(cat "$work/err")"
cmp "$work/expected" "$work/actual" || fail "batch_generate (pkg-config build) differs"
echo "ok"
