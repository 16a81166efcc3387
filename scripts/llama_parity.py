#!/usr/bin/env python3
"""Parity of eagle2 with llama.cpp on the same GGUF files (issue 13; docs/PARITY.md).

For every GGUF file (default: all of ../shared/data/gguf):
  1. tokenization: `eagle2 tokenize` gives llama-server's /tokenize ids for every prompt;
  2. greedy text: `eagle2 generate -m FILE -p PROMPT -n N` (no other flag) prints what
     `llama-completion --temp 0 --samplers top_k --top-k 1 --ignore-eos` prints, for --limit code
     prompts. Where the texts part, llama.cpp's own top-1/top-2 log-prob gap at that token (from
     llama-server's n_probs along llama-completion's path) must be below --gap: llama.cpp itself
     flips such positions between its flash-attention and KV-cache settings. Every divergence is
     printed with its gap;
  3. perplexity: `eagle2 perplexity -c 512` is within --ppl-tolerance percent of llama-perplexity's
     figure on the same text and chunks.
Exit status: 0 when every file passes, 1 when any check fails, 2 when a tool could not be run.

Usage: scripts/llama_parity.py [--gguf FILE ...] [--prompts FILE] [--limit 16] [-n 64] ...
(`--help` lists every option.)
"""
import argparse
import gzip
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# llama.cpp's other flash-attention and K/V-cache settings (eagle2 attends in f32 over an f32
# cache, without flash attention's online softmax): llama-completion runs again under each at a
# divergence, to show whether llama.cpp itself makes eagle2's choice there.
OTHER_SETTINGS = (("-fa", "off"), ("-fa", "off", "-ctk", "f32", "-ctv", "f32"),
                  ("-ctk", "f32", "-ctv", "f32"), ("-ctk", "q8_0", "-ctv", "q8_0"))
RUN_TIMEOUT = 600  # seconds; a hang detector for one tool run, not a speed claim


class ToolError(Exception):
    """A tool could not be run or answered nonsense (exit status 2)."""


def run(cmd, env=None):
    """Runs cmd; returns (stdout, stderr) as bytes; ToolError unless it exits 0."""
    try:
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=RUN_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{shlex.join(cmd)}: {e}") from e
    if p.returncode != 0:
        tail = p.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise ToolError(f"{shlex.join(cmd)}: exit {p.returncode}: {' | '.join(tail)}")
    return p.stdout, p.stderr


def load_prompts(path):
    """Prompts of a .jsonl(.gz) set, read as `eagle2 bench` reads them (src/bench/prompt_set.cpp):
    the first of the fields turns (first turn), prompt, question, text."""
    opener = gzip.open if path.endswith(".gz") else open
    stem = os.path.basename(path).split(".")[0]
    prompts = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            j = json.loads(line)
            for key in ("turns", "prompt", "question", "text"):
                if key in j:
                    v = j[key]
                    prompts.append((f"{stem}:{len(prompts)}", v[0] if isinstance(v, list) else v))
                    break
    return prompts


