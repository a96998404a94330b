"""The log-safe detail of one decision, for the dashboard's detail view.

It holds what the decision log holds plus the text of the evidence statements (policy text, not personal
data), every risk factor with the tier thresholds, the likelihood path and u, levels and rounds, and the
rewritten form of a transformed request (what actually left the machine). Never the original values:
spans are counted per type (and `found` / `found_lines` say which recognizer found each and why, by field path),
and the original body is not read. Every string of the detail passes the log's
masking function (guardian_proxy/logmask.py) — the rewritten body and URL too, so a value the rewrite missed is
shown as `[TYPE]`, never as itself; only the policy statements' text (not from the request) is left as it is.

"What left the machine" comes first and decoded: a rewritten query as [key, value] pairs (the page shows
`key = value` lines), a JSON body pretty-printed, a form body as `key = value` lines; `left` says in one
sentence what went (nothing for a block; the request as it was, not shown, for an allow). `plain` holds the
explanation in plain words, then the numbers (wording.py); `sentence` says it all in one line first.

Stand-ins are shown as themselves, marked (`body_parts` / `query_parts`: [text, None] or [stand-in, TYPE]): a value
of the rewritten request is a stand-in when it is of a kind no one holds (standins.is_standin: an e-mail on a
reserved domain, a fiction-range phone, a test-BIN card, a documentation IP) and it is not in the original request
(so the rewrite made it). Showing it shows no personal data; every other value still passes the log's masking.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, unquote, urlsplit

from .. import standins
from ..codec import decode
from ..decision_log import provenance, record
from ..logmask import mask, mask_host, mask_value
from ..types import Decision, RawRequest
from . import wording

MAX_REWRITTEN_CHARS = 4000
#: detail fields that hold no text from the request (policy statements, numbers) and are not masked
_NOT_FROM_REQUEST = frozenset({"id", "ts", "session", "evidence_detail", "factors"})


def _statement(ss) -> dict:
    st = ss.statement
    return {"id": st.id, "score": round(ss.score, 4), "text": st.text, "practice": st.practice,
            "data_categories": list(st.data_categories), "recipients": list(st.recipients),
            "purposes": list(st.purposes), "condition": st.condition, "retention": st.retention}


def original_text(req: RawRequest) -> str:
    """The original request's URL (decoded) and body (decoded when it can be), lower case: what a stand-in must
    not be found in."""
    try:
        body = decode(req.body, req.header("content-encoding"), 8 * 1024 * 1024).decode("utf-8", "replace")
    except Exception:
        body = req.body.decode("utf-8", "replace")
    return f"{unquote(req.url)}\n{req.url}\n{body}\n{unquote(body)}".lower()


def masked_parts(text: str, original: str) -> list[list]:
    """`text` as [piece, None] (masked by the log's function) and [stand-in, TYPE] parts (shown as they are)."""
    if not text:
        return [[text, None]] if text == "" else []
    from ..extract.patterns import find

    hits = sorted({(s, e, ent) for s, e, ent, _ in find(text)
                   if standins.is_standin(text[s:e]) and text[s:e].strip().lower() not in original},
                  key=lambda h: (h[0], -h[1]))
    parts: list[list] = []
    last = 0
    for s, e, ent in hits:
        if s < last:
            continue
        if s > last:
            parts.append([mask(text[last:s]), None])
        parts.append([text[s:e], ent])
        last = e
    if last < len(text) or not parts:
        parts.append([mask(text[last:]), None])
    return parts


def _joined(parts: list[list]) -> str:
    return "".join(p[0] for p in parts)


def rewritten_form(req: RawRequest, d: Decision) -> dict | None:
    """The rewritten body (decoded, shortened) and path of a transform; None for allow/deny."""
    rw = d.rewrite
    if d.action != "transform" or rw is None:
        return None
    out: dict = {"span_counts": dict(rw.span_counts), "removed_headers": list(rw.remove_headers),
                 "set_headers": sorted(rw.set_headers)}  # header names only
    original = original_text(req)
    shown: dict[str, set[str]] = {}  # type → stand-ins shown
    if rw.url:
        s = urlsplit(rw.url)
        qparts = [[mask(k), masked_parts(v, original)] for k, v in parse_qsl(s.query, keep_blank_values=True)]
        pairs = [[k, _joined(vp)] for k, vp in qparts]
        query = "&".join(f"{k}={v}" for k, v in pairs)
        out["path"] = mask(unquote(s.path or "/")) + (f"?{query}" if query else "")
        out["query"] = pairs
        out["query_parts"] = qparts
        for _, vp in qparts:
            for text, ent in vp:
                if ent:
                    shown.setdefault(ent, set()).add(text)
    if rw.body is not None:
        try:
            raw = decode(rw.body, req.header("content-encoding"), 8 * 1024 * 1024)
            text = raw.decode("utf-8")
        except Exception:  # binary or undecodable: say so, show nothing
            out["body"] = None
            out["body_note"] = f"{len(rw.body)} bytes, not text"
        else:
            text, out["body_format"] = pretty_body(text, req.header("content-type"))
            parts = masked_parts(text[:MAX_REWRITTEN_CHARS], original)
            out["body_parts"] = parts
            out["body"] = _joined(parts)
            out["body_truncated"] = len(text) > MAX_REWRITTEN_CHARS
            for text, ent in parts:
                if ent:
                    shown.setdefault(ent, set()).add(text)
    out["standins"] = [{"type": t, "value": v} for t in sorted(shown) for v in sorted(shown[t])]
    return out


def pretty_body(text: str, content_type: str | None) -> tuple[str, str]:
    """(text, format): JSON indented, a form as `key = value` lines, anything else as it is ("text")."""
    ctype = (content_type or "").lower()
    stripped = text.strip()
    if stripped[:1] in ("{", "[") or "json" in ctype:
        try:
            return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False), "json"
        except ValueError:
            pass
    if "x-www-form-urlencoded" in ctype and stripped:
        pairs = parse_qsl(stripped, keep_blank_values=True)
        if pairs:
            return "\n".join(f"{k} = {v}" for k, v in pairs), "form"
    return text, "text"


