"""The log-safe detail of one decision, for the dashboard's detail view.

It holds what the decision log holds plus the text of the evidence statements (policy text, not personal
data), every risk factor with the tier thresholds, the likelihood path and u, levels and rounds, and the
rewritten form of a transformed request (what actually left the machine). Never the original values:
spans are counted per type, and the original body is not read. Every string of the detail passes the log's
masking function (guardian_proxy/logmask.py) — the rewritten body and URL too, so a value the rewrite missed is
shown as `[TYPE]`, never as itself; only the policy statements' text (not from the request) is left as it is.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

from ..codec import decode
from ..decision_log import record
from ..logmask import mask, mask_host, mask_value
from ..types import Decision, RawRequest

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
        query = "&".join(f"{mask(k)}={mask(v)}" for k, v in parse_qsl(s.query, keep_blank_values=True))
        out["path"] = mask(unquote(s.path or "/")) + (f"?{query}" if query else "")
    if rw.body is not None:
        try:
            raw = decode(rw.body, req.header("content-encoding"), 8 * 1024 * 1024)
            text = raw.decode("utf-8")
        except Exception:  # binary or undecodable: say so, show nothing
            out["body"] = None
            out["body_note"] = f"{len(rw.body)} bytes, not text"
        else:
            out["body"] = mask(text[:MAX_REWRITTEN_CHARS])
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
