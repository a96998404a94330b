"""The log-safe detail of one decision, for the dashboard's detail view.

It holds what the decision log holds plus the text of the evidence statements (policy text, not personal
data), every risk factor with the tier thresholds, the likelihood path and u, levels and rounds, and the
rewritten form of a transformed request (what actually left the machine). Never the original values:
spans are counted per type, and the original body is not read.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..codec import decode
from ..decision_log import record
from ..types import Decision, RawRequest

MAX_REWRITTEN_CHARS = 4000


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
        out["path"] = (s.path or "/") + (f"?{s.query}" if s.query else "")
    if rw.body is not None:
        try:
            raw = decode(rw.body, req.header("content-encoding"), 8 * 1024 * 1024)
            text = raw.decode("utf-8")
        except Exception:  # binary or undecodable: say so, show nothing
            out["body"] = None
            out["body_note"] = f"{len(rw.body)} bytes, not text"
        else:
            out["body"] = text[:MAX_REWRITTEN_CHARS]
            out["body_truncated"] = len(text) > MAX_REWRITTEN_CHARS
    return out


def detail_of(req: RawRequest, d: Decision, rec: dict | None = None) -> dict:
    rec = dict(rec) if rec is not None else record(req, d)
    a, lk, r = d.six, d.likelihood, d.risk
    rec["six"] = {"domain": a.domain, "host": a.host, "categories": dict(a.categories), "recipient": a.recipient,
                  "owner": a.owner, "purposes": list(a.purposes), "basis": a.basis, "site": a.site,
                  "body_format": a.body_format,
                  "outgoing": {"fields": len(a.fields), "spans": _span_counts(a)}}
    rec["evidence_detail"] = {"transparency": d.evidence.transparency, "policy_source": d.evidence.policy_source,
                              "statements": [_statement(s) for s in d.evidence.statements]}
    if lk is not None:
        rec["likelihood"] = {"value": lk.value, "path": lk.path, "u": lk.u, "risky_mass": lk.risky_mass,
                             # an LLM's reason may quote the outgoing text: only the fixed/fast/fallback reasons show
                             "reason": lk.reason if lk.path != "slow" else None}
    if r is not None:
        rec["factors"] = r.model_dump()
    rec["rewritten"] = rewritten_form(req, d)
    return rec


def _span_counts(a) -> dict:
    counts: dict[str, int] = {}
    for s in a.spans:
        counts[s.entity] = counts.get(s.entity, 0) + 1
    return counts
