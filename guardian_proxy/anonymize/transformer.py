"""Transform stage: rewrite spans at the start level and put the fields back into the request."""

from __future__ import annotations

from collections import Counter, defaultdict

from .. import codec
from ..bodies import ParsedBody, rewrite_cookies, rewrite_url, write_back
from ..types import Action, RawRequest, Rewrite, Span
from .operators import Placeholders, apply_spans, partial_mask


class Transformer:
    def rewrite_fields(self, action: Action, level: int) -> dict[str, str]:
        by_path: dict[str, list[Span]] = defaultdict(list)
        for s in action.spans:
            by_path[s.path].append(s)
        ph = Placeholders()
        render = (lambda s: partial_mask(s.text, s.entity)) if level <= 1 else ph.tag
        texts = {f.path: f.text for f in action.fields}
        return {p: apply_spans(texts[p], spans, render) for p, spans in by_path.items() if p in texts}

    def transform(self, req: RawRequest, action: Action, level: int) -> tuple[Rewrite, int, int]:
        """(rewrite, final level, rounds)."""
        repl = self.rewrite_fields(action, level)
        rw = Rewrite(span_counts=dict(Counter(s.entity for s in action.spans)))
        parsed: ParsedBody | None = action._parsed
        if parsed is not None and any(p.split(":", 1)[0] in ("json", "form", "text") for p in repl):
            body = write_back(parsed, repl)
            rw.body = codec.encode(body, req.header("content-encoding"))
        new_url = rewrite_url(req.url, repl)
        if new_url != req.url:
            rw.url = new_url
        cookie = req.header("cookie")
        if cookie and any(p.startswith("cookie:") for p in repl):
            rw.set_headers["cookie"] = rewrite_cookies(cookie, repl)
        return rw, level, 0
