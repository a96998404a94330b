"""The instructor: step-specific privacy guidance from the context of an agent step (CDI).

Deterministic by default. The recipient's relationship comes from the user's instruction (and, in the
guard, from the tool call). With the record model (`records.RecordModel`, the default in the proxy),
whole records (an e-mail, a note, an event) are judged: a record the model scores at or above its
threshold is *withheld* unless the norms table allows every sensitive data type it carries for this
relationship (health information to the patient's doctor), or it is the user's own information and the
relationship is one the norms' `own_data` allows (spouse, family, doctor, lawyer, accountant); identifiers and credentials (the norms'
`always` types) are withheld wherever they are. Without the model every sentence is classified with the
norms table alone. The rest is *shareable*. The guidance names both lists, so the agent can still
finish the task.

An LLM instructor (optional, `agents.instructor: llm` with an `llm` back end configured) writes a short
step-specific explanation through the back-end interface (`llm.LLMBackend.chat`); it is put in front of
the deterministic lists, which stay as they are, so a weak model cannot loosen them. A back end that
fails or times out leaves the deterministic guidance alone.

An LLM record judge (optional, `agents.judge: llm` with an `llm` back end, e.g. `openai_compatible` with a
small local instruct model): the records the record model is unsure of (`judge_band`: P(must not flow) within
0.25 of its threshold) are put to the back end in one JSON call per step, with the user's task and the recipient's
relationship; its answer decides those records (withheld, with the data types the norms do not allow or as
another person's context; or shareable, whatever the norms' allow lists say). Records outside the band stay
the model's; a failure, a timeout or an answer that does not parse leaves the model's decisions.

A withheld item of a record whose sender or data subject is known (`items.parties_of`) and that is theirs
(`Norms.subjects_own`) carries their identities (`Judged.owners`): the guidance lists it apart, as information
that may go back only to them, and `Guidance.to` makes it shareable for a message whose recipients are all them
(`norms.returns_to`, what the guard calls with the tool call's addresses).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from .items import Item, content_words
from .norms import Classified, Norms, addressed, heuristic_persons, identities, returns_to
from .records import Record, RecordModel, classify_records, norms_flags, object_of, records_of
from .step import AgentStep

log = logging.getLogger("guardian_proxy")
MAX_LISTED = 12
LLM_PROMPT = ("You write privacy guidance for an AI agent's next action. In at most four sentences, tell the agent "
              "what it must leave out of its next message and why (whose information it is and why this recipient "
              "should not get it), and what it may use to finish the user's task. Do not repeat the lists verbatim.")
JUDGE_BAND = (-0.25, 0.25)  # the records the judge decides: P(must not flow) this far around the model's threshold
JUDGE_MAX = 12  # records put to the judge per step (the most uncertain first)
JUDGE_CHARS = 700
JUDGE_PROMPT = ("You judge information flows by contextual integrity. A user asked an AI agent to do a task; the "
                "agent read the numbered records below and will now send a message to a recipient. For each record, "
                "decide whether its information may go into that message: withhold it when it is another person's "
                "private matter (health, finances, relationships, legal trouble, security details, personal "
                "struggles) or the user's private information that this recipient has no reason to get, given the "
                "task. Share it when the task needs it and it is appropriate for this recipient. Answer with the "
                "numbers of the records to withhold.")
JUDGE_SCHEMA = {"type": "object", "properties": {"withhold": {"type": "array", "items": {"type": "integer"}}},
                "required": ["withhold"]}
CONTEXT_TYPE = "other_person_context"  # a withheld record that carries no cue of a listed data type


def judge_band(threshold: float) -> tuple[float, float]:
    """The P(must not flow) band, [low, high), of the records the LLM record judge decides."""
    return max(0.0, threshold + JUDGE_BAND[0]), min(1.0, threshold + JUDGE_BAND[1])


def flagged_types(norms: Norms, c: Classified, relationship: str) -> list[str]:
    """What a record the record model flags is withheld as: its data types (cue weight from the norms'
    `personal_threshold`) that this relationship may not receive, or `CONTEXT_TYPE` when it carries none but is
    about someone (names a person or refers to one). Nothing (it is shared) when it is the user's own information
    and `own_data` allows the relationship (a first-person record that speaks to someone, "you", is a message between
    two people whose "I" may be the other one: "Hey Jane, I've been struggling with anxiety …" read in the user's
    inbox is its sender's information, so `own_data` does not release it), when it is about no other person and the
    norms allow every type it carries for the relationship (a room change to a coworker), or when it carries no type
    and is about no one: a tool's impersonal output ("Begin with the value 7.", a forecast, a price) is nobody's
    context, whatever the model scores. Another person's flagged record is withheld as all its types: the norms'
    relationship is the recipient's to the user ("my doctor", "my colleague"), so the allow lists (health information
    to a doctor, a schedule to a coworker) cannot tell that the recipient is that person's doctor or colleague."""
    if c.own and not c.third_party and not c.addressed and relationship in norms.spec.own_data.get("allow", []):
        return []
    found = [t for t, w in c.types.items() if w >= norms.spec.personal_threshold]
    if not found:
        return [CONTEXT_TYPE] if c.personal else []
    if c.third_party:  # the allow lists name the recipient's relationship to the user, not to the person it is about
        return found
    return [t for t in found if relationship not in norms.spec.allow.get(t, [])]


