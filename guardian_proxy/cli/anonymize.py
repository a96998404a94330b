"""`guardian-proxy anonymize`: the batch interface (benchmarks and users).

Each input line `{"id", "text"}` becomes one POST of `{"text": [chunk, …]}` to a fixed batch host through
the real Gateway, so extraction, risk and the decision are the proxy's own. Output lines carry `id`, `text`,
`decision`, `start_level`, `final_level`, `rounds`, `ms`. `--level` forces a fixed level (an override for
the batch host, no escalation); a deny still writes the text it would have sent at L5. Very long texts are
cut into paragraph-aligned chunks (each a JSON field, so detection stays within its limits) and joined
back; placeholders and surrogates stay consistent across chunks because they are one request.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer
from rich.markup import escape

from ..types import RawRequest
from .app import app
from .common import CONFIG, console, fail, json_line, settings_from
from .progress import PROGRESS, BatchProgress, loading

BATCH_URL = "https://batch.anonymize.invalid/v1/text"


def split_text(text: str, size: int) -> list[str]:
    """Chunks of at most `size` characters, cut after a newline or sentence end when possible; joining
    them gives the text back exactly."""
    out, i = [], 0
    while len(text) - i > size:
        window = text[i: i + size]
        cut = max(window.rfind("\n"), window.rfind(". "))
        cut = cut + 1 if cut > size // 2 else size
        out.append(text[i: i + cut])
        i += cut
    out.append(text[i:])
    return out


def _request(text: str, chunk_chars: int) -> RawRequest:
    body = json.dumps({"text": split_text(text, chunk_chars)}, ensure_ascii=False).encode()
    return RawRequest(method="POST", url=BATCH_URL, headers=[("content-type", "application/json")], body=body)


def _text_of(rewrite_body: bytes | None, fallback: str) -> str:
    if rewrite_body is None:
        return fallback
    return "".join(json.loads(rewrite_body)["text"])


def run_line(gw, rec: dict, context: str | None, likelihood: float | None, chunk_chars: int) -> dict:
    text = rec.get("text") or ""
    t0 = time.perf_counter()
    req = _request(text, chunk_chars)
    d = gw.evaluate(req, context=context, likelihood=likelihood, log=False)
    out_text, start, final, rounds = text, d.start_level, d.final_level, d.rounds
    if d.action == "transform" and d.rewrite is not None:
        out_text = _text_of(d.rewrite.body, text)
    elif d.action == "deny" and d.six.fields:
        rw, final, rounds = gw.transformer.transform(req, d.six, 5)
        out_text, start = _text_of(rw.body, text), 5
    return {"id": rec.get("id"), "text": out_text, "decision": d.action, "start_level": start,
            "final_level": final, "rounds": rounds, "ms": round((time.perf_counter() - t0) * 1000, 1),
            "categories": d.six.categories, "R": round(d.risk.R, 4) if d.risk else None}


def _count_texts(path: Path) -> int | None:
    """Non-empty lines of the input (the progress total), or None when it cannot be read here."""
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return None


@app.command()
def anonymize(
    input: Path = typer.Option(..., "--input", "-i", help="JSONL with id and text ('-' for stdin)."),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL to write ('-' for stdout)."),
    context: str = typer.Option(None, "--context", help="Fix the context: mild | medium | severe."),
    likelihood: float = typer.Option(None, "--likelihood", min=0.0, max=1.0, help="Fix L instead of estimating it."),
    level: int = typer.Option(None, "--level", min=1, max=5, help="Force this level (no escalation)."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Count unverified guesses too (ablation)."),
    llm: str = typer.Option(None, "--llm", help="LLM back end: none | llama_cpp | transformers."),
    llm_model: str = typer.Option(None, "--llm-model", help="Model path for --llm."),
    max_rounds: int = typer.Option(None, "--max-rounds", min=0, max=5, help="Escalation rounds (default 5)."),
    seed: str = typer.Option(None, "--seed", help="Fix the surrogates (reproducible output)."),
    chunk_chars: int = typer.Option(20000, "--chunk-chars", min=1000, help="Split longer texts into chunks."),
    progress: bool = PROGRESS,
    config: Path = CONFIG,
) -> None:
    """Anonymize JSONL texts through the full controller (or at a fixed --level).

    Only the JSON lines go to stdout (with -o -); progress and the summary go to stderr."""
    from ..config import Override

    s = settings_from(config)
    s.anonymize.verify = not no_verify
    if max_rounds is not None:
        s.anonymize.max_rounds = max_rounds
    if level is not None:
        s.overrides = [*s.overrides, Override(action="level", domain="batch.anonymize.invalid", level=level)]
        s.anonymize.max_rounds = 0
    if llm:
        s.llm.backend = llm
        if llm_model:
            s.llm.model_path = llm_model
    from ..pipeline import Gateway

    try:
        with loading():
            gw = Gateway.from_settings(s, with_log=False)
            gw.overrides.live = False  # offline: it neither counts override matches nor spends a once rule
    except NotImplementedError as e:
        fail(str(e))
    if seed is not None and hasattr(gw.transformer, "seed"):
        gw.transformer.seed = seed.encode()
    src = sys.stdin if str(input) == "-" else open(input, encoding="utf-8")  # noqa: SIM115
    dst = sys.stdout if str(output) == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
    n = 0
    bar = BatchProgress("anonymize", "texts", show=progress)
    if bar.show and src is not sys.stdin:
        bar.total = _count_texts(input)
    try:
        with bar:
            for line_no, line in enumerate(src, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    fail(f"{input}:{line_no}: not JSON")
                try:
                    out = run_line(gw, rec, context, likelihood, chunk_chars)
                except KeyError as e:
                    fail(str(e))
                dst.write(json_line(out) + "\n")
                dst.flush()
                n += 1
                bar.advance()
    finally:
        if dst is not sys.stdout:
            dst.close()
        if src is not sys.stdin:
            src.close()
    console.print(f"[dim]{n} texts anonymized → {escape(str(output))}[/]", soft_wrap=True, highlight=False)
