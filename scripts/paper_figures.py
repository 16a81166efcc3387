#!/usr/bin/env python3
"""Published speedups and acceptance lengths (tau) of the methods in scripts/paper_table.sh's
table, copied as DATA: GPU figures on 7B-70B models, not measured by this project. Each row names
where it was read; nothing here is computed or estimated. A method with no row gets "no figure
found" in the table.

Row: (method as in paper_methods.METHODS, figure, model, hardware, speedup, tau, source key);
tau None where the source gives none.
"""

SOURCES = {
    "doc": "../shared/docs/EAGLE2.md section 7 (the project's summary of the EAGLE-2 paper, "
           "arXiv:2406.16858)",
    "doc-sb": "../shared/docs/EAGLE2.md section 7, quoting Spec-Bench on A100 with Vicuna-7B "
              "(figures that differ from, or are missing in, the leaderboard at the commit of [3])",
    "sb-a100": "Spec-Bench Leaderboard.md, 'Leaderboard on A100' (A100 80GB, PyTorch 2.0.1, "
               "greedy, fp16, batch 1), "
               "hemingkx/Spec-Bench@5544fd7a98df8aaf0662381f0c96e8696207e93d",
    "sb-3090": "Spec-Bench Leaderboard.md, 'Leaderboard on 3090' (RTX 3090 24GB, PyTorch 2.5.1, "
               "greedy, fp16, batch 1), "
               "hemingkx/Spec-Bench@5544fd7a98df8aaf0662381f0c96e8696207e93d",
}

V7 = "Vicuna-7B"
V7SB = "Vicuna-7B-v1.3"
PAPER_GPU = "GPU (the paper's)"
A100 = "A100"
RTX = "RTX 3090"

FIGURES = [
    ("SpS", "Spec-Bench overall", V7SB, A100, 1.52, None, "doc-sb"),
    ("SpS", "Spec-Bench overall", V7SB, A100, 1.49, 2.28, "sb-a100"),
    ("SpS", "Spec-Bench overall", V7SB, RTX, 1.79, 2.28, "sb-3090"),
    ("PLD", "Spec-Bench overall", V7SB, A100, 1.66, None, "doc-sb"),
    ("PLD", "Spec-Bench overall", V7SB, A100, 1.59, 1.73, "sb-a100"),
    ("PLD", "Spec-Bench overall", V7SB, RTX, 1.64, 1.73, "sb-3090"),
    ("Lookahead", "Spec-Bench overall", V7SB, A100, 1.27, 1.66, "sb-a100"),
    ("Lookahead", "Spec-Bench overall", V7SB, RTX, 1.13, 1.64, "sb-3090"),
    ("Medusa", "Spec-Bench overall", V7SB, A100, 1.78, 2.32, "sb-a100"),
    ("Medusa", "Spec-Bench overall", V7SB, RTX, 1.44, 2.32, "sb-3090"),
    ("Hydra", "Spec-Bench overall", V7SB, A100, 2.09, 3.24, "sb-a100"),
    ("Hydra", "Spec-Bench overall", V7SB, RTX, 1.91, 3.26, "sb-3090"),
    ("EAGLE-1", "mean of 6 tasks, T = 0", V7, PAPER_GPU, 2.78, 3.79, "doc"),
    ("EAGLE-1", "Spec-Bench overall", V7SB, A100, 2.10, None, "doc-sb"),
    ("EAGLE-1", "Spec-Bench overall ('EAGLE')", V7SB, A100, 2.29, 3.61, "sb-a100"),
    ("EAGLE-1", "Spec-Bench overall ('EAGLE')", V7SB, RTX, 2.03, 3.57, "sb-3090"),
    ("EAGLE-2", "mean of 6 tasks, T = 0", V7, PAPER_GPU, 3.39, 4.68, "doc"),
    ("EAGLE-2", "HumanEval, T = 0", V7, PAPER_GPU, 3.95, 5.33, "doc"),
    ("EAGLE-2", "MT-bench, T = 0", V7, PAPER_GPU, 3.62, 4.98, "doc"),
    ("EAGLE-2", "mean of 6 tasks, T = 1", V7, PAPER_GPU, 2.94, 4.20, "doc"),
    ("EAGLE-2", "mean of 6 tasks, T = 0", "LLaMA2-Chat-7B", PAPER_GPU, 3.43, 4.64, "doc"),
    ("EAGLE-2", "mean of 6 tasks, T = 0", "Vicuna-13B", PAPER_GPU, 4.04, 4.65, "doc"),
    ("EAGLE-2", "Spec-Bench overall", V7SB, A100, 2.36, 4.34, "doc-sb"),
    ("EAGLE-2", "Spec-Bench overall ('EAGLE2')", V7SB, RTX, 2.19, 4.35, "sb-3090"),
]


def markdown(methods):
    """The published-figures table for the given method names (in their order), with a "no figure
    found" row for a method that has none, and the sources listed below it."""
    keys = list(SOURCES)
    lines = ["**The paper's figures: GPU figures on 7B-70B models (not ours).** Published numbers "
             "copied as data (scripts/paper_figures.py), not measured here: other targets "
             "(Vicuna, LLaMA2-Chat, 7B-70B, fp16), other hardware (GPUs) and their own prompts. "
             "Read them for the order of the methods, not for the size of the speedups on a "
             "2-core CPU.\n",
             "| method | figure | model | hardware | speedup | τ | source |",
             "|---|---|---|---|---|---|---|"]
    for method in methods:
        rows = [r for r in FIGURES if r[0] == method]
        if not rows:
            lines.append(f"| {method} | no figure found | | | | | |")
        for _, figure, model, hw, speedup, tau, src in rows:
            t = "—" if tau is None else f"{tau:.2f}"
            lines.append(f"| {method} | {figure} | {model} | {hw} | {speedup:.2f}x | {t} | "
                         f"[{keys.index(src) + 1}] |")
    lines.append("")
    used = {r[6] for r in FIGURES if r[0] in methods}
    for i, key in enumerate(keys, 1):
        if key in used:
            lines.append(f"- [{i}] {SOURCES[key]}")
    return "\n".join(lines) + "\n"