@dataclass
class Judged:
    item: Item
    types: list[str]  # data types that must not flow (empty: shareable)
    words: set[str] = field(default_factory=set)
    score: float | None = None  # the record model's P(must not flow) for the item's record
    owners: frozenset[str] = frozenset()  # identities of the sender or subject whose own information it is
    owner: str = ""  # them, as the text the model reads names them

    @property
    def withheld(self) -> bool:
        return bool(self.types)


@dataclass
class Guidance:
    relationship: str
    judged: list[Judged]
    text: str

    @property
    def withhold(self) -> list[Judged]:
        """What must not go to this recipient (what may go back only to its owner included)."""
        return [j for j in self.judged if j.withheld]

    @property
    def share(self) -> list[Judged]:
        return [j for j in self.judged if not j.withheld]

    @property
    def returnable(self) -> list[Judged]:
        """Withheld items that are their sender's or subject's own: they may go back to them (`to`)."""
        return [j for j in self.judged if j.withheld and j.owners]

    def to(self, recipients: list[frozenset[str]]) -> Guidance:
        """The guidance for a message to `recipients` (the `norms.identities` of each): the items that are all
        recipients' own information (`norms.returns_to`) are shareable."""
        back = {id(j) for j in self.returnable if returns_to(j.owners, recipients)}
        if not back:
            return self
        return Guidance(self.relationship, [Judged(j.item, [], j.words, j.score, j.owners, j.owner)
                                            if id(j) in back else j for j in self.judged], self.text)


