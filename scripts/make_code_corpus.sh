#!/usr/bin/env bash
# Builds the Python source corpus for the bundled default model (issue: training, bundled model)
# from named, version-pinned Debian 12 packages, without installing them:
#   OUT/train/NNNNN.py     training text: the kept .py files, one document each (train-lm puts a
#                          BOS in front of every file of a folder)
#   OUT/heldout/NNNNN.py   whole files held out for the loss (about 2% of files, by path hash)
#   OUT/heldout_prompts.jsonl  benchmark prompts: 12-line windows of the held-out files (lines
#                          1-12, 61-72, ... at most 4 per file; windows with under 4 non-blank
#                          lines are skipped), in file order
#   OUT/train_prompts.jsonl    the same windows of the training files (no limit per file), in a
#                          fixed pseudo-random order (by sha256 of file and line): prompts for
#                          train-head's self-distillation
#   OUT/MANIFEST.txt       package versions, file counts, sizes, the source path of every file,
#                          and a sha256 over all outputs
# Usage: scripts/make_code_corpus.sh OUT_DIR
set -euo pipefail
if ! command -v python3 >/dev/null; then
  echo "error: python3 is needed to write the prompt files (apt-get install python3)" >&2
  exit 1
fi
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
: >"$work/files.txt"
n_train=0
n_held=0
while IFS= read -r f; do
  rel=${f#"$work"/root/}
  h=$(printf '%s' "$rel" | sha256sum | cut -c1-2)
  if ((16#$h < 5)); then
    name=heldout/$(printf '%05d' "$n_held").py
    cp "$f" "$out/$name"
    n_held=$((n_held + 1))
  else
    name=train/$(printf '%05d' "$n_train").py
    cp "$f" "$out/$name"
    n_train=$((n_train + 1))
  fi
  printf '%s\t%s\n' "$name" "$rel" >>"$work/files.txt"
done < <(find "$work/root" -name '*.py' -type f -size +0 | LC_ALL=C sort)
python3 - "$out" <<'PY'
import hashlib, json, os, sys
out = sys.argv[1]
def windows(path, limit):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    got = []
    for start in range(0, len(lines), 60):
        w = lines[start:start + 12]
        if sum(1 for l in w if l.strip()) >= 4:
            got.append((start, "\n".join(w) + "\n"))
        if limit and len(got) == limit:
            break
    return got
for split, limit, shuffle in (("heldout", 4, False), ("train", 0, True)):
    rows = []
    for name in sorted(os.listdir(os.path.join(out, split))):
        for start, text in windows(os.path.join(out, split, name), limit):
            key = hashlib.sha256(f"{split}/{name}:{start}".encode()).hexdigest()
            rows.append((key if shuffle else "", text))
    if shuffle:
        rows.sort(key=lambda r: r[0])
    with open(os.path.join(out, f"{split}_prompts.jsonl"), "w", encoding="utf-8") as f:
        for _, text in rows:
            f.write(json.dumps({"text": text}) + "\n")
PY
{
  echo "packages: ${packages[*]}"
  echo "train files: $n_train ($(cat "$out"/train/*.py | wc -c) bytes)"
  echo "held-out files: $n_held ($(cat "$out"/heldout/*.py | wc -c) bytes)"
  echo "prompts: $(wc -l <"$out/heldout_prompts.jsonl") held out, $(wc -l <"$out/train_prompts.jsonl") for training"
  echo "sha256 of all outputs: $(cd "$out" && find train heldout heldout_prompts.jsonl train_prompts.jsonl -type f |
    LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
  echo "files (output<TAB>package path):"
  cat "$work/files.txt"
} | tee "$out/MANIFEST.txt"