class LlamaServer:
    """llama-server on 127.0.0.1 and a free port, one slot, llama.cpp's defaults otherwise."""

    def __init__(self, bin_dir, model, threads, env, extra=()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tempfile.TemporaryFile()
        cmd = [os.path.join(bin_dir, "llama-server"), "-m", model, "--host", "127.0.0.1",
               "--port", str(self.port), "-t", str(threads), "-np", "1", *extra]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 120
        while True:
            try:
                if self.get("/health").get("status") == "ok":
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                raise ToolError(f"llama-server did not start on {model}")
            time.sleep(0.2)
        self.n_ctx = self.get("/props")["default_generation_settings"]["n_ctx"]

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=60) as r:
            return json.load(r)

    def post(self, path, body):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=RUN_TIMEOUT) as r:
            return json.load(r)

    def tokenize(self, text):
        # As llama-completion tokenizes a prompt: BOS as the vocabulary asks, special tokens parsed.
        return self.post("/tokenize", {"content": text, "add_special": True,
                                       "parse_special": True})["tokens"]

    def greedy(self, ids, n, n_probs):
        """n greedy tokens after the token ids `ids`: [(id, bytes, [(id, bytes, logprob)...])],
        top_logprobs being llama.cpp's log-probs before sampling, best first."""
        r = self.post("/completion", {"prompt": ids, "n_predict": n, "temperature": 0,
                                      "samplers": ["top_k"], "top_k": 1, "ignore_eos": True,
                                      "n_probs": n_probs, "cache_prompt": False})
        return [(p["id"], bytes(p["bytes"]),
                 [(t["id"], bytes(t["bytes"]), t["logprob"]) for t in p["top_logprobs"]])
                for p in r["completion_probabilities"]]

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def llama_path(server, prompt_ids, text, n):
    """llama-completion's greedy path through `text` as llama-server's tokens, each with llama.cpp's
    top log-probs there. Where the server's greedy token leaves the text (llama.cpp flipping a
    near-tie between its two programs), the candidate that continues the text is forced and the
    server asked again from there. Returns (path, flips, complete)."""
    path, flips, pos = [], [], 0
    while len(path) < n and pos < len(text):
        forced = False
        for tok, piece, top in server.greedy(prompt_ids + [t[0] for t in path], n - len(path), 5):
            if piece and text.startswith(piece, pos):
                path.append((tok, piece, top))
                pos += len(piece)
                continue
            match = [c for c in top if c[1] and text.startswith(c[1], pos)]
            if not match:
                return path, flips, False
            best = max(match, key=lambda c: len(c[1]))
            flips.append((len(path), gap_of(top)))
            path.append((best[0], best[1], top))
            pos += len(best[1])
            forced = True
            break
        if not forced and len(path) < n and pos < len(text):
            return path, flips, False  # the server stopped early
    return path, flips, pos == len(text)


def common_prefix(x, y):
    """Length of the longest common prefix of two sequences."""
    return next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y)))


def gap_of(top):
    return top[0][2] - top[1][2] if len(top) > 1 else float("inf")


def show(piece):
    return repr(piece.decode("utf-8", errors="replace"))


class CutShort(ToolError):
    """llama-completion's text came back cut short every time; `partial` is the longest one."""

    def __init__(self, partial):
        super().__init__(f"llama-completion's text was cut short 5 times in a row: "
                         f"...{partial[-20:]!r}")
        self.partial = partial


def llama_completion(a, tools, model, prompt, extra=()):
    """llama-completion's greedy text after the prompt. It closes its text with a blank line of its
    own, written, like the text, by its logging thread; now and then the process exits before that
    thread has written the last pieces (seen a few times in 100 runs on a loaded machine, and five
    times in a row once on a machine running three builds), so a text without its closing blank
    line is cut short and the run is repeated; after 5 such runs, CutShort."""
    cmd = [os.path.join(a.llama_bin, "llama-completion"), "-m", model, "-p", prompt, "-n", str(a.n),
           "--temp", "0", "--samplers", "top_k", "--top-k", "1", "--ignore-eos",
           "-t", str(a.threads), "-no-cnv", "--no-escape", "--no-display-prompt",
           *shlex.split(a.llama_args), *extra]
    partial = b""
    for _ in range(5):
        out, _ = run(cmd, env=tools)
        if out.endswith(b"\n\n"):
            return out[:-2]
        partial = max(partial, out, key=len)
    raise CutShort(partial)


def llama_text(a, tools, model, prompt, server, prompt_ids):
    """llama-completion's text; where it keeps coming back cut short, what it did print, finished
    by llama-server's greedy tokens from there (llama.cpp's other program on the same file, so the
    text stays llama.cpp's own). The cut may fall inside a token: the server follows the whole
    tokens of the printed part, and its text from there must go on with the rest of it, else the
    cut stays an error."""
    try:
        return llama_completion(a, tools, model, prompt)
    except CutShort as cut:
        path, _, _ = llama_path(server, prompt_ids, cut.partial, a.n)
        followed = sum(len(piece) for _, piece, _ in path)
        rest = server.greedy(prompt_ids + [t[0] for t in path], a.n - len(path), 1) \
            if len(path) < a.n else []  # only the closing blank line was lost
        text = cut.partial[:followed] + b"".join(piece for _, piece, _ in rest)
        if not text.startswith(cut.partial):
            raise
        return text


