#!/usr/bin/env bash
# Builds the Python source corpus for the bundled default model (issue: training, bundled model)
# from named, version-pinned Debian 12 packages, without installing them:
#   OUT/train.txt          training text: the kept .py files, each followed by a blank line
#   OUT/heldout.txt        whole files held out for the loss (about 2% of files, by path hash)
#   OUT/heldout_prompts.jsonl  benchmark prompts: the first 12 lines of each held-out file
#   OUT/MANIFEST.txt       package versions, file counts, sizes, sha256 of the outputs
# Usage: scripts/make_code_corpus.sh OUT_DIR
set -euo pipefail
out=${1:?usage: scripts/make_code_corpus.sh OUT_DIR}
# Pinned versions (Debian 12 "bookworm"); apt must still serve them.
packages=(
  "libpython3.11-stdlib=3.11.2-6+deb12u8"
  "python3-sympy=1.11.1-1"
  "python3-numpy=1:1.24.2-1+deb12u1"
)
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  for p in "${packages[@]}"; do
    if ! apt-get download -q "$p" >/dev/null 2>&1; then
      echo "error: cannot download $p (run apt-get update; if the version is gone from the" >&2
      echo "archive, update the pin here and in models/README.md)" >&2
      exit 1
    fi
  done
  for deb in *.deb; do dpkg-deb -x "$deb" root; done
)
# Deterministic order and split: sort paths; hold out a file when the first byte of the sha256 of
# its path (relative to the package root) is below 5 (5/256, about 2%).
: >"$out/train.txt"
: >"$out/heldout.txt"
: >"$out/heldout_prompts.jsonl"
n_train=0
n_held=0
while IFS= read -r f; do
  rel=${f#"$work"/root/}
  h=$(printf '%s' "$rel" | sha256sum | cut -c1-2)
  if ((16#$h < 5)); then
    cat "$f" >>"$out/heldout.txt"
    printf '\n\n' >>"$out/heldout.txt"
    head -n 12 "$f" | python3 -c 'import json,sys; print(json.dumps({"text": sys.stdin.read()}))' \
      >>"$out/heldout_prompts.jsonl"
    n_held=$((n_held + 1))
  else
    cat "$f" >>"$out/train.txt"
    printf '\n\n' >>"$out/train.txt"
    n_train=$((n_train + 1))
  fi
done < <(find "$work/root" -name '*.py' -type f -size +0 | LC_ALL=C sort)
{
  echo "packages: ${packages[*]}"
  echo "train files: $n_train ($(wc -c <"$out/train.txt") bytes)"
  echo "held-out files: $n_held ($(wc -c <"$out/heldout.txt") bytes)"
  (cd "$out" && sha256sum train.txt heldout.txt heldout_prompts.jsonl)
} | tee "$out/MANIFEST.txt"
