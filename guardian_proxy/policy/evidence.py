"""Stage 2: Action → Evidence (the top-8 statements of the destination's policy, hybrid-scored) and a
transparency level; plus the ingestion entry points the CLI (`policy add`) and the proxy (learning
while browsing) use.

The corpus index is read once at construction; each policy's statements and retrieval index are built
on first use. Results are cached in each policy's index per query: an action's query has few distinct values.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from urllib.parse import urlsplit

from ..domains import registrable_domain
from ..state.policies import Policy
from ..types import Action, Evidence, ScoredStatement
from . import transparency
from .documents import policy_url_kind
from .ingest import IngestReport, ingest
from .retrieval import ALPHA, TOP_K, Query, query_from_action
from .segment import Segmenter
from .store import PolicyStore, policy_index

log = logging.getLogger("guardian_proxy.policy")

MAX_LEARN_CHARS = 2_000_000  # decoded page text handed over by the proxy; more is cut (flag `truncated`)
MAX_LEARNED_DOCS = 4  # per domain


class EvidenceStage:
    def __init__(self, store: PolicyStore | None = None, segmenter: Segmenter | None = None,
                 alpha: float = ALPHA, k: int = TOP_K):
        self.store = store or PolicyStore()
        self.segmenter = segmenter or Segmenter()
        self.alpha = alpha
        self.k = k
        self._lock = threading.Lock()
        self._learned: set[str] = set()

    @classmethod
    def from_dirs(cls, shipped: Path | None, user: Path | None, **kw) -> EvidenceStage:
        return cls(PolicyStore(shipped, user), **kw)

    @classmethod
    def for_settings(cls, settings, shipped: Path | None = None, **kw) -> EvidenceStage:
        """The shipped corpus (default: the package's) and the configured back end's user policies
        (`<state_dir>/policies`, or the fleet's Redis with state.backend redis)."""
        if shipped is None:
            from ..resources import policies_dir

            shipped = policies_dir()
        return cls(PolicyStore.for_settings(settings, shipped), **kw)

    # ------------------------------------------------------------------ retrieval

    def policy_for(self, action: Action) -> Policy | None:
        return self.store.find(action.domain) or (self.store.find(action.owner) if action.owner else None)

    def retrieve(self, action: Action) -> Evidence:
        policy = self.policy_for(action)
        if policy is None:
            return Evidence(statements=[], transparency="none")
        q = query_from_action(action)
        statements, level = self.lookup(policy, q)
        return Evidence(statements=list(statements), transparency=level, policy_source=f"{policy.source}:{policy.domain}")

    def lookup(self, policy: Policy, q: Query) -> tuple[list[ScoredStatement], str]:
        index = policy_index(policy)
        hit = index.cache.get(q)
        if hit is not None:
            return hit
        sts = index.statements
        top = [ScoredStatement(statement=sts[i], score=round(s, 4)) for i, s in index.top(q, self.k, self.alpha)]
        result = (top, transparency.level(index, q))
        if len(index.cache) > 4096:
            index.cache.clear()
        index.cache[q] = result
        return result

    # ------------------------------------------------------------------ ingestion

    def add(self, domain: str, content: str | bytes, content_type: str | None = None, origin: str | None = None,
            name: str | None = None) -> IngestReport:
        """A policy the user gives for a domain (`guardian-proxy policy add`)."""
        return ingest(self.store, self.segmenter, registrable_domain(domain) or domain, content,
                      content_type=content_type, origin=origin, name=name, kind="added")

    def wants(self, url: str) -> bool:
        """Cheap URL test for the proxy's event loop: a privacy-page address not learned yet in this run."""
        if policy_url_kind(url) is None:
            return False
        parts = urlsplit(url)
        return f"{parts.scheme}://{(parts.hostname or '').lower()}{parts.path}" not in self._learned

    def learn(self, url: str, content_type: str | None, text: str) -> IngestReport | None:
        """A page seen through the proxy. Returns None when it is not a candidate (not a privacy page by
        URL, already learned in this run, or the user added this domain's policy by hand)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        kind = policy_url_kind(url)
        if not host or kind is None:
            return None
        page = f"{parts.scheme}://{host}{parts.path}"
        domain = registrable_domain(host)
        with self._lock:
            if page in self._learned:
                return None
            self._learned.add(page)
        existing = self.store.user_policy(domain)  # any process's latest
        if existing and (any(d.get("kind") == "added" for d in existing.documents)
                         or len(existing.documents) >= MAX_LEARNED_DOCS
                         and not any(d.get("origin") == page for d in existing.documents)):
            return None
        flags = []
        if len(text) > MAX_LEARN_CHARS:
            text, flags = text[:MAX_LEARN_CHARS], ["truncated"]
        report = ingest(self.store, self.segmenter, domain, text, content_type=content_type, origin=page,
                        kind="learned", require_policy=url)
        report.flags = sorted(set(report.flags) | set(flags))
        if "not_policy" in report.flags:
            return report
        record = report.log_record()
        record["page"] = page  # the page address without its query; never the page text
        self.store.append_log(record)
        log.info("policy learned while browsing: %s", report.message)
        return report
