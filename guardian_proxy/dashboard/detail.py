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
explanation in plain words, then the numbers (wording.py).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, unquote, urlsplit

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


def rewritten_form(req: RawRequest, d: Decision) -> dict | None:
    """The rewritten body (decoded, shortened) and path of a transform; None for allow/deny."""
    rw = d.rewrite
    if d.action != "transform" or rw is None:
        return None
    out: dict = {"span_counts": dict(rw.span_counts), "removed_headers": list(rw.remove_headers),
                 "set_headers": sorted(rw.set_headers)}  # header names only
    if rw.url:
        s = urlsplit(rw.url)
        pairs = [[mask(k), mask(v)] for k, v in parse_qsl(s.query, keep_blank_values=True)]
        query = "&".join(f"{k}={v}" for k, v in pairs)
        out["path"] = mask(unquote(s.path or "/")) + (f"?{query}" if query else "")
        out["query"] = pairs
    if rw.body is not None:
        try:
            raw = decode(rw.body, req.header("content-encoding"), 8 * 1024 * 1024)
            text = raw.decode("utf-8")
        except Exception:  # binary or undecodable: say so, show nothing
            out["body"] = None
            out["body_note"] = f"{len(rw.body)} bytes, not text"
        else:
            text, out["body_format"] = pretty_body(text, req.header("content-type"))
            out["body"] = mask(text[:MAX_REWRITTEN_CHARS])
            out["body_truncated"] = len(text) > MAX_REWRITTEN_CHARS
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
    rec = mask_value(rec, _NOT_FROM_REQUEST)
    rec["six"]["host"] = mask_host(a.host)
    if isinstance(rec.get("host"), str):
        rec["host"] = mask_host(rec["host"])
    return rec


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
