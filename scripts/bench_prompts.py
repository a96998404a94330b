"""Prompt precision: what the chat session changes in prompts people type into an AI chat.

Each prompt of `tests/fixtures/prompts/prompts.yaml` is sent as the only user message of a new OpenAI Chat
Completions conversation through the real gateway (Presidio + spaCy, the session stage), as `guardian-proxy run`
decides it. The prompt's words are compared with what would leave (difflib on word tokens, line by line when the
lines are kept):

- needless: a prompt in which a word outside its `personal` (and `either`) values was changed;
- precision: of the changed words, the share inside a `personal` value;
- leaks: `personal` values that leave as typed;
- partly: `personal` values replaced but for a capitalised word of theirs that leaves as typed.

    .venv/bin/python scripts/bench_prompts.py [--set dev|holdout|holdout2|…|holdout13|all] [--api openai|anthropic|gemini|each]
        [--show] [--only REGEX]

With `--api each` every prompt is also sent in Anthropic's and Gemini's framing, and the report counts the prompts
whose changed words differ between the framings, and those whose decisions differ (each value's place, type and
recognizer, what was kept and why): a decision must not change with the encoding that carried it, while a random
stand-in may share a word with the original in one framing and not another.

`prompts.yaml` (dev) was written while the session's rules were built; `holdout.yaml` was written after them and
scored once as it stood, then the general faults it showed were fixed (it is no longer held out); `holdout2.yaml`
was written after those fixes and scored once, then its one leak was fixed; `holdout3.yaml` was written next,
scored once, then its three leaks (names NER missed or typed as organisations) were fixed; `holdout4.yaml` was
written after that and scored once as it stood (needless 5/30, precision 0.793, leaks 3/14), then the general
faults it showed were fixed; `holdout5.yaml` (4/30, 0.739, 3/12) and `holdout6.yaml` (4/30, 0.583, 2/11)
likewise. Later rounds (docs/benchmarks.md) wrote holdout7 … holdout13 the same way: each scored once as it stood
before its faults were fixed; holdout12 and holdout13 were scored in the tenth round. Every set is scored now: a set
written later goes into `UNSCORED` until its first score.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.session.surrogates import KIND_FIRST  # noqa: E402
from guardian_proxy.types import RawRequest  # noqa: E402

CORPORA = {"dev": ROOT / "tests" / "fixtures" / "prompts" / "prompts.yaml",
           "holdout": ROOT / "tests" / "fixtures" / "prompts" / "holdout.yaml",
           "holdout2": ROOT / "tests" / "fixtures" / "prompts" / "holdout2.yaml",
           "holdout3": ROOT / "tests" / "fixtures" / "prompts" / "holdout3.yaml",
           "holdout4": ROOT / "tests" / "fixtures" / "prompts" / "holdout4.yaml",
           "holdout5": ROOT / "tests" / "fixtures" / "prompts" / "holdout5.yaml",
           "holdout6": ROOT / "tests" / "fixtures" / "prompts" / "holdout6.yaml",
           "holdout7": ROOT / "tests" / "fixtures" / "prompts" / "holdout7.yaml",
           "holdout8": ROOT / "tests" / "fixtures" / "prompts" / "holdout8.yaml",
           "holdout9": ROOT / "tests" / "fixtures" / "prompts" / "holdout9.yaml",
           "holdout10": ROOT / "tests" / "fixtures" / "prompts" / "holdout10.yaml",
           "holdout11": ROOT / "tests" / "fixtures" / "prompts" / "holdout11.yaml",
           "holdout12": ROOT / "tests" / "fixtures" / "prompts" / "holdout12.yaml",
           "holdout13": ROOT / "tests" / "fixtures" / "prompts" / "holdout13.yaml",
           "holdout14": ROOT / "tests" / "fixtures" / "prompts" / "holdout14.yaml",
           "holdout15": ROOT / "tests" / "fixtures" / "prompts" / "holdout15.yaml",
           "holdout16": ROOT / "tests" / "fixtures" / "prompts" / "holdout16.yaml",
           "holdout17": ROOT / "tests" / "fixtures" / "prompts" / "holdout17.yaml",
           "holdout18": ROOT / "tests" / "fixtures" / "prompts" / "holdout18.yaml",
           "holdout19": ROOT / "tests" / "fixtures" / "prompts" / "holdout19.yaml",
           "holdout20": ROOT / "tests" / "fixtures" / "prompts" / "holdout20.yaml",
           "holdout21": ROOT / "tests" / "fixtures" / "prompts" / "holdout21.yaml",
           "holdout22": ROOT / "tests" / "fixtures" / "prompts" / "holdout22.yaml",
           "holdout23": ROOT / "tests" / "fixtures" / "prompts" / "holdout23.yaml",
           "holdout24": ROOT / "tests" / "fixtures" / "prompts" / "holdout24.yaml",
           "holdout25": ROOT / "tests" / "fixtures" / "prompts" / "holdout25.yaml",
           "holdout26": ROOT / "tests" / "fixtures" / "prompts" / "holdout26.yaml",
           "holdout27": ROOT / "tests" / "fixtures" / "prompts" / "holdout27.yaml",
           "holdout28": ROOT / "tests" / "fixtures" / "prompts" / "holdout28.yaml",
           "holdout29": ROOT / "tests" / "fixtures" / "prompts" / "holdout29.yaml",
           "holdout30": ROOT / "tests" / "fixtures" / "prompts" / "holdout30.yaml",
           "holdout31": ROOT / "tests" / "fixtures" / "prompts" / "holdout31.yaml",
           "holdout32": ROOT / "tests" / "fixtures" / "prompts" / "holdout32.yaml",
           "holdout33": ROOT / "tests" / "fixtures" / "prompts" / "holdout33.yaml",
           "holdout34": ROOT / "tests" / "fixtures" / "prompts" / "holdout34.yaml",
           "holdout35": ROOT / "tests" / "fixtures" / "prompts" / "holdout35.yaml",
           "holdout36": ROOT / "tests" / "fixtures" / "prompts" / "holdout36.yaml",
           "holdout37": ROOT / "tests" / "fixtures" / "prompts" / "holdout37.yaml",
           "holdout38": ROOT / "tests" / "fixtures" / "prompts" / "holdout38.yaml",
           "holdout39": ROOT / "tests" / "fixtures" / "prompts" / "holdout39.yaml"}
#: sets not yet scored: `--set all` leaves them out, so that scoring every set does not score them by the way
UNSCORED: frozenset[str] = frozenset()
_TOKEN = re.compile(r"\w+|[^\w\s]")


#: the words of an address's flat, suite or floor line, and a street's kind written before its name ("27 Rue
#: Oberkampf" → "11 Rue Smith"): they say what the part is, of anyone's address
_UNIT_WORDS = frozenset({"unit", "apt", "apartment", "flat", "suite", "floor", "room", "level", "building"}) | KIND_FIRST

def load(which: str = "dev") -> list[dict]:
    import yaml

    names = [n for n in CORPORA if n not in UNSCORED] if which == "all" else [which]
    return [c for n in names for c in yaml.safe_load(CORPORA[n].read_text())["prompts"]]


#: the same prompt in each API's own framing: (URL, body, the user text's place in the body as sent)
SHAPES = {
    "openai": ("https://api.openai.com/v1/chat/completions",
               lambda t: {"model": "gpt-4o", "messages": [{"role": "user", "content": t}]},
               lambda b: b["messages"][-1]["content"]),
    "anthropic": ("https://api.anthropic.com/v1/messages",
                  lambda t: {"model": "claude-sonnet-4-5", "max_tokens": 512, "messages": [{"role": "user",
                                                                                         "content": t}]},
                  lambda b: b["messages"][-1]["content"]),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
               lambda t: {"contents": [{"role": "user", "parts": [{"text": t}]}]},
               lambda b: b["contents"][-1]["parts"][0]["text"]),
}


def request(text: str, n: int, api: str = "openai") -> RawRequest:
    url, body, _ = SHAPES[api]
    host = url.split("/")[2]
    return RawRequest(method="POST", url=url, body=json.dumps(body(text)).encode(),
                      headers=[("Host", host), ("Content-Type", "application/json"),
                               ("Authorization", f"Bearer sk-bench-prompts-{api}-{n}"), ("User-Agent", "bench")])


def sent_text(decision, text: str, api: str = "openai") -> str | None:
    """The user message as it would leave (None: blocked)."""
    if decision.action == "deny":
        return None
    rw = decision.rewrite
    if decision.action != "transform" or rw is None or rw.body is None:
        return text
    return SHAPES[api][2](json.loads(rw.body))


def _decided(decision, text: str) -> tuple:
    """What a decision says of a prompt, apart from the random stand-ins: each value's place, type and recognizer,
    what was kept and why, the action."""
    return (decision.action,
            tuple(sorted((sp.start, sp.end, sp.entity, sp.recognizer) for sp in decision.six.spans)),
            json.dumps(decision.extra.get("kept"), sort_keys=True, default=str),
            json.dumps(decision.extra.get("counts"), sort_keys=True, default=str))


def spans_of(text: str, values: list) -> list[tuple[int, int]]:
    out = []
    for v in values:
        for m in re.finditer(re.escape(str(v)), text):
            out.append((m.start(), m.end()))
    return out


def _changed_tokens(text: str, out: str | None) -> list[tuple[int, int, str]]:
    """The word tokens of `text` (start, end, token) that did not leave as typed (every one when blocked)."""
    a = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
    if out is None:
        return a
    lines, out_lines = text.split("\n"), out.split("\n")
    if len(lines) > 1 and len(lines) == len(out_lines):
        # line by line when the lines are kept: a stand-in's words that happen to equal a word of another line
        # ("07700 900 734" and "07700 900 434" in two rows) must not pull the alignment across rows
        moved, base = [], 0
        for line, line_out in zip(lines, out_lines, strict=True):
            moved += [(s + base, e + base, t) for s, e, t in _changed_tokens(line, line_out)]
            base += len(line) + 1
        return moved
    sm = difflib.SequenceMatcher(a=[t for _, _, t in a], b=_TOKEN.findall(out), autojunk=False)
    return [x for op, i1, i2, _, _ in sm.get_opcodes() if op in ("replace", "delete") for x in a[i1:i2]]


def _changed_words(text: str, out: str | None) -> set[str]:
    """The words of `text` that did not leave as typed (every word when blocked)."""
    return {t for _, _, t in _changed_tokens(text, out)}


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < b and a < end for a, b in spans)


def judge(case: dict, out: str | None) -> dict:
    """Changed words (inside a personal value, inside an `either` value, elsewhere) and personal values left."""
    text = case["text"]
    personal = [str(v) for v in case.get("personal") or []]
    if out is None:
        return {"blocked": True, "needless": True, "personal_words": 0, "other_words": len(_TOKEN.findall(text)),
                "leaks": [], "partly": [], "changed": ["<blocked>"]}
    mine, either = spans_of(text, personal), spans_of(text, case.get("either") or [])
    counts = Counter()
    changed = []
    moved = _changed_tokens(text, out)
    gone = {(s, e) for s, e, _ in moved}
    # a value partly left: one of its capitalised words left as typed ("Min-alison Robbins" for "Min-jun Park")
    # (not the word of a flat's or a suite's line, "Unit 3" → "Unit 8": it says what the number is, of anyone's)
    partly = [v for v in personal if v not in out and any(
        (m.start(), m.end()) not in gone and m.group(0)[:1].isupper() and not m.group(0).isupper()
        and m.group(0).casefold() not in _UNIT_WORDS
        for a, b in spans_of(text, [v]) for m in _TOKEN.finditer(text, a, b) if m.group(0).isalpha())]
    for s, e, tok in moved:
        where = "personal" if _inside(mine, s, e) else "either" if _inside(either, s, e) else "other"
        counts[where] += 1
        if where == "other":
            changed.append(tok)
    leaks = [v for v in personal if v in out]
    return {"blocked": False, "needless": counts["other"] > 0, "personal_words": counts["personal"],
            "other_words": counts["other"], "leaks": leaks, "partly": partly, "changed": changed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--show", action="store_true", help="print every prompt that was changed needlessly or leaked")
    ap.add_argument("--only", help="regex on prompt kinds")
    ap.add_argument("--set", default="dev", choices=[*CORPORA, "all"], help="which prompts (default dev)")
    ap.add_argument("--api", default="openai", choices=[*SHAPES, "each"],
                    help="the API framing (default openai); each: every framing, and whether the same words change")
    args = ap.parse_args(argv)

    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    cases = [c for c in load(args.set) if not args.only or re.search(args.only, c["kind"])]
    with tempfile.TemporaryDirectory(prefix="bench-prompts-") as tmp:
        gw = Gateway.from_settings(load_settings(state_dir=Path(tmp)), with_log=False)
        gw.warm_up()
        results = []
        apis = list(SHAPES) if args.api == "each" else [args.api]
        differ = decisions = 0
        for n, c in enumerate(cases):
            outs, decided = {}, set()
            for api in apis:
                d = gw.evaluate(request(c["text"], n, api), log=False)
                out = sent_text(d, c["text"], api)
                outs[api] = (out, judge(c, out))
                decided.add(_decided(d, c["text"]))
            decisions += len(decided) > 1
            out, r = outs[apis[0]]
            changed = {api: _changed_words(c["text"], o) for api, (o, _) in outs.items()}
            if len({frozenset(v) for v in changed.values()}) > 1:
                differ += 1
                r = dict(r, differs={api: sorted(v) for api, v in changed.items()})
            results.append((c, out, r))

    kinds = Counter(c["kind"] for c, _, _ in results)
    n_personal = sum(len(c.get("personal") or []) for c, _, _ in results)
    needless = [x for x in results if x[2]["needless"]]
    leaks = sum(len(r["leaks"]) for _, _, r in results)
    pw = sum(r["personal_words"] for _, _, r in results)
    ow = sum(r["other_words"] for _, _, r in results)
    print(f"prompt precision ({args.set}): {len(results)} prompts ({', '.join(f'{k} {v}' for k, v in kinds.items())}), "
          f"{n_personal} personal values")
    print(f"needless   {len(needless):3d} / {len(results):<3d} prompts with a word changed that is not personal")
    for k in kinds:
        nk = sum(1 for c, _, r in results if c["kind"] == k and r["needless"])
        print(f"  {k:9s} {nk:3d} / {kinds[k]}")
    print(f"precision  {pw / max(1, pw + ow):.3f}  ({pw} changed words personal, {ow} not)")
    print(f"leaks      {leaks:3d} / {n_personal:<3d} personal values left as typed")
    print(f"partly     {sum(len(r.get('partly', [])) for _, _, r in results):3d} / {n_personal:<3d} "
          f"personal values with a capitalised word left as typed (the rest replaced)")
    if args.api == "each":
        print(f"framings   {differ:3d} / {len(results):<3d} prompts whose changed words differ between "
              f"{', '.join(SHAPES)} (the first's numbers above)")
        print(f"decisions  {decisions:3d} / {len(results):<3d} prompts whose decisions differ between the framings "
              f"(each value's place, type and recognizer, what was kept and why, the action); the rest of the "
              f"difference is which words a random stand-in happens to share with the original")
    if args.show:
        for c, out, r in results:
            if r["needless"] or r["leaks"] or r.get("partly") or r.get("differs"):
                print(f"\n[{c['kind']}] {c['text']}\n   -> {out}\n   needless words: {r['changed']}  leaks: {r['leaks']}"
                      f"{'  partly left: ' + str(r['partly']) if r.get('partly') else ''}"
                      f"{'  by framing: ' + str(r['differs']) if r.get('differs') else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