def gives_text(a, tools, model, prompt, extra, text):
    """Whether llama-completion under the settings `extra` writes `text` (a text that keeps coming
    back cut short, or a setting llama.cpp refuses for this file, counts as no: this only
    annotates a failure)."""
    try:
        return llama_completion(a, tools, model, prompt, extra) == text
    except ToolError:  # cut short every time, or a setting this file cannot take (a q8_0 cache
        return False   # needs heads of whole 32-element blocks)


def compare_prompt(a, tools, model, prompt, server, eos_id):
    """One prompt on one file: returns (status, message); status is 'same', 'allowed' or 'fail'."""
    e_ids = [int(x) for x in run([a.eagle2, "tokenize", "-m", model, "-p", prompt])[0]
             .decode().strip().split(",")]
    l_ids = server.tokenize(prompt)
    if e_ids != l_ids:
        at = common_prefix(e_ids, l_ids)
        return "fail", f"tokenization differs at id {at}: eagle2 {e_ids[at:at + 4]}, " \
                       f"llama.cpp {l_ids[at:at + 4]}"
    llama = llama_text(a, tools, model, prompt, server, l_ids)
    out, _ = run([a.eagle2, "generate", "-m", model, "-p", prompt, "-n", str(a.n),
                  "-t", str(a.threads)] + shlex.split(a.eagle2_args))
    if not out.startswith(prompt.encode()) or not out.endswith(b"\n"):
        raise ToolError("eagle2 generate's output is not the prompt, the text and a newline")
    ours = out[len(prompt.encode()):-1]
    if ours == llama:
        return "same", "identical"

    try:
        path, flips, complete = llama_path(server, l_ids, llama, a.n)
    except urllib.error.HTTPError as e:
        # llama-server answers 500 for a completion whose text is not valid UTF-8 (a random
        # model's can be): it cannot give its log-probs along the text, so the divergence is
        # reported with no gap.
        at = common_prefix(ours, llama)
        return "fail", f"the texts part at byte {at} ({show(ours[at:at + 8])} vs " \
                       f"{show(llama[at:at + 8])}); llama-server refused to follow llama.cpp's " \
                       f"text (HTTP {e.code}), so there is no gap to judge it by"
    # A text cut short just after a blank line of its own also ends with "\n\n" (see
    # llama_completion): llama-server then runs out of text before a.n tokens. Such a text is
    # asked for again (a real disagreement between llama.cpp's two programs stays one).
    for _ in range(4):
        if complete or ours == llama:
            break
        llama = llama_text(a, tools, model, prompt, server, l_ids)
        path, flips, complete = llama_path(server, l_ids, llama, a.n)
    if ours == llama:
        return "same", "identical"
    note = "".join(f"; llama.cpp's own programs part at token {k} (gap {g:.4f})" for k, g in flips)
    if not complete:
        return "fail", f"llama-server cannot follow llama-completion's text past token " \
                       f"{len(path)}{note}"
    pos = 0
    for k, (tok, piece, top) in enumerate(path):
        if ours.startswith(piece, pos):
            pos += len(piece)
            continue
        if pos == len(ours) and top[0][0] == eos_id:
            return "same", f"identical up to token {k}, where both pick EOS (eagle2 stops there; " \
                           f"llama.cpp goes on under --ignore-eos){note}"
        gap = gap_of(top)
        # llama.cpp under its other attention settings, for the record: those that give eagle2's
        # whole text show the divergence is one of llama.cpp's own flips.
        flips_to_ours = [" ".join(s) for s in OTHER_SETTINGS
                         if gives_text(a, tools, model, prompt, s, ours)]
        note += "; llama.cpp gives eagle2's text with " + (
            ", with ".join(flips_to_ours) if flips_to_ours else
            f"none of {' | '.join(' '.join(s) for s in OTHER_SETTINGS)}")
        took = next((f"llama.cpp's #{i + 1} {show(c[1])}" for i, c in enumerate(top)
                     if c[1] and ours.startswith(c[1], pos)), show(ours[pos:pos + 8]) + "...")
        msg = f"diverges at token {k}: llama.cpp top-1 {show(top[0][1])} ({top[0][2]:.4f}), " \
              f"top-2 {show(top[1][1])} ({top[1][2]:.4f}), gap {gap:.4f}; eagle2 took {took}"
        if gap < a.gap:
            return "allowed", f"{msg} (gap < {a.gap}: allowed){note}"
        return "fail", f"{msg} (gap >= {a.gap}: FAIL){note}"
    return "fail", f"eagle2's text goes on past llama.cpp's {len(path)} tokens{note}"