def left_words(d: Decision) -> str:
    """One sentence: what of this request left the machine."""
    if d.action == "deny":
        return "Nothing left the machine: the request was blocked before it was sent."
    if d.action == "transform" and d.rewrite is not None:
        n = sum(d.rewrite.span_counts.values())
        return (f"The rewritten request below left the machine ({n} value{'s' if n != 1 else ''} replaced, "
                f"at L{d.final_level or d.start_level}).")
    return "The request left as it was (its content is not shown: the dashboard never shows what was sent as is)."


def detail_of(req: RawRequest, d: Decision, rec: dict | None = None) -> dict:
    rec = dict(rec) if rec is not None else record(req, d)
    a, lk, r = d.six, d.likelihood, d.risk
    rec["six"] = {"domain": a.domain, "host": a.host, "categories": dict(a.categories), "recipient": a.recipient,
                  "owner": a.owner, "purposes": list(a.purposes), "basis": a.basis, "site": a.site,
                  "body_format": a.body_format,
                  "outgoing": {"fields": len(a.fields), "spans": _span_counts(a)}}
    # which recognizer found each span and why (`pattern:email`, `key:em+validator`, `ner:spacy PERSON 0.85`,
    # `propagated from json:$.user.email`): the log's provenance records, never the values
    rec["found"] = rec.get("found") if rec.get("found") is not None else provenance(a)
    rec["found_lines"] = [_found_line(f) for f in rec["found"]]
    rec["evidence_detail"] = {"transparency": d.evidence.transparency, "policy_source": d.evidence.policy_source,
                              "statements": [_statement(s) for s in d.evidence.statements]}
    if lk is not None:
        rec["likelihood"] = {"value": lk.value, "path": lk.path, "u": lk.u, "risky_mass": lk.risky_mass,
                             # an LLM's reason may quote the outgoing text: only the fixed/fast/fallback reasons show
                             "reason": lk.reason if lk.path != "slow" else None}
    if r is not None:
        rec["factors"] = r.model_dump()
    rec["rewritten"] = rewritten_form(req, d)
    rec["left"] = left_words(d)
    rec["plain"] = wording.plain(rec, r)
    types = dict(d.rewrite.span_counts) if d.rewrite is not None and d.rewrite.span_counts else _span_counts(a)
    shown = {s["type"] for s in (rec["rewritten"] or {}).get("standins", [])}
    rec["sentence"] = wording.sentence({**rec, "domain": a.domain or a.host, "site": a.site}, types, shown)
    kept = rec.pop("rewritten")
    rec = mask_value(rec, _NOT_FROM_REQUEST)
    rec["rewritten"] = _mask_rewritten(kept)
    rec["six"]["host"] = mask_host(a.host)
    if isinstance(rec.get("host"), str):
        rec["host"] = mask_host(rec["host"])
    return rec


def _mask_rewritten(rw: dict | None) -> dict | None:
    """The rewritten form with its stand-ins kept: every string passes the log's masking but the stand-in parts
    (already checked: a kind no one holds, made by the rewrite) and the texts masked_parts already masked."""
    if rw is None:
        return None
    out = dict(rw)
    for k in ("body_parts",):
        if out.get(k) is not None:
            out[k] = [[t if ent else mask(t), ent] for t, ent in out[k]]
    if out.get("query_parts") is not None:
        out["query_parts"] = [[mask(k), [[t if ent else mask(t), ent] for t, ent in vp]] for k, vp in out["query_parts"]]
        out["query"] = [[k, _joined(vp)] for k, vp in out["query_parts"]]
    if out.get("body_parts") is not None:
        out["body"] = _joined(out["body_parts"])
    for k in ("path", "body_note", "body_format"):
        if isinstance(out.get(k), str):
            out[k] = mask(out[k])
    out["removed_headers"] = [mask(h) for h in out.get("removed_headers", [])]
    out["set_headers"] = [mask(h) for h in out.get("set_headers", [])]
    return out


def _span_counts(a) -> dict:
    counts: dict[str, int] = {}
    for s in a.spans:
        counts[s.entity] = counts.get(s.entity, 0) + 1
    return counts


def _found_line(f: dict) -> str:
    """One provenance record as the detail page shows it: `EMAIL_ADDRESS at json:$.user.email — key (key:email
    +validator)`, with `×n` when the same recognizer found it more than once there."""
    n = f.get("n", 1)
    why = f.get("why") or ""
    by = f.get("by") or "?"
    return f"{f.get('entity')} at {f.get('at')} — {by}" + (f" ({why})" if why and why != by else "") + \
        (f" ×{n}" if n and n > 1 else "")
