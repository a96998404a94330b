"""Stage 7: conversations with AI services (CAMP inside the proxy).

For a request `chatapi.recognise` accepts, the stage
1. keys the conversation: HMAC of the destination's registrable domain, a hash of the API key header and
   the conversation id when the API has one (`conversation`, `metadata.conversation_id`, a known
   `previous_response_id` or Ollama `context`), else a fingerprint of the system prompt and first user
   message (two conversations that open with the same words share a session: a conservative merge);
2. finds the personal values in every text of the request (the detector's spans from stage 1, the
   registry's known values, the hard-rule backstop), keeps those that are a person's data in the part of
   the message they sit in (`context.PartContext`: never a JSON key, a field marker or label, a tool, agent
   or enum name, nor a place or date no person is tied to), registers them with the turn they appeared in,
   and computes CPE(t) over the co-occurrence graph of their types;
3. rewrites the whole request: hard-rule types (SSN, card, bank account) → `[BLOCKED]`; the types in
   `session.pseudonymize_before_tau` (default: every direct identifier) → consistent surrogates from the
   first turn; once CPE(t) > τ every value of the conversation (quasi-identifiers included), in every
   message of the history → its surrogate; a real value that equals a surrogate already in use is always
   replaced (so de-masking stays unambiguous);
4. commits new mappings to the vault before the decision is returned (so before the request leaves).

Responses are de-masked with the session's surrogate → real mapping (`reply.py`, `stream.py`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable

from .. import chatapi, codec, urlencoded
from ..config import FactorTables, Settings
from ..standins import phone_key
from ..types import ENTITIES, Decision, RawRequest, Rewrite, Span, TextField, Verdict
from . import files
from .context import PartContext
from .namecues import kin_sex, surname_alone
from .registry import SessionState, normalise
from .reply import read_whole
from .rewrite import (
    BLOCKED,
    HARD_BLOCK,
    NOT_VALUES,
    Hit,
    KnownValues,
    apply,
    backstop,
    like_case,
    located,
    resolve,
    trim_possessive,
)
from .store import SessionStore
from .surrogates import (
    _NAME_PART,
    _TITLES,
    ADDRESS_TYPES,
    SurrogateMaker,
    address_parts,
    overlaps_real,
    street_line,
    street_name,
)
from .vault import Vault

log = logging.getLogger("guardian_proxy")

_AUTH_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")
_SIGV4_KEY = re.compile(r"Credential=([^/,\s]+)/")


def blocked_key(norm: str) -> str:
    return "#" + hashlib.sha256(norm.encode()).hexdigest()[:24]


class SessionStage:
    def __init__(self, settings: Settings, tables: FactorTables,
                 detect: Callable[[list[TextField]], list[Span]] | None = None):
        self.cfg = settings.session
        self.state_dir = settings.state_dir
        self.max_decoded = settings.limits.max_decoded_bytes
        self.detect = detect
        self.tables = tables
        self._w = {k: f.value for k, f in tables.session_weights.items()}
        before = set(self.cfg.pseudonymize_before_tau)
        if "direct" in before:
            before |= {label for label, (_, direct) in ENTITIES.items() if direct}
        self.before = before
        self.keep = set(self.cfg.keep_after_tau) - before  # the attributes a conversation is about
        self.maker = SurrogateMaker()
        self.store = SessionStore(settings.state_dir, self.cfg.idle_expiry_s, settings)  # settings.state's back end

    @property
    def vault(self) -> Vault:
        return self.store.vault

    def weight(self, label: str) -> float:
        if label in self._w:
            return self._w[label]
        cat = ENTITIES.get(label, ("other", False))[0]
        return self.tables.sensitivity[cat].Sd if cat in self.tables.sensitivity else 0.2

    # ------------------------------------------------------------------ request side

    def recognise(self, req: RawRequest, action=None) -> chatapi.ChatRequest | None:
        """The chat request in `req`, or None. `action` (stage 1's) lends its already decompressed body."""
        ws = req.websocket is not None
        ai = getattr(action, "recipient", None) == "ai_service"  # no known shape: the generic dialect, by rule
        if (req.method not in ("POST", "PUT") and not ws) or not req.body or \
                not (ai or chatapi.dialects.find(req.host, req.path, ws)):
            return None
        parsed = getattr(action, "_parsed", None)
        decoded = getattr(parsed, "decoded", None)
        try:
            if decoded is None:
                decoded = codec.decode(req.body, req.header("content-encoding"), self.max_decoded)
        except Exception:
            return None  # not decodable: the general pipeline's rules apply
        ctype = req.header("content-type")
        # no known shape: the generic dialect, by rule, from the same parsed JSON
        chat = chatapi.recognise_body(req.host, req.path, decoded, ctype, ws,
                                      chatapi.dialects.get("ai_generic") if ai else None)
        if chat is None and ai and not ws:  # a file upload or a form
            chat = self._upload(decoded, ctype, req.path)
        elif chat is not None:
            chat.files, chat.unread_files = files.embedded(chat.data)
        if chat is None:
            return None
        for i, att in enumerate(chat.files):
            chat.slots.append(chatapi.Slot((), att.text, "user", max(chat.turns, 1), file=i))
        if ws and chat.conversation is None and chat.previous is None:
            chat.conversation = "ws:" + req.websocket  # one conversation per WebSocket connection
        return chat

    @staticmethod
    def _upload(decoded: bytes, ctype: str | None, path: str) -> chatapi.ChatRequest | None:
        """A raw file upload (the body is the file) or a form (its text fields, its file parts) to an AI service."""
        chat = chatapi.dialects.get("ai_upload").parse(decoded, ctype, path)
        if chat is None:
            return None
        if "parsed" in chat.data:
            chat.files = files.multipart(chat.data["parsed"])
        else:
            att = files.upload(decoded, ctype, path.rsplit("/", 1)[-1] or None,
                               lambda b: chat.data.__setitem__("body", b))
            chat.files = [att] if att is not None else []
        return chat if chat.files or chat.slots else None

    def session_id(self, req: RawRequest, chat: chatapi.ChatRequest, domain: str) -> str:
        v = self.vault
        auth = next((req.header(h) for h in _AUTH_HEADERS if req.header(h)), "")
        if auth.startswith("AWS4-HMAC-SHA256"):  # a signature changes with every request: the key id is the account
            m = _SIGV4_KEY.search(auth)
            auth = "aws:" + (m.group(1) if m else "")
        base = f"{domain}|{v.mac('auth', auth)[:16]}"
        if chat.conversation:
            material = f"{base}|conv|{chat.conversation}"
        elif chat.previous:
            known = v.resolve(chat.previous)
            if known:
                return known
            material = f"{base}|prev|{chat.previous}"
        else:
            material = f"{base}|{chat.kind}|{'history' if chat.history else 'single'}|{chat.prefix()}"
        return v.mac("session", material)[:32]

    def decide(self, req: RawRequest, chat: chatapi.ChatRequest, action, verdict: Verdict | None) -> Decision:
        """The decision of a chat request, built once: its conversation's values pseudonymised (R-CHAT-SESSION: a
        rewrite, or allowed when nothing changes), or blocked when an attached file that carries them cannot be
        rewritten (R-FILE-NOT-REWRITABLE).
        `verdict`: stages 2–5 on it when it holds personal data (their risk is noted, not applied: the session
        decides), None when a stated rule found nothing to score."""
        extra: dict = {"norm": verdict.norm} if verdict is not None and verdict.norm is not None else {}
        extra["chat_api"] = chat.kind
        scored: dict = {} if verdict is None else {"evidence": verdict.evidence, "likelihood": verdict.likelihood,
                                                    "risk": verdict.risk, "override": verdict.override}
        sid = self.session_id(req, chat, action.domain or action.host)
        by_path = self._spans(chat, action)  # NER, if any is left to do, runs outside the session lock
        with self.store.lock(sid):
            st = self.store.state(sid)
            changed, counts, turn, kept, by_cue = self._rewrite(st, chat, by_path)
            self.store.persist(st)  # committed before the request leaves
            self.store.refresh(st)  # the de-masker responses will use
        if by_cue:  # the decision's provenance lists the names only a cue found (a copy: the action may be shared)
            action = action.model_copy(update={"spans": [*action.spans, *by_cue]})
        crossed = st.crossed_turn is not None
        stuck = [att for att in chat.files if not att.commit()]
        if stuck:
            extra.update({"session": sid, "files": len(chat.files)})
            return Decision(
                action="deny", six=action, rule="file-not-rewritable", extra=extra, **scored,
                start_level=verdict.level if verdict is not None else None,
                explanation=f"chat with {action.host} ({chat.kind}): the {', '.join(a.label() for a in stuck)} "
                            "carries values this conversation replaces, and a "
                            f"{stuck[0].kind.upper()} cannot be rewritten: blocked by rule (send its text instead, "
                            "or allow this site)")
        body = None
        if changed:
            raw = chatapi.dialects.get(chat.kind).serialise(chat)
            body = codec.encode(raw, req.header("content-encoding"))
        risk_note = ""
        if verdict is not None:
            risk_note = f"; risk R {verdict.risk.R:.2f} ({verdict.kind}) handled by the session"
        blocked = counts.pop(BLOCKED, 0)
        extra.update({"session": sid, "turn": turn, "cpe": round(st.cpe, 3), "retroactive": crossed,
                      "crossed_turn": st.crossed_turn, "counts": dict(counts), "blocked": blocked,
                      "stream": chat.stream})
        if kept:
            extra["kept"] = dict(kept)  # found values left as typed, by the rule that judged them no one's
        if chat.files or chat.unread_files:
            extra.update({"files": len(chat.files), "files_unread": chat.unread_files})
        return Decision(
            action="transform" if changed else "allow", six=action, rule="chat-session", extra=extra, **scored,
            rewrite=Rewrite(body=body, span_counts=dict(counts)) if changed else None,
            explanation=f"chat with {action.host} ({chat.kind}), turn {turn}: {sum(counts.values())} value(s) "
                        f"pseudonymised{f', {blocked} blocked' if blocked else ''}; CPE {st.cpe:.2f} "
                        f"{'>' if crossed else '≤'} τ {self.cfg.tau:g}"
                        f"{f' since turn {st.crossed_turn}: whole history rewritten' if crossed else ''}"
                        f"{'; left as typed: ' + ', '.join(f'{k} {n}' for k, n in kept.most_common()) if kept else ''}"
                        f"{risk_note}")

    @staticmethod
    def fail_closed(decision: Decision) -> Decision:
        """The session stage failed: the chat request is blocked whatever the tier's fail mode, because
        the conversation's values could not be pseudonymised (R-SESSION-FAIL-CLOSED). A new decision."""
        if decision.action == "deny":
            return decision
        return decision.model_copy(update={
            "action": "deny", "rewrite": None, "rule": "session-error-fail-closed",
            "explanation": "the conversation session failed: a chat request that cannot be pseudonymised is blocked "
                           "by rule"})

    def _spans(self, chat: chatapi.ChatRequest, action) -> dict[str, list[Span]]:
        """Stage 1's spans by path, plus the detector's for chat texts stage 1 did not analyse."""
        by_path: dict[str, list[Span]] = {}
        for sp in getattr(action, "spans", []):
            by_path.setdefault(sp.path, []).append(sp)
        fields = getattr(action, "fields", [])
        seen = {f.path for f in fields}
        # a slot stage 1 read under another path (a form field's embedded JSON, a prompt template) has the same
        # text: its spans are reused rather than the detector run twice
        by_text = {f.text: f.path for f in fields}
        missing = []
        for s in chat.slots:
            if s.path in seen:
                continue
            same = by_text.get(s.text)
            if same is not None:
                by_path[s.path] = [sp.model_copy(update={"path": s.path}) for sp in by_path.get(same, [])]
                continue
            missing.append(TextField(path=s.path, text=s.text,
                                     key=next((p for p in reversed(s.parts) if isinstance(p, str)), None)))
        if missing and self.detect is not None:
            for sp in self.detect(missing):
                by_path.setdefault(sp.path, []).append(sp)
        return by_path

    def _rewrite(self, st: SessionState, chat: chatapi.ChatRequest,
                 by_path: dict[str, list[Span]]) -> tuple[bool, Counter, int, Counter, list[Span]]:
        """Pseudonymise the conversation's values in place: (changed, stand-ins per type, this turn, the found
        values left as typed per reason, the names only a cue found as spans with their cue)."""
        slots = chat.slots
        kept: Counter = Counter()
        base = 0 if chat.history else st.turn
        turn_now = max(chat.turns, 1) if chat.history else (st.turn + chat.turns if chat.turns else max(st.turn, 1))
        turns = [base + s.turn for s in slots]
        ours = self._ours(st)
        per_slot: list[list[Hit]] = []
        by_cue: list[Span] = []
        part = PartContext(chat)
        for i, s in enumerate(slots):
            # a pasted query or form body ("Body=Hi+its+Nadia+Sharif"): the rules read it decoded, as the detector
            # did, and its hits are located back in the text as sent
            view = urlencoded.view(s.text)
            spans = by_path.get(s.path, [])
            if view is not None:
                s, sent, pc = dataclasses.replace(s, text=view[0]), s, PartContext(chat)
                spans = _in_view(spans, view[1], s.text)
            else:
                sent, pc = s, part
            hits = backstop(i, s.text)
            found: list[Hit] = []
            for sp in spans:
                if sp.entity in NOT_VALUES or sp.end <= sp.start or s.text[sp.start:sp.end] != sp.text:
                    continue
                if s.role == "system" and sp.entity == "OCCUPATION":
                    continue  # "You are a helpful assistant": the assistant's persona, not the user's job
                h = _trim(trim_possessive(Hit(i, sp.start, sp.end, sp.entity, sp.text)), s.text)
                if h.end <= h.start or ours(h.text):  # a surrogate sent back (e.g. a reply) stays as it is
                    continue
                if s.role == "assistant" and h.entity not in HARD_BLOCK and normalise(h.text) not in st.entities:
                    continue  # the model's own words add no value of the user's (known ones are found below)
                found.append(pc.tidy(h, s.text))
            found = pc.regroup(s.text, found)
            # the model's own words add no value of the user's
            cued = {id(h): h for h in pc.cued(i, s.text, found)} if s.role != "assistant" else {}
            found += cued.values()
            persons = [h for h in found if h.entity == "PERSON"]
            named: list[Hit] = []
            for h in found:  # a person's value, not the prompt's machinery nor a fact it asks about
                why = pc.why_not(i, s, h, persons, seen=normalise(h.text) in st.entities)
                if why is None:
                    hits.append(h)
                    if id(h) in cued:
                        named.append(h)
                else:
                    kept[why] += 1
            if view is not None:
                hits = located(hits, view[1], sent.text)
                s = sent
            for h in named:  # said in the decision: which rule found it (never the value)
                by_cue.append(Span(path=s.path, start=h.start, end=h.end, entity="PERSON",
                                   category=ENTITIES["PERSON"][0], text=s.text[h.start:h.end], direct=True,
                                   recognizer="session:name-cue", reason=pc.cues.get(id(h), "")))
            per_slot.append(_values(hits))
            for h in per_slot[-1]:
                e = st.add(h.entity, h.text, turns[i], blocked=h.entity in HARD_BLOCK, key=blocked_key,
                           count=s.role != "assistant")  # exposure counts what the user, system or tools disclosed
                if h.entity in self.before and e.entity not in self.before and not e.blocked:
                    e.entity = h.entity  # seen once as a direct identifier: treated as one from now on
                    st.dirty.add(e.norm)
        # exposure and the crossing turn
        st.turn = max(st.turn, turn_now)
        weights = {t: self.weight(t) for t in st.types}
        if st.crossed_turn is None:
            for t in sorted(set(st.types.values()) | {turn_now}):
                if t <= turn_now and st.score(weights, self.cfg.alpha, upto=t) > self.cfg.tau:
                    st.crossed_turn = t
                    break
        st.cpe = st.score(weights, self.cfg.alpha)
        crossed = st.crossed_turn is not None
        # the attributes the user asked about, in their own words (a diagnosis an agent read in someone's e-mail
        # is no question of the user's: past τ it is replaced like the rest)
        asked = {normalise(h.text) for s, hs in zip(slots, per_slot, strict=True) if s.role == "user"
                 for h in hs if h.entity in self.keep}
        active = {n for n, e in st.entities.items() if not e.blocked and e.entity not in NOT_VALUES
                  and (crossed or e.entity in self.before) and not (e.entity in self.keep and n in asked)}
        attributes = sum(1 for hs in per_slot for h in hs if normalise(h.text) in asked) if crossed else 0
        if attributes:  # said in the decision: what the conversation is about stays as typed
            kept["an attribute asked about"] += attributes
        active |= self._surrogates(st, active, slots)  # the parts of a composite address are replaced too
        sig = (st.version, len(st.entities), len(active))
        if st.known is None or st.known[0] != sig:
            st.known = (sig, KnownValues(st, active))
        known = st.known[1]
        counts: Counter = Counter()
        changed = False

        def target(h: Hit) -> tuple[str, str] | None:
            """(replacement, type counted) for a hit that is rewritten; None for one that stays."""
            norm = normalise(h.text)
            if h.entity in HARD_BLOCK or blocked_key(norm) in st.entities:
                return BLOCKED, BLOCKED
            if h.part:
                sur = st.names.get(h.text.casefold())
                return (like_case(sur, h.text, h.text.title()), "PERSON") if sur else None
            e = st.entities.get(norm)
            if e is None or norm not in active or not e.surrogate:
                return None
            return like_case(e.surrogate, h.text, e.original), e.entity

        for i, s in enumerate(slots):
            found = [h for h in known.find(i, s.text)  # values known from earlier turns (this turn's are registered
                     if part.keep(i, s, h, known=True)]  # above), never in a JSON key, a marker or a tool's name
            for h in found:
                if not h.part and normalise(h.text) in st.entities:
                    st.add(h.entity, h.text, turns[i], key=blocked_key, count=s.role != "assistant")
            hits = per_slot[i] + found
            # only hits that are rewritten compete for a stretch of text: a longer span that stays (a
            # quasi-identifier before τ) must not shadow a direct identifier inside it
            plan = {id(h): t for h in hits if (t := target(h)) is not None}
            chosen = resolve([h for h in hits if id(h) in plan])
            for h in chosen:
                counts[plan[id(h)][1]] += 1
            new = apply(s.text, chosen, lambda h, plan=plan: plan[id(h)][0], s.json_text)
            if new != s.text:
                if s.file is not None:
                    chat.files[s.file].new_text = new
                else:
                    chatapi.set_text(chat.data, s.parts, new)
                changed = True
        return changed, counts, turn_now, kept, by_cue

    @staticmethod
    def _ours(st: SessionState) -> Callable[[str], bool]:
        """True for a text that is one of this session's surrogates (or made only of surrogate name parts)."""
        norms = {normalise(e.surrogate) for e in st.entities.values() if e.surrogate}
        parts = {v.casefold() for v in st.names.values()}

        def ours(text: str) -> bool:
            if normalise(text) in norms:
                return True
            toks = [m.group(0).casefold() for m in _NAME_PART.finditer(text)]
            toks = [t for t in toks if t not in _TITLES]
            return bool(toks) and all(t in parts for t in toks)

        return ours

    def _surrogates(self, st: SessionState, active: set[str], slots) -> set[str]:
        """Stand-ins for the active values that have none; the norms of the address parts registered."""
        need = [st.entities[n] for n in active if not st.entities[n].surrogate]
        if not need:
            return set()
        typed = "\n".join(s.text for s in slots)
        text = typed.lower()
        taken = set(st.entities) | {normalise(e.surrogate) for e in st.entities.values() if e.surrogate} | \
            set(st.names) | {v.casefold() for v in st.names.values()}

        real = [e.original for e in st.entities.values()] + list(st.names)

        def avoid(c: str) -> bool:
            return normalise(c) in taken or (len(c) >= 3 and c.lower() in text) or overlaps_real(c, real)

        def number() -> int:
            st.counter += 1
            return st.counter

        def parts_of(e) -> list:
            return (address_parts(e.original) or street_line(e.original)) if e.entity in ADDRESS_TYPES else []

        added: set[str] = set()
        # one move of the years for the whole conversation: the years between two of its dates stay
        years = (-3, -2, -1, 1, 2, 3)[int(self.vault.mac(st.sid, "years", "")[:8], 16) % 6]
        # names first (e-mails use them), then the addresses with the most parts (a shorter one reuses their parts)
        for e in sorted(need, key=lambda e: (e.entity != "PERSON", -len(parts_of(e)), e.first_turn)):
            if e.surrogate:
                continue  # an address part the loop already gave its composite's part
            # one age is one age however it is written: "30 years old" and "(age 30)" move to the same number
            nums = re.findall(r"\d+", e.original) if e.entity == "AGE" else []
            # and one phone number is one number however it is written: "+84 912 407 385" and "0912407385"
            key = f"AGE#{nums[0]}" if len(nums) == 1 else \
                f"PHONE#{phone_key(e.original)}" if e.entity == "PHONE_NUMBER" else e.norm
            seed = int(self.vault.mac(st.sid, "seed", key)[:12], 16)
            parts = parts_of(e)
            if parts:
                sur = self._composite(st, e, parts, seed, avoid, added)
            else:
                person = e.entity == "PERSON"
                sur = self.maker.make(e.entity, e.original, seed, st.names, avoid, number,
                                      kin_sex(typed, e.original) if person else "", years,
                                      surname=person and surname_alone(typed, e.original))
            st.set_surrogate(e, sur)
            taken.add(normalise(sur))
            for n in added:
                if st.entities[n].surrogate:
                    taken.add(normalise(st.entities[n].surrogate))
        return added

    def _composite(self, st: SessionState, e, parts: list, seed: int, avoid, added: set[str]) -> str:
        """The stand-in of a composite address, part by part: a part this conversation already replaces keeps
        its stand-in, the others get one of their kind; every part but a state code or a short postcode is
        registered with its stand-in, so a part held apart is replaced by the same stand-in's part
        and a reply's part is put back."""
        out, pos = [], 0
        for a, b, kind in parts:
            real = e.original[a:b]
            norm = normalise(real)
            known = st.entities.get(norm)
            if known is not None and known.surrogate and not known.blocked:
                sur = known.surrogate
            else:
                sur = self.maker.address_part(kind, real, seed + a, avoid)
            # a state code, a flat's line ("Unit 3") or a postcode of four characters or fewer ("4000") is too
            # short or too common to look for alone; a street line's name without its number ("Larkspur Lane",
            # "Rue des Lilas") is a part too, so a reply that names only the stand-in's street is put back
            held = [(real, sur)] if (a, b) != (0, len(e.original)) else []
            if kind == "street" and len(normalise(street_name(real))) >= 6 and street_name(sur):
                held.append((street_name(real), street_name(sur)))
            if kind in ("region", "unit") or len(norm) < (5 if kind == "postcode" else 3) or \
                    (known is not None and known.blocked):
                held = []
            for real_part, sur_part in held:
                p = st.add(e.entity, real_part, e.first_turn, count=False)  # a part adds no type to the exposure
                if not p.surrogate:
                    st.set_surrogate(p, sur_part)
                if p.entity != e.entity and e.entity in self.before and p.entity not in self.before:
                    p.entity = e.entity  # replaced whenever its composite is
                    st.dirty.add(p.norm)
                added.add(p.norm)
            out += [e.original[pos:a], sur]
            pos = b
        out.append(e.original[pos:])
        return "".join(out)

    # ------------------------------------------------------------------ response side

    def demask_response(self, meta: dict, body: bytes, content_type: str | None) -> bytes | None:
        """A whole decoded chat answer de-masked (the reply filter's whole-body reader, `reply.read_whole`,
        without the agent guard); None when nothing changed."""
        return read_whole(self, meta, content_type, body)

    def close(self) -> None:
        self.store.close()

def _values(hits: list[Hit]) -> list[Hit]:
    """The hits of one text that are registered: every distinct one (overlapping spans are all values; which
    one is rewritten is decided later among those that are), except that a hard-rule hit owns its stretch of
    text (so an SSN also tagged GOVERNMENT_ID is never kept with its original)."""
    hard = [h for h in hits if h.entity in HARD_BLOCK]
    out, seen = [], set()
    for h in sorted(hits, key=lambda h: (h.entity not in HARD_BLOCK, h.start, -h.end)):
        if (h.start, h.end, h.entity) in seen:
            continue
        if h.entity not in HARD_BLOCK and any(h.start < x.end and x.start < h.end for x in hard):
            continue
        seen.add((h.start, h.end, h.entity))
        out.append(h)
    return out


def _in_view(spans: list[Span], offsets: tuple[int, ...], view: str) -> list[Span]:
    """Stage 1's spans of a text located in its decoded view (`urlencoded.view`); the detector found them there."""
    return [sp.model_copy(update={"start": at[0], "end": at[1], "text": view[at[0]:at[1]]})
            for sp in spans if (at := urlencoded.in_view(offsets, sp.start, sp.end)) is not None]


def _trim(h: Hit, text: str) -> Hit:
    while h.start < h.end and not text[h.start].isalnum() and text[h.start] not in "+$€£¥(":
        h.start += 1
    while h.end > h.start and not text[h.end - 1].isalnum() and text[h.end - 1] not in ")":
        h.end -= 1
    h.text = text[h.start:h.end]
    return h