class Instructor:
    def __init__(self, norms: Norms, persons: Callable[[str], int] | None = None, llm=None,
                 records: RecordModel | None = None, llm_timeout: float = 20.0, judge=None):
        self.norms = norms
        self.persons = persons or heuristic_persons
        self.llm = llm
        self.judge_llm = judge
        self.llm_timeout = llm_timeout
        self.records = records

    def judge(self, items: list[Item], relationship: str) -> list[Judged]:
        out: list[Judged] = []
        about: dict[str, bool] = {}  # record object -> a person is named in it (e.g. in its title)
        for it in items:
            named = self.persons(it.text) > 0
            c = self.norms.classify(it.text, 1 if named else 0)
            obj = object_of(it.record)
            personal = c.personal or about.get(obj, False)
            about[obj] = about.get(obj, False) or named
            out.append(Judged(it, self.norms.withhold(c, relationship, personal), content_words(it.text)))
        # one JSON object (a note, an e-mail, an event) is about one thing: when a sentence of it is withheld
        # for a strong type, the whole object is
        strong: dict[str, list[str]] = {}
        for j in out:
            hard = [t for t in j.types if t in self.norms.strong]
            if hard:
                strong.setdefault(object_of(j.item.record), hard)
        for j in out:
            if not j.types and object_of(j.item.record) in strong and j.item.record != "outgoing":
                j.types = list(strong[object_of(j.item.record)])
        by_object: dict[str, list[Judged]] = {}
        for j in out:
            if j.item.parties:
                by_object.setdefault(object_of(j.item.record), []).append(j)
        for js in by_object.values():
            self._owned(js, js[0].item.parties, frozenset().union(*(identities(p) for p in js[0].item.parties)))
        return out

    def _owned(self, judged: list[Judged], parties: tuple[str, ...], owners: frozenset[str]) -> None:
        """Mark the items of one record that are its sender's or subject's own (`Norms.subjects_own`)."""
        if not owners or not any(j.withheld for j in judged):
            return
        label = ", ".join(parties[:2])
        for j, mine in zip(judged, self.norms.subjects_own([j.item.text for j in judged], parties, self.persons),
                           strict=True):
            if mine:
                j.owners, j.owner = owners, label

    def judge_records(self, recs: list[Record], relationship: str, instruction: str) -> list[Judged]:
        assert self.records is not None
        texts = [r.text for r in recs]
        classified = classify_records(self.norms, texts)
        probs = self.records.scores(texts, instruction, norms_flags(self.norms, classified, relationship))
        judged = self._judged(texts, probs, relationship, instruction) if self.judge_llm is not None else {}
        cut = self.norms.spec.personal_threshold
        out: list[Judged] = []
        for n, (rec, c, p) in enumerate(zip(recs, classified, probs, strict=True)):
            types: list[str] = []
            if n in judged:  # the LLM judge's word is final on the records the model was unsure of
                p = 1.0 if judged[n] else 0.0
                found = [t for t, w in c.types.items() if w >= cut]
                types = ([t for t in found if relationship not in self.norms.spec.allow.get(t, [])] or [CONTEXT_TYPE]
                         if judged[n] else [])
            elif p >= self.records.threshold:
                types = flagged_types(self.norms, c, relationship)
            mine = [Judged(it, list(types or self.norms.withhold(self.norms.classify(it.text), relationship,
                                                                 personal=False)), content_words(it.text), p)
                    for it in rec.items]
            if rec.parties:
                self._owned(mine, rec.parties, rec.owners)
            out.extend(mine)
        return out

    def _judged(self, texts: list[str], probs: list[float], relationship: str, instruction: str) -> dict[int, bool]:
        """The LLM record judge on the records in `judge_band` (see the module's docstring): record index ->
        withhold; empty when none is unsure or the back end failed."""
        assert self.records is not None
        lo, hi = judge_band(self.records.threshold)
        mid = self.records.threshold
        unsure = sorted((i for i, p in enumerate(probs) if lo <= p < hi), key=lambda i: abs(probs[i] - mid))[:JUDGE_MAX]
        if not unsure:
            return {}
        listed = "\n\n".join(f"[{n + 1}] {' '.join(texts[i].split())[:JUDGE_CHARS]}" for n, i in enumerate(unsure))
        ask = (f"The user's task:\n{instruction[:2000]}\n\nThe recipient's relationship to the user: "
               f"{relationship.replace('_', ' ')}\n\nRecords:\n{listed}")
        try:
            answer = self.judge_llm.chat_json([{"role": "system", "content": JUDGE_PROMPT},
                                               {"role": "user", "content": ask}], JUDGE_SCHEMA, max_tokens=120,
                                              timeout=self.llm_timeout)
            chosen = {int(n) for n in answer["withhold"]}
        except Exception as e:  # noqa: BLE001 - any back-end failure keeps the record model's decisions
            log.warning("guardian: LLM record judge failed (%s); the record model decides", e)
            return {}
        return {i: n + 1 in chosen for n, i in enumerate(unsure)}

    def guide(self, step: AgentStep, relationship: str | None = None) -> Guidance:
        rel = relationship or self.norms.relationship(step.instruction)
        recs = records_of(step.results)
        if self.records is not None and recs:
            judged = self.judge_records(recs, rel, step.instruction)
        else:
            judged = self.judge([i for r in recs for i in r.items], rel)
        text = render(rel, judged, addressed(step.instruction))
        if self.llm is not None:
            text = self._explained(step, text)
        return Guidance(rel, judged, text)

    def _explained(self, step: AgentStep, rules: str) -> str:
        ask = f"The user's task:\n{step.instruction[:2000]}\n\nThe deterministic decision:\n{rules}"
        try:
            prose = self.llm.chat([{"role": "system", "content": LLM_PROMPT}, {"role": "user", "content": ask}],
                                  max_tokens=200, timeout=self.llm_timeout).strip()
        except Exception as e:  # noqa: BLE001 - any back-end failure keeps the deterministic guidance
            log.warning("guardian: LLM instructor failed (%s); deterministic guidance only", e)
            return rules
        return f"{prose}\n\n{rules}" if prose else rules


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(relationship: str, judged: list[Judged], named: list[frozenset[str]] | None = None) -> str:
    """The guidance text. A withheld item that is its sender's or subject's own is listed apart, as theirs to get
    back, unless the user's instruction addresses the message to others (`named`: its e-mail addresses)."""
    returnable = [j for j in judged if j.withheld and j.owners and (not named or returns_to(j.owners, named))]
    withhold = [j for j in judged if j.withheld and not any(j is r for r in returnable)]
    share = [j for j in judged if not j.withheld]
    who = "the public" if relationship == "public" else (
        f"a recipient whose relationship is '{relationship}'" if relationship != "unknown"
        else "a recipient whose relationship to the people mentioned is not established")
    lines = [
        "Privacy guidance for your next action (from guardian-proxy, based on contextual-integrity norms).",
        f"Your next message goes to {who}.",
    ]
    if withhold:
        lines.append("Do NOT include the following information (it is about other people or sensitive, and this "
                     "recipient is not an appropriate one for it):")
        for j in withhold[:MAX_LISTED]:
            lines.append(f"- \"{_quote(j.item.text)}\" ({', '.join(t.replace('_', ' ') for t in j.types)})")
        if len(withhold) > MAX_LISTED:
            lines.append(f"- and {len(withhold) - MAX_LISTED} more items of the same kinds")
    elif not returnable:
        lines.append("Nothing you observed needs to be withheld from this recipient.")
    if returnable:
        lines.append("This is the own information of the person who sent it or whom it is about: use it only in a "
                     "message to that person (quoting or answering them), never in one to anyone else:")
        for j in returnable[:MAX_LISTED]:
            lines.append(f"- \"{_quote(j.item.text)}\" (their own: {_quote(j.owner, 80)})")
        if len(returnable) > MAX_LISTED:
            lines.append(f"- and {len(returnable) - MAX_LISTED} more items of theirs")
    if share:
        lines.append("You may use this information to complete the user's task:")
        for j in share[:MAX_LISTED]:
            lines.append(f"- \"{_quote(j.item.text, 120)}\"")
    lines.append("Complete the task with the shareable information only" + (
        " (and, in a message to its owner only, their own information)" if returnable else "")
                 + "; if the task truly needs a withheld item, ask the user instead of sending it.")
    return "\n".join(lines)
