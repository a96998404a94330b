"""Transform stage: rewrite the located spans at the start level, escalate under attack, write back.

    spans → propagate (every occurrence, every field) → merge overlaps → LevelRenderer(level)
          → escalate: guesser attacks the rewrite, the lexical verifier checks guesses against the
            original, a verified guess ≥ threshold raises the level (≤ max_rounds, ≤ L5)
          → write back into the body's own format, the URL query and cookies

Only "prose" fields (five words or more) and fields with spans are rewritten and shown to the guesser:
short structured values (model names, ids, enums) keep their exact bytes. Fields in a language the
detectors do not read (language.py) are rewritten at L5 in strict mode. The decision records levels,
rounds, span counts and guess counts — never values.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from .. import codec
from ..bodies import ParsedBody, is_body_path, rewrite_cookies, rewrite_url, write_back
from ..bodies.headers import rewrite_headers
from ..config import AnonymizeSettings
from ..errors import BodyError
from ..hashtags import personal_hashtag
from ..types import CONTAINER_ENTITIES, Action, RawRequest, Rewrite, Span, TextField
from .escalation import Outcome, escalate
from .guesser import CombinedGuesser, DeterministicGuesser, LLMGuesser
from .language import is_non_english
from .levels import LevelRenderer
from .llm_rewrite import LLMRewriter
from .spans import merge, propagate
from .surrogates import Surrogates
from .verifier import LexicalVerifier, own_names

_PROSE_WORDS = 5
_WRITABLE = ("query:", "path:", "cookie:", "header:")  # besides body paths: what `rewrite` puts back
_HASHTAG_KEEP = {"PERSON", "ORGANIZATION", "LOCATION", "NRP", "FAMILY", "OCCUPATION"}


def _hashtag(text: str, span: Span) -> bool:
    """A name-like span inside a hashtag (#FamilyFirst): a topic word, kept as written."""
    if span.entity not in _HASHTAG_KEEP:
        return False
    word = text[: span.start].split(" ")[-1].split("\n")[-1]
    if not word.startswith("#"):
        return False
    return not personal_hashtag(word + span.text)  # #SingleDad says the writer's status: hidden


class Transformer:
    def __init__(self, settings: AnonymizeSettings | None = None,
                 detect: Callable[[list[TextField]], list[Span]] | None = None, llm=None, seed: bytes | None = None):
        """`detect`: the Detector's bound method (re-checks LLM output); `llm`: a guardian_proxy.llm back end
        or None (deterministic guesser and L4/L5 only); `seed`: fixes surrogates (benchmarks, tests)."""
        self.settings = settings or AnonymizeSettings()
        self.detect = detect
        self.llm = llm
        self.seed = seed
        self.guesser = CombinedGuesser(DeterministicGuesser(), LLMGuesser(llm) if llm is not None else None)
        self.rewriter = LLMRewriter(llm, detect) if llm is not None else None

    # ------------------------------------------------------------------ text level

    def anonymize(self, fields: list[TextField], spans: list[Span], level: int,
                  max_rounds: int | None = None, own: frozenset[str] = frozenset()) -> Outcome:
        """Rewrite `fields` from `level` with verified escalation; the Outcome holds the changed fields. `own`:
        the recipient's own names (verifier.own_names), which no guess of theirs alone escalates."""
        s = self.settings
        all_spans = merge(propagate(fields, spans))
        strict = {f.path for f in fields if is_non_english(f.text)}
        strict |= {sp.path for sp in all_spans if sp.entity == "NARRATIVE"}
        texts = {f.path: f.text for f in fields}
        all_spans = [sp for sp in all_spans if sp.entity != "NARRATIVE" and not _hashtag(texts.get(sp.path, ""), sp)]
        with_spans = {sp.path for sp in all_spans}
        prose = [f for f in fields if f.path in with_spans or len(f.text.split()) >= _PROSE_WORDS]
        original = "\n".join(f.text for f in prose)
        renderer = LevelRenderer(prose, all_spans, Surrogates(original, self.seed), strict)

        def render(lvl: int) -> dict[str, str]:
            out = renderer.render(lvl)
            if self.rewriter is not None and lvl >= 4:
                base = {f.path: out.get(f.path, f.text) for f in prose}
                if lvl == 4:
                    base = {**base, **{p: t for p, t in renderer.render(3).items() if p not in strict}}
                out = {p: t for p, t in self.rewriter.rewrite(base, lvl).items() if t != renderer.fields.get(p)}
            return out

        def view(changed: dict[str, str]) -> str:
            return "\n".join(changed.get(f.path, f.text) for f in prose)

        outcome = escalate(render, view, self.guesser, LexicalVerifier(original, own), level,
                           threshold=s.confidence_threshold,
                           max_rounds=s.max_rounds if max_rounds is None else max_rounds, verify=s.verify)
        outcome.span_counts = dict(Counter(sp.entity for sp in all_spans))
        outcome.strict_fields = len(strict)
        return outcome

    # ------------------------------------------------------------------ request level

    def transform(self, req: RawRequest, action: Action, level: int) -> tuple[Rewrite, int, int]:
        """(rewrite, final level, rounds)."""
        t0 = time.perf_counter()
        # a request is rewritten "just enough": the personal values found, never a page address, event name or
        # search term as a whole (only what sits inside them), never a protocol value that holds no span
        spans = [sp for sp in action.spans if sp.entity not in CONTAINER_ENTITIES]
        located = {sp.path for sp in spans}
        containers = {sp.path for sp in action.spans if sp.entity in CONTAINER_ENTITIES}
        fields = [f for f in action.fields if f.path in located or not (f.protocol or f.path in containers)]
        outcome = self.anonymize(fields, spans, level, own=own_names(action.domain, action.site))
        rw = self.rewrite(req, action, outcome.texts)
        rw.span_counts = outcome.span_counts
        rw.stats = {"start_level": level, "final_level": outcome.level, "rounds": outcome.rounds,
                    "upgrades": outcome.upgrades, "guesses": outcome.guesses, "verified_guesses": outcome.verified,
                    "spans": sum(outcome.span_counts.values()), "fields_rewritten": len(outcome.texts),
                    "strict_fields": outcome.strict_fields, "verify": int(self.settings.verify),
                    "upgrade_cues": dict(outcome.cues),
                    "ms": round((time.perf_counter() - t0) * 1000, 2)}
        return rw, outcome.level, outcome.rounds

    @staticmethod
    def rewrite(req: RawRequest, action: Action, repl: dict[str, str]) -> Rewrite:
        """Put rewritten field texts back: body in its own format, URL query, cookies, headers."""
        rw = Rewrite()
        unwritable = sorted({p.split(":", 1)[0] for p in repl if not (is_body_path(p) or p.startswith(_WRITABLE))})
        if unwritable:  # never drop a replacement silently: the value would leave as it was
            raise BodyError(f"cannot write back into {', '.join(unwritable)}")
        parsed: ParsedBody | None = action._parsed
        body_paths = [p for p in repl if is_body_path(p)]
        if parsed is not None and body_paths:
            rw.body = codec.encode(write_back(parsed, repl), req.header("content-encoding") or parsed.encoding)
        new_url = rewrite_url(req.url, repl)
        if new_url != req.url:
            rw.url = new_url
        cookie = req.cookie
        if cookie and any(p.startswith("cookie:") for p in repl):
            rw.set_headers["cookie"] = rewrite_cookies(cookie, repl)
        rw.set_headers.update(rewrite_headers(req.headers, repl))
        return rw