def ppl_text_for(a, model, tmp):
    """The perplexity text: --ppl-text, else TinyStories for stories260K and HumanEval's prompts
    and solutions (in file order, one newline after each) for the code model."""
    if a.ppl_text:
        return a.ppl_text, os.path.basename(a.ppl_text)
    if "stories" in os.path.basename(model):
        path = os.path.join(a.shared, "data/corpora/tinystories_valid_head.txt")
        return path, "tinystories_valid_head.txt"
    path = os.path.join(tmp, "humaneval.txt")
    if not os.path.exists(path):
        src = os.path.join(a.shared, "data/prompts/HumanEval.jsonl.gz")
        with gzip.open(src, "rt", encoding="utf-8") as f, open(path, "w", encoding="utf-8") as o:
            for line in f:
                j = json.loads(line)
                o.write(j["prompt"] + j["canonical_solution"] + "\n")
    return path, "HumanEval prompts + solutions"


def compare_perplexity(a, tools, model, tmp):
    text, label = ppl_text_for(a, model, tmp)
    chunks = ["--chunks", str(a.ppl_chunks)] if a.ppl_chunks > 0 else []
    out, _ = run([a.eagle2, "perplexity", "-m", model, "-f", text, "-c", str(a.ppl_ctx),
                  "-t", str(a.threads)] + chunks)
    ours = out.decode()
    m = re.search(r"^PPL = ([0-9.]+) \+/- ([0-9.]+)", ours, re.M)
    # Its last line, like llama-completion's text, is now and then lost at exit: run it again then.
    for _ in range(3):
        out, err = run([os.path.join(a.llama_bin, "llama-perplexity"), "-m", model, "-f", text,
                        "-c", str(a.ppl_ctx), "-t", str(a.threads)] + chunks, env=tools)
        theirs = (out + err).decode(errors="replace")
        n = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", theirs)
        if n:
            break
    if not m or not n:
        who = "eagle2" if not m else "llama-perplexity"
        raise ToolError(f"no final perplexity line from {who}")
    e, l = float(m.group(1)), float(n.group(1))
    ours_chunks = [float(x) for x in
                   re.findall(r"^chunk \d+/\d+: running PPL ([0-9.]+)", ours, re.M)]
    their_chunks = [float(x) for x in re.findall(r"\[\d+\]([0-9.]+),", theirs)]
    worst = max((abs(x - y) / y for x, y in zip(ours_chunks, their_chunks)), default=0.0)
    diff = 100 * (e - l) / l
    ok = abs(diff) <= a.ppl_tolerance and len(ours_chunks) == len(their_chunks)
    msg = f"perplexity (-c {a.ppl_ctx}, {len(ours_chunks)} chunks of {label}): eagle2 " \
          f"{m.group(1)} +/- {m.group(2)}, llama.cpp {n.group(1)} +/- {n.group(2)}: " \
          f"{diff:+.3f} % (largest running-figure difference {100 * worst:.3f} %)"
    return ok, e, l, diff, msg


def check_file(a, tools, model, prompts, tmp):
    name = os.path.basename(model)
    print(f"== {name}: {a.limit} prompts of {os.path.basename(a.prompts)} x {a.n} tokens",
          flush=True)
    server = LlamaServer(a.llama_bin, model, a.threads, tools, shlex.split(a.llama_args))
    counts = {"same": 0, "allowed": 0, "fail": 0}
    try:
        info = run([a.eagle2, "info", "-m", model])[0].decode()
        eos = int(re.search(r"\beos (\d+)", info).group(1))
        used = 0
        for pname, prompt in prompts:
            if used == a.limit:
                break
            if len(server.tokenize(prompt)) + a.n > server.n_ctx:
                print(f"  {pname:16s} skipped: prompt and {a.n} tokens exceed the context "
                      f"of {server.n_ctx}")
                continue
            used += 1
            status, msg = compare_prompt(a, tools, model, prompt, server, eos)
            counts[status] += 1
            print(f"  {pname:16s} {msg}", flush=True)
    finally:
        server.close()
    ok = counts["fail"] == 0 and used == a.limit
    print(f"  text: {counts['same']}/{used} identical, {counts['allowed']} allowed divergences, "
          f"{counts['fail']} failures")
    row = {"file": name, "prompts": used, **counts, "ppl": None}
    if a.ppl:
        p_ok, e, l, diff, msg = compare_perplexity(a, tools, model, tmp)
        print(f"  {msg}{'' if p_ok else ' FAIL'}", flush=True)
        ok = ok and p_ok
        row["ppl"] = (e, l, diff)
    print(f"  {'OK' if ok else 'FAIL'}", flush=True)
    return ok, row


