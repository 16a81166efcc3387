#!/usr/bin/env bash
# Builds the Python source corpus for the bundled default model (issue: training, bundled model)
# from named, version-pinned Debian 12 packages, without installing them:
#   OUT/train/NNNNN.py     training text: the kept .py files, one document each (train-lm puts a
#                          BOS in front of every file of a folder)
#   OUT/heldout/NNNNN.py   whole files held out for the loss (about 2% of files, by path hash)
#   OUT/heldout_prompts.jsonl  benchmark prompts: the first 12 lines of each held-out file
#   OUT/MANIFEST.txt       package versions, file counts, sizes, the source path of every file,
#                          and a sha256 over all outputs
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
rm -rf "$out/train" "$out/heldout"
mkdir -p "$out/train" "$out/heldout"
: >"$out/heldout_prompts.jsonl"
: >"$work/files.txt"
n_train=0
n_held=0
while IFS= read -r f; do
  rel=${f#"$work"/root/}
  h=$(printf '%s' "$rel" | sha256sum | cut -c1-2)
  if ((16#$h < 5)); then
    name=heldout/$(printf '%05d' "$n_held").py
    cp "$f" "$out/$name"
    head -n 12 "$f" | python3 -c 'import json,sys; print(json.dumps({"text": sys.stdin.read()}))' \
      >>"$out/heldout_prompts.jsonl"
    n_held=$((n_held + 1))
  else
    name=train/$(printf '%05d' "$n_train").py
    cp "$f" "$out/$name"
    n_train=$((n_train + 1))
  fi
  printf '%s\t%s\n' "$name" "$rel" >>"$work/files.txt"
done < <(find "$work/root" -name '*.py' -type f -size +0 | LC_ALL=C sort)
{
  echo "packages: ${packages[*]}"
  echo "train files: $n_train ($(cat "$out"/train/*.py | wc -c) bytes)"
  echo "held-out files: $n_held ($(cat "$out"/heldout/*.py | wc -c) bytes)"
  echo "sha256 of all outputs: $(cd "$out" && find train heldout heldout_prompts.jsonl -type f |
    LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
  echo "files (output<TAB>package path):"
  cat "$work/files.txt"
} | tee "$out/MANIFEST.txt"
