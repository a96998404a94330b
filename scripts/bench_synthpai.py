#!/usr/bin/env python3
"""SynthPAI (development split): what the anonymizer removes of a Reddit-style user's personal attributes, on
the CPU default and at L5 with a local model back end.

    .venv/bin/python scripts/bench_synthpai.py [--data ../shared/data/bench] [--limit N] [--llm-limit 12]
        [--llm-model .cache/gguf/gemma-3-270m-q4_k_m.gguf] [--llm-config llm.yaml]

Each text is one user's comments joined (synthpai.dev.gold.jsonl); its gold strings are the profile's attributes
(age, sex, relationship, education, occupation, city, income level), written literally in the comments only
for about one in eleven: the rest must be inferred, which no span detector can remove. So beside score.py's
privacy (every gold string) the table gives the privacy of the literal ones (gold strings that occur in the
original text, as score.py matches them), which is what the anonymizer can act on.

Rows, each through `guardian-proxy anonymize` as a user runs it (scored with ../shared/score.py):
  controller      the CPU default: context medium, L = 0.7, escalation with verification, no LLM
  L5 rules        fixed level 5 without an LLM (the deterministic L5: residue suppressed, sentences dropped)
  L5 llama_cpp    fixed level 5 with the llama_cpp back end and --llm-model (default: the 270M Gemma GGUF the
                  `llm` extra ships), on the first --llm-limit texts (a small CPU model takes tens of seconds
                  per text)
  L5 <config>     --llm-config: any `llm:` settings YAML, e.g. the openai_compatible back end on a local Ollama
                  (`llm: {backend: openai_compatible, base_url: http://127.0.0.1:11434/v1, model: llama3.2:3b}`)
The rows with an LLM are compared with the CPU default on the same texts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.bench_anonymize import load_scorer, write_jsonl  # noqa: E402

GGUF = ROOT / ".cache" / "gguf" / "gemma-3-270m-q4_k_m.gguf"
EXE = ROOT / ".venv" / "bin" / "guardian-proxy"


def anonymize(src: Path, out: Path, *extra: str) -> dict:
    cmd = [str(EXE) if EXE.exists() else "guardian-proxy", "anonymize", "--input", str(src), "--output", str(out),
           "--context", "medium", "--likelihood", "0.7", "--seed", "bench", "--no-progress", *extra]
    t0, c0 = time.perf_counter(), os.times()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    c1 = os.times()
    return {"wall_s": time.perf_counter() - t0,
            "cpu_s": (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)}


def literal(rows: list[dict], scorer) -> list[dict]:
    """The rows with only the gold strings that occur in the original text (score.py's matching)."""
    return [{**r, "gold": [g for g in r["gold"] if g.strip() and re.search(scorer._pat(g), r["text"], re.I)]}
            for r in rows]


def row(label: str, gold: list[dict], out: Path, tmp: Path, scorer, timing: dict) -> str:
    g_all, g_lit = tmp / f"{out.stem}.gold.jsonl", tmp / f"{out.stem}.literal.jsonl"
    write_jsonl(g_all, gold)
    lit = literal(gold, scorer)
    write_jsonl(g_lit, lit)
    a, b = scorer.score(str(g_all), str(out)), scorer.score(str(g_lit), str(out))
    n_lit = sum(len(r["gold"]) for r in lit)
    return (f"| {label} | {len(gold)} | {a['privacy_micro']:.3f} | {b['privacy_micro']:.3f} ({n_lit}) | "
            f"{a['utility_jaccard']:.3f} | {a['near_empty_share']:.1%} | {1000 * timing['cpu_s'] / len(gold):.0f} | "
            f"{timing['wall_s'] / len(gold):.1f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "bench")
    ap.add_argument("--limit", type=int, default=None, help="texts for the rows without an LLM (default all)")
    ap.add_argument("--llm-limit", type=int, default=12, help="texts for the rows with an LLM")
    ap.add_argument("--llm-model", default=str(GGUF), help="GGUF for the llama_cpp row ('' to skip it)")
    ap.add_argument("--llm-config", type=Path, help="settings YAML with an `llm:` section (another back end)")
    args = ap.parse_args()
    scorer = load_scorer(args.data.parent.parent)
    gold = [json.loads(x) for x in (args.data / "synthpai.dev.gold.jsonl").read_text().splitlines() if x.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="bench-synthpai-"))
    print("| run | texts | privacy (every attribute) | privacy (attributes written literally) | utility | near-empty "
          "| CPU ms/text | s/text |")
    print("|---|---|---|---|---|---|---|---|")

    def run(label: str, rows: list[dict], name: str, *extra: str) -> None:
        src, out = tmp / f"{name}.in.jsonl", tmp / f"{name}.jsonl"
        write_jsonl(src, rows)
        print(row(label, rows, out, tmp, scorer, anonymize(src, out, *extra)), flush=True)

    texts = gold[: args.limit]
    run("controller (CPU default)", texts, "controller")
    run("L5 rules (no LLM)", texts, "l5rules", "--level", "5")
    few = gold[: args.llm_limit]
    llm_rows = []
    model = Path(args.llm_model) if args.llm_model else None  # Path('') would be '.', which exists
    if model is not None and model.is_file():
        llm_rows.append((f"L5 llama_cpp {model.name}", ("--level", "5", "--llm", "llama_cpp", "--llm-model", str(model))))
    if args.llm_config:
        llm_rows.append((f"L5 {args.llm_config.name}", ("--level", "5", "--config", str(args.llm_config))))
    if llm_rows:
        run("controller (CPU default), same texts", few, "controller-few")
        run("L5 rules (no LLM), same texts", few, "l5rules-few")
        for i, (label, extra) in enumerate(llm_rows):
            run(label, few, f"llm{i}", *extra)
    print(f"\n(outputs in {tmp})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