def main():
    shared_default = os.environ.get("EAGLE2_SHARED") or os.path.join(ROOT, "..", "shared")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shared", default=shared_default, help="the shared folder (../shared)")
    p.add_argument("--eagle2", default=os.path.join(ROOT, "build/bin/eagle2"))
    p.add_argument("--llama-bin", help="llama.cpp's tools (default SHARED/tools/llama.cpp/bin)")
    p.add_argument("--gguf", nargs="+", help="GGUF files (default all of SHARED/data/gguf)")
    p.add_argument("--prompts", help="prompt set (default SHARED/data/prompts/HumanEval.jsonl.gz)")
    p.add_argument("--limit", type=int, default=16, help="prompts per file")
    p.add_argument("-n", type=int, default=64, help="tokens generated per prompt")
    p.add_argument("--gap", type=float, default=0.01,
                   help="a divergence passes where llama.cpp's top-1/top-2 log-prob gap is below")
    # One thread by default: llama.cpp's worker threads spin, and on a machine shared with other
    # work two of them ran a 32-token completion 100 times slower than one (35 s against 0.2 s).
    p.add_argument("-t", "--threads", type=int, default=1, help="threads of every tool run")
    p.add_argument("--no-ppl", dest="ppl", action="store_false", help="skip perplexity")
    p.add_argument("--ppl-text", help="perplexity text (default: per model, see docs/PARITY.md)")
    p.add_argument("--ppl-ctx", type=int, default=512)
    p.add_argument("--ppl-chunks", type=int, default=0, help="chunks scored (default all)")
    p.add_argument("--ppl-tolerance", type=float, default=0.5, help="percent")
    p.add_argument("--llama-args", default="",
                   help="extra llama-completion and llama-server flags, e.g. '-fa off -ctk f32 "
                        "-ctv f32' (llama.cpp's full-precision path: a random mixture of experts "
                        "swaps near-tied experts under its f16 KV cache)")
    p.add_argument("--eagle2-args", default="",
                   help="extra eagle2 generate flags (to see the check fail, e.g. '--temp 1')")
    a = p.parse_args()
    a.llama_bin = a.llama_bin or os.path.join(a.shared, "tools/llama.cpp/bin")
    a.prompts = a.prompts or os.path.join(a.shared, "data/prompts/HumanEval.jsonl.gz")
    if not a.gguf:
        d = os.path.join(a.shared, "data/gguf")
        a.gguf = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".gguf"))
    for path in [a.eagle2, a.prompts, os.path.join(a.llama_bin, "llama-completion")] + a.gguf:
        if not os.path.exists(path):
            print(f"error: {path} not found", file=sys.stderr)
            return 2
    tools = dict(os.environ)  # the llama.cpp binaries load their libraries from beside them
    tools["LD_LIBRARY_PATH"] = a.llama_bin + (":" + tools["LD_LIBRARY_PATH"]
                                              if tools.get("LD_LIBRARY_PATH") else "")
    prompts = load_prompts(a.prompts)
    rows, all_ok = [], True
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for model in a.gguf:
                ok, row = check_file(a, tools, model, prompts, tmp)
                all_ok = all_ok and ok
                rows.append(row)
    except ToolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n| file | prompts | identical | allowed divergences | failures | PPL eagle2 | "
          "PPL llama.cpp | difference |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        ppl = "| | | " if r["ppl"] is None else \
            f"| {r['ppl'][0]:.4f} | {r['ppl'][1]:.4f} | {r['ppl'][2]:+.3f} % "
        print(f"| {r['file']} | {r['prompts']} | {r['same']} | {r['allowed']} | {r['fail']} {ppl}|")
    print("parity: OK" if all_ok else "parity: FAIL")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
