#!/usr/bin/env python3
"""llama.cpp vs eagle2 on the same GGUF file: tokens and top-5 log-probabilities.

For each architecture (llama3, qwen2, qwen3; and with --arch the mixtures of experts mixtral and
qwen3moe) this makes a small random model with the real tokenizer (`eagle2 make-random --arch A
--tokenizer T -o A.gguf`; mixtral with LLaMA-3's tokenizer.json, qwen3moe with Qwen3's), starts llama.cpp's llama-server
on it (127.0.0.1, a free port; F32 KV cache and no flash attention, llama.cpp's full-precision
path: its CPU flash attention rounds to F16 and moves log-probs by up to ~0.01, see
docs/ARCHITECTURES.md), and checks:

  1. tokenizer: eagle2's tokenizer read from the GGUF file, eagle2's tokenizer read from the
     tokenizer.json and llama-server's /tokenize give the same ids for texts with unicode, digits,
     whitespace runs and special tokens;
  2. log-probabilities: along llama-server's own greedy completion of each prompt (n_probs=5), the
     top-5 log-probabilities it reports and eagle2's (`eagle2 logprobs --tokens PATH`) for the same
     token ids differ by at most --tolerance (0.02) at each of the first --positions (32);
  3. greedy paths: eagle2's greedy completion (`eagle2 logprobs --greedy N`) is llama-server's, or
     departs from it only where eagle2's own log-probabilities of the two choices are within
     --tie-gap (default: the tolerance; a near-tie that rounding decides), each such gap printed.

Prints one line per check and a summary per architecture (the largest difference); exits 0 when
every check passes, 1 when one fails, 77 (skipped) when llama.cpp's tools or the tokenizers are
absent or cannot run here. Only the standard library is used.

  scripts/llama-logprob-parity.py [--eagle2 build/bin/eagle2] [--arch qwen3 ...] [--dtype f32]
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77

# The tokenizer.json each architecture is made with (../shared/data/tokenizers/<name>/). Qwen2.5's
# tokenizer is not in ../shared: Qwen3's has the same byte-level BPE vocabulary, merges and
# pre-tokenizer (it adds the <think> tokens), so it stands in for qwen2.
TOKENIZERS = {"llama3": "llama3", "qwen2": "qwen3", "qwen3": "qwen3", "mixtral": "llama3",
              "qwen3moe": "qwen3"}
# make-random's extra flags per architecture: Mixtral's own vocabulary is LLaMA-2's SentencePiece
# one; here it carries LLaMA-3's byte-level BPE one (the architecture is what is compared).
EXTRA_FLAGS = {"mixtral": ["--vocab", "128256"]}

COMMON_TEXTS = [
    "Hello, world!",
    "  two leading spaces,\ttabs\t\tand\n\nnewlines \n",
    "digits 1234567 and 3.14159, 2024-05-01, 1,000,000",
    "unicode: naïve café, 日本語のテキスト, Ελληνικά, emoji 🦙🚀 and ZWJ 👩‍💻",
    "contractions: I'm, you're, they'll, it's; CAPS DON'T, We'Ve",
    "def f(x):\n    return x ** 2  # square\n",
]
SPECIAL_TEXTS = {
    "mixtral": ["<|begin_of_text|>Hi!<|eot_id|>"],
    "qwen3moe": ["<|im_start|>user\nHi!<|im_end|>\n"],
    "llama3": ["<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"],
    "qwen2": ["<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n<tool_call>x</tool_call>"],
    "qwen3": ["<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n<think>\nhm</think>"],
}
PROMPTS = ["Hello, world", "The quick brown fox", "def fibonacci(n):", "1 2 3 4 5",
           "import numpy as np", "Once upon a time", "SELECT * FROM users WHERE", "for i in range(",
           "The capital of France is", "#include <stdio.h>", "Dear Sir or Madam,", "x = [1, 2, 3]",
           "In 1969, the first", "while True:", "<html><body>", "Q: What is 2 + 2?\nA:",
           "fn main() {", "The weather today", "class Stack:", "Translate to French: cat"]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


class Server:
    """llama-server on 127.0.0.1 for one model file; stopped by close()."""

    def __init__(self, bin_dir, model, threads, log_path, kv_type, flash_attn):
        self.port = free_port()
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = bin_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        self.log = open(log_path, "w")
        # By default the F32 KV cache and attention without flash attention: llama.cpp's default
        # F16 cache rounds every key and value, and its CPU flash attention computes in F16, where
        # eagle2 keeps F32. One slot, a context that holds prompt + completion.
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "llama-server"), "-m", model, "--host", "127.0.0.1",
             "--port", str(self.port), "-t", str(threads), "-c", "512", "-np", "1",
             "-ctk", kv_type, "-ctv", kv_type, "-fa", flash_attn],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.close()
                if code == 128 + signal.SIGILL or code == -signal.SIGILL:
                    raise SkipTest("llama-server cannot run on this CPU (illegal instruction)")
                with open(log_path) as log:
                    tail = log.read()[-2000:]
                raise ServerExited(f"llama-server exited {code}:\n{tail}")
            try:
                with urllib.request.urlopen(self.url("/health"), timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"llama-server did not become ready in 120 s (log: {log_path})")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def post(self, path, body):
        req = urllib.request.Request(self.url(path), data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class SkipTest(Exception):
    pass


class ServerExited(RuntimeError):
    pass


def eagle2_ids(eagle2, source, text):
    out = run([eagle2, "tokenize", "-m", source, "-p", text]).strip()
    return [int(x) for x in out.split(",")] if out else []


def eagle2_rows(eagle2, model, args, threads):
    out = run([eagle2, "logprobs", "-m", model, "-t", str(threads)] + args)
    return [json.loads(line) for line in out.splitlines()]


def check_arch(arch, a, tmp):
    tokenizer = os.path.join(a.tokenizers, TOKENIZERS[arch], "tokenizer.json")
    model = os.path.join(tmp, f"{arch}-{a.dtype}.gguf")
    print(run([a.eagle2, "make-random", "--arch", arch, "--tokenizer", tokenizer, "-o", model,
               "--dtype", a.dtype, "--seed", str(a.seed)] + EXTRA_FLAGS.get(arch, [])).strip())
    failures = []
    # The free port is free when asked for, not necessarily when llama-server binds it (tests run
    # in parallel): a server that exits at start is started again on another port.
    for attempt in range(3):
        try:
            server = Server(a.llama_bin, model, a.threads,
                            os.path.join(tmp, f"{arch}-server.log"), a.llama_kv,
                            a.llama_flash_attn)
            break
        except ServerExited:
            if attempt == 2:
                raise
    try:
        # 1. Tokenizer.
        texts = COMMON_TEXTS[:a.texts] + SPECIAL_TEXTS[arch]
        agree = 0
        for text in texts:
            from_gguf = eagle2_ids(a.eagle2, model, text)
            from_json = eagle2_ids(a.eagle2, tokenizer, text)
            llama = server.post("/tokenize", {"content": text, "add_special": True,
                                              "parse_special": True})["tokens"]
            if from_gguf == from_json == llama:
                agree += 1
            else:
                failures.append(f"tokenize {text!r}: eagle2 GGUF {from_gguf}, eagle2 "
                                f"tokenizer.json {from_json}, llama-server {llama}")
        print(f"{arch}: tokenizer: {agree}/{len(texts)} texts give the same ids from eagle2's GGUF "
              f"vocabulary, eagle2's tokenizer.json and llama-server's /tokenize")

        # 2. and 3. Log-probabilities along llama.cpp's greedy path; eagle2's greedy path.
        worst = (0.0, "")
        paths_equal = 0
        refused = 0
        prompts = PROMPTS[:a.prompts]
        for prompt in prompts:
            ids = eagle2_ids(a.eagle2, model, prompt)
            try:
                reply = server.post("/completion", {
                    "prompt": ids, "n_predict": a.positions, "n_probs": 5, "temperature": 0,
                    "samplers": ["top_k"], "top_k": 1, "ignore_eos": True, "cache_prompt": False})
            except urllib.error.HTTPError as e:
                # llama-server answers 500 when its output parser meets text that is not valid
                # UTF-8 (a random model's completion can end inside a character): nothing to
                # compare, said so, and not counted as compared.
                print(f"{arch}: {prompt!r}: llama-server refused the completion (HTTP {e.code}); "
                      "not compared")
                refused += 1
                continue
            probs = reply["completion_probabilities"]
            path = [p["id"] for p in probs]
            if len(path) != a.positions:
                failures.append(f"{prompt!r}: llama-server generated {len(path)} tokens, not "
                                f"{a.positions}")
                continue
            rows = eagle2_rows(a.eagle2, model,
                               ["--tokens", ",".join(map(str, ids + path)), "--top", "10"],
                               a.threads)
            for j, p in enumerate(probs):
                row = rows[len(ids) - 1 + j]
                ours = {tok: lp for tok, lp in row["top"]}
                for rank, t in enumerate(p["top_logprobs"][:5]):
                    if t["id"] not in ours:
                        failures.append(f"{prompt!r} position {j}: llama.cpp's top-{rank + 1} "
                                        f"token {t['id']} is not in eagle2's top 10")
                        continue
                    diff = abs(ours[t["id"]] - t["logprob"])
                    if diff > worst[0]:
                        worst = (diff, f"{prompt!r} position {j} token {t['id']}")
                    if diff > a.tolerance:
                        failures.append(f"{prompt!r} position {j} token {t['id']}: llama.cpp "
                                        f"{t['logprob']:.6f}, eagle2 {ours[t['id']]:.6f}")
            # eagle2's own greedy path from the same prompt.
            greedy = eagle2_rows(a.eagle2, model, ["--tokens", ",".join(map(str, ids)),
                                                   "--greedy", str(a.positions), "--top", "2"],
                                 a.threads)
            ours_path = [r["next"] for r in greedy[len(ids) - 1:] if "next" in r]
            if ours_path == path:
                paths_equal += 1
                continue
            j = next(i for i, (x, y) in enumerate(zip(ours_path, path)) if x != y)
            row = rows[len(ids) - 1 + j]  # eagle2's numbers along llama.cpp's path, up to j
            ours = {tok: lp for tok, lp in row["top"]}
            gap = ours.get(ours_path[j], float("nan")) - ours.get(path[j], float("-inf"))
            note = (f"{arch}: {prompt!r}: greedy paths part at position {j}: eagle2 "
                    f"{ours_path[j]}, llama.cpp {path[j]}, {gap:.6f} apart in eagle2's log-probs")
            if gap <= (a.tolerance if a.tie_gap is None else a.tie_gap):
                print(note + " (a near-tie)")
            else:
                failures.append(note)
        print(f"{arch}: logprobs: {len(prompts) - refused} prompts x {a.positions} positions, largest "
              f"|llama.cpp - eagle2| of the top-5 log-probs {worst[0]:.2e} ({worst[1]})")
        print(f"{arch}: greedy: {paths_equal}/{len(prompts) - refused} completions identical")
    finally:
        server.close()
    for f in failures:
        print(f"FAIL {arch}: {f}")
    return not failures


def main():
    shared = os.environ.get("EAGLE2_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eagle2", default=os.path.join(ROOT, "build", "bin", "eagle2"))
    p.add_argument("--llama-bin", default=os.path.join(shared, "tools", "llama.cpp", "bin"))
    p.add_argument("--tokenizers", default=os.path.join(shared, "data", "tokenizers"))
    p.add_argument("--arch", action="append", choices=sorted(TOKENIZERS),
                   help="repeatable (default: llama3, qwen2, qwen3)")
    p.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16", "q8_0", "q4_0"])
    p.add_argument("--positions", type=int, default=32)
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument("--tie-gap", type=float, default=None,
                   help="largest log-prob gap at which greedy paths may part (default: "
                        "--tolerance)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--prompts", type=int, default=len(PROMPTS),
                   help=f"how many of the {len(PROMPTS)} prompts to complete")
    p.add_argument("--texts", type=int, default=len(COMMON_TEXTS),
                   help=f"how many of the {len(COMMON_TEXTS)} common texts to tokenize (the "
                        "special-token text is always tokenized)")
    p.add_argument("--llama-kv", default="f32", choices=["f32", "f16"],
                   help="llama-server's KV cache type (its own default: f16)")
    p.add_argument("--llama-flash-attn", default="off", choices=["off", "on", "auto"],
                   help="llama-server's -fa (its own default: auto, which is on for the CPU)")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.llama_bin, "llama-server")):
        print(f"SKIP: {a.llama_bin}/llama-server is absent (../shared/tools has no llama.cpp)")
        return SKIP
    for arch in a.arch or sorted(TOKENIZERS):
        path = os.path.join(a.tokenizers, TOKENIZERS[arch], "tokenizer.json")
        if not os.path.isfile(path):
            print(f"SKIP: {path} is absent")
            return SKIP
    if not os.path.isfile(a.eagle2):
        print(f"error: {a.eagle2} not found (build the eagle2_cli target, or pass --eagle2)")
        return 2
    tmp = tempfile.mkdtemp(prefix="eagle2-parity-")
    keep = os.environ.get("EAGLE2_PARITY_KEEP")
    ok = True
    try:
        for arch in a.arch or ["llama3", "qwen2", "qwen3"]:
            ok = check_arch(arch, a, tmp) and ok
    except SkipTest as e:
        print(f"SKIP: {e}")
        return SKIP
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
