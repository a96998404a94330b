"""The agent stage: CDI for agents whose LLM calls pass through the proxy.

Runs after the session stage on a chat request (so it sees the pseudonymised body that will leave):
1. detects an agent step (tools declared, latest messages are tool results);
2. `prompt`: adds a fixed privacy instruction; `cdi`/`cdi+guard`: adds the instructor's step-specific
   guidance (what to withhold, what is fine to share) when it withholds something (a step whose tool
   results hold nothing to withhold leaves the request as sent), in the field each API takes instructions
   in (`shapes.inject`: the leading system message, `system`, `instructions`, `systemInstruction`);
3. keeps the guidance for the response, where `guard`/`cdi+guard` check every tool call the model
   proposes (whole JSON responses and streamed fragments) and remove the sentences that leak withheld
   items; a leak caught despite guidance goes to the experience log.

Modes come from `agents.mode` with per-host overrides in `agents.hosts` (host or registrable domain).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

from .. import codec
from ..chatapi import dialects
from ..config import AgentSettings
from ..types import Decision, RawRequest, Rewrite
from .experience import ExperienceLog
from .guard import Guard
from .instructor import Guidance, Instructor
from .norms import Norms
from .records import RecordModel
from .shapes import PROMPT, inject, tool_calls
from .step import detect
from .stream import StreamGuard

log = logging.getLogger("guardian_proxy")
MODES = ("off", "prompt", "guard", "cdi", "cdi+guard")
_KEEP = 512  # guidance kept for responses still to come (LRU by decision id)


def _at(data, parts: tuple):
    node = data
    for p in parts:
        try:
            node = node[p]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _originals(step, chat) -> None:
    """Each tool result's text as the client sent it (`ToolResult.original`), where the session stage pseudonymised
    it: its slot's text (`chatapi.Slot`, read before the rewrite) for the string now at the slot's place. Only who a
    record is from is read from it (`records.records_of`), to recognise a recipient the reply names in the clear
    (the guard reads the reply de-masked); a result made of several slots keeps its pseudonymised parties only."""
    sent = {}
    for slot in getattr(chat, "slots", None) or []:
        if slot.role == "tool" and slot.file is None:
            now = _at(chat.data, slot.parts)
            if isinstance(now, str) and now != slot.text:
                sent[now] = slot.text
    if sent:
        for r in step.results:
            r.original = sent.get(r.text)


class AgentStage:
    def __init__(self, settings: AgentSettings, experience: ExperienceLog | None = None,
                 persons: Callable[[str], int] | None = None, norms: Norms | None = None, llm=None,
                 llm_timeout: float = 20.0):
        self.cfg = settings
        self.norms = norms or Norms.load(settings.norms_file)
        records = None
        if settings.record_model:
            records = RecordModel.load(settings.record_model_file)
            if settings.record_threshold is not None:
                records.threshold = settings.record_threshold
        if settings.instructor == "llm" and llm is None:
            log.warning("guardian: agents.instructor is 'llm' but no llm back end is configured; deterministic guidance only")
        if settings.judge == "llm" and (llm is None or records is None):
            log.warning("guardian: agents.judge is 'llm' but no llm back end or no record model; the record model decides")
        self.instructor = Instructor(self.norms, persons=persons, records=records,
                                     llm=llm if settings.instructor == "llm" else None, llm_timeout=llm_timeout,
                                     judge=llm if settings.judge == "llm" else None)
        self.guard = Guard(self.instructor)
        self.experience = experience
        self._kept: OrderedDict[str, tuple[Guidance, str, dict, str]] = OrderedDict()
        self._lock = threading.Lock()

    def mode_for(self, host: str, domain: str) -> str:
        return self.cfg.hosts.get(host) or self.cfg.hosts.get(domain) or self.cfg.mode

    # ------------------------------------------------------------------ request

    def apply(self, req: RawRequest, chat, decision: Decision) -> Decision:
        """`chat` is the session stage's ChatRequest: its `data` is the body as it will leave (the session
        rewrites it in place and serialises it), so nothing is decoded or parsed again here. The session's
        decision with the guidance added (a new Decision), or `decision` itself when this stage has nothing to
        add."""
        mode = self.mode_for(req.host, decision.six.domain)
        if mode == "off" or decision.action == "deny":
            return decision
        kind, data = chat.kind, chat.data
        step = detect(kind, data)
        if step is None or not step.latest_is_tool_result:
            return decision
        _originals(step, chat)
        rel = self.norms.relationship(step.instruction)
        injected = False
        if mode == "prompt":  # the fixed instruction: no guidance to work out
            injected = inject(kind, data, PROMPT, first=True)
            guidance = None
        else:
            guidance = self.instructor.guide(step, rel)
            if mode in ("cdi", "cdi+guard") and guidance.withhold:  # nothing to withhold: the prompt stays as sent
                injected = inject(kind, data, guidance.text)
        update: dict = {}
        if injected:
            body = codec.encode(dialects.get(kind).serialise(chat), req.header("content-encoding"))
            rw = decision.rewrite
            update["rewrite"] = rw.model_copy(update={"body": body}) if rw is not None else Rewrite(body=body)
            if decision.action == "allow":
                update["action"] = "transform"
        if guidance is not None and "guard" in mode:
            with self._lock:
                self._kept[decision.id] = (guidance, mode, data, kind)
                while len(self._kept) > _KEEP:
                    self._kept.popitem(last=False)
        agent = {"mode": mode, "relationship": rel, "injected": injected}
        if guidance is not None:
            agent.update(withhold=len(guidance.withhold), shareable=len(guidance.share))
        update["extra"] = {**decision.extra, "agent": agent}
        return decision.model_copy(update=update)

    # ------------------------------------------------------------------ a request decided in a worker process

    def handoff(self, decision_id: str):
        """What the response guard of `decision_id` needs (kept by `apply`), taken out of this process: a worker
        process (guardian_proxy/workers.py) sends it back with the decision, and the proxy's `keep` holds it for
        the reply. None when the request had no guidance to keep."""
        with self._lock:
            return self._kept.pop(decision_id, None)

    def keep(self, decision_id: str, kept) -> None:
        with self._lock:
            self._kept[decision_id] = kept
            while len(self._kept) > _KEEP:
                self._kept.popitem(last=False)

    # ------------------------------------------------------------------ response

    def _guidance(self, decision_id: str | None):
        with self._lock:
            return self._kept.get(decision_id or "")

    def _checker(self, kept) -> Callable[[str, str], str]:
        guidance, mode, context, kind = kept

        def check(tool: str, arguments: str) -> str:
            res = self.guard.check_call(tool, arguments, guidance)
            if res.removed:
                log.info("guardian: guard removed %d sentence(s) from %s (%s)", res.removed, tool, ",".join(res.types))
                if self.experience is not None and mode == "cdi+guard":
                    self.experience.record(kind, context, guidance, tool, arguments, res)
            return res.arguments
        return check

    def guard_json(self, decision_id: str | None, kind: str, body: bytes) -> bytes | None:
        kept = self._guidance(decision_id)
        if kept is None:
            return None
        try:
            data = json.loads(body)
        except ValueError:
            return None
        check = self._checker(kept)
        changed = False
        for tool, args, put in list(tool_calls(kind, data)):
            new = check(tool, args)
            if new != args:
                put(new)
                changed = True
        return json.dumps(data, ensure_ascii=False).encode() if changed else None

    def guard_stream(self, decision_id: str | None, kind: str) -> StreamGuard | None:
        kept = self._guidance(decision_id)
        if kept is None or kind not in ("openai_chat", "anthropic", "openai_responses"):
            return None
        return StreamGuard(kind, self._checker(kept))
