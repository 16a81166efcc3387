#!/usr/bin/env bash
# The README as a user follows it (issue 46: "every command in it run by a test or by the
# quickstart"). Usage: run_readme_blocks.sh SOURCE_DIR EAGLE2_CLI [SANITIZER_BUILD (1: the blocks
# are not run, only the checks of the text)]
#
# 1. README.md is at most 250 lines.
# 2. Every fenced block whose info string is `bash runnable` runs, in its own empty folder where
#    build/bin/eagle2 is the CLI under test and models/ the bundled models, as
#    `bash -euo pipefail`: a failing command fails the test (the block is printed with its output).
#    The README's two big commands, `bash scripts/quickstart.sh` and `bash scripts/test.sh`, are in
#    a plain `sh` block and not run here: the quickstart is what CI's first stage does, and
#    test.sh is the suite this test is part of. The results table's reproduce commands are the
#    benchmarks themselves (7-40 quiet minutes each; tests/cli/test_*_scripts.cpp check their
#    scripts on small inputs), and the C++ snippet is what tests/install/test_install.sh builds;
#    here every `build/bin/eagle2 COMMAND` the README names must answer --help, and every
#    `scripts/*.sh` it names must exist and parse (bash -n).
# 3. Relative links in README.md, CONTRIBUTING.md, models/README.md and docs/**/*.md resolve;
#    every folder under docs/bench/ that a tracked text names exists (a git-history reference
#    `136a469:docs/bench/...` aside); no file or folder in docs/ is named after an issue or a
#    session.
# Exit 77 (skipped) only when curl, which the README's server block uses, is missing.
set -uo pipefail
src=$1
cli=$2
sanitizer_build=${3:-0}
readme=$src/README.md
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

lines=$(wc -l < "$readme")
if ((lines > 250)); then fail "README.md has $lines lines (at most 250)"; fi
echo "README.md: $lines lines"

if ! command -v curl > /dev/null; then
  echo "SKIP: curl not found (scripts/install-deps.sh installs it)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/eagle2-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Extract the runnable blocks: block N's lines go to $work/blockN.sh.
awk -v dir="$work" '
  /^```bash runnable[[:space:]]*$/ { n++; inside = 1; file = dir "/block" n ".sh"; printf "" > file; next }
  inside && /^```[[:space:]]*$/ { inside = 0; close(file); next }
  inside { print > file }
  END { if (inside) { print "unterminated block " n > "/dev/stderr"; exit 1 } }
' "$readme" || fail "README.md: a runnable block is not closed"
blocks=$(find "$work" -maxdepth 1 -name 'block*.sh' | wc -l)
if ((blocks < 5)); then fail "README.md has $blocks runnable blocks (the five tasks need at least 5)"; fi

if [[ $sanitizer_build == 1 ]]; then
  echo "sanitizer build: the $blocks runnable blocks run in the release pass only"
  blocks_to_run=0
else
  blocks_to_run=$blocks
fi
for ((i = 1; i <= blocks_to_run; i++)); do
  dir=$work/run$i
  mkdir -p "$dir/build/bin"
  ln -s "$cli" "$dir/build/bin/eagle2"
  ln -s "$src/models" "$dir/models"
  echo "--- block $i: $(head -1 "$work/block$i.sh")"
  # A generous limit that only catches a hang (a server that never answers). timeout runs the
  # block in a process group of its own (its pid): killing the group afterwards ends what a failed
  # block left running in the background (a server).
  (cd "$dir" && exec timeout 300 bash -euo pipefail "$work/block$i.sh") > "$work/out$i.txt" 2>&1 &
  pid=$!
  wait "$pid"
  status=$?
  kill -- -"$pid" 2> /dev/null
  if ((status == 0)); then
    echo "ok"
  else
    fail "README.md runnable block $i exited with an error:"
    sed 's/^/    | /' "$work/block$i.sh"
    echo "  output:"
    tail -20 "$work/out$i.txt" | sed 's/^/    > /'
  fi
done

# Every command and script the README names, runnable block or not.
cd "$src" || exit 1
for command in $(grep -oE 'build/bin/eagle2 [a-z][a-z-]*' README.md | awk '{print $2}' | sort -u); do
  "$cli" "$command" --help > /dev/null 2>&1 || fail "README.md names 'eagle2 $command', which has no --help"
done
for script in $(grep -oE 'scripts/[A-Za-z0-9_-]+\.sh' README.md | sort -u); do
  bash -n "$script" 2> /dev/null || fail "README.md names $script, which is missing or does not parse"
done

# Links between the docs.
for f in README.md CONTRIBUTING.md models/README.md $(find docs -name '*.md' | sort); do
  while IFS= read -r target; do
    case $target in http:* | https:* | mailto:* | '#'* | '') continue ;; esac
    path=${target%%#*}
    [[ -e "$(dirname "$f")/$path" ]] || fail "$f: broken link ($target)"
  done < <(grep -o '\]([^)[:space:]]*)' "$f" | sed 's/^](//; s/)$//')
done
while IFS= read -r named; do
  [[ -e $named ]] || fail "docs/bench folder or file named but missing: $named"
done < <(grep -rhoE '(136a469:)?docs/bench/[A-Za-z0-9_.-]+' README.md CONTRIBUTING.md models docs \
           scripts src tests bench tools --include='*.md' --include='*.sh' --include='*.py' \
           --include='*.cpp' --include='*.h' --include='*.txt' | grep -v '^136a469:' | sort -u)
while IFS= read -r named; do
  fail "docs/ has a file named after an issue or a session: $named"
done < <(find docs -iname '*issue*' -o -iname '*session*' -o -iname '*progress*' \
           -o -regex '.*[-_]s[0-9]+\([-/._].*\)?' \
           -o -regex '.*[-_]k[0-9][0-9][a-z]?\([-/._].*\)?')

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "$blocks_to_run of $blocks runnable blocks ran; links resolve"
