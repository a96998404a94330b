"""Any other AI service: a JSON body sent to a host the recipient table classes `ai_service` whose shape no
dialect knows (a new web app, a private gateway, an API this version does not list).

It is never matched by address (`paths` is empty): the session stage falls back to it for an AI service's
JSON body that no other dialect accepted. Stated rules, chosen so that such a conversation goes on instead
of being blocked or garbled:

- every string leaf is a text the user wrote (role user, turn 1), except the keys no dialect analyses
  (`SKIP_KEYS`: ids, model, role, type, signatures …) and strings that look like tokens (no space and 40+
  characters: ids, hashes, base64) — so values are pseudonymised consistently and SSN, card and bank
  account numbers become [BLOCKED], instead of whole fields being elided by the general rewriter;
- the server is assumed to keep the history (`history` False); the conversation is the body's id field
  when it has one (`conversation_id`, `conversationId`, `chat_id`, `chatId`, `thread_id`, `session_id`,
  `sessionId`), else one session per service and account (a conservative merge: exposure accumulates);
- replies are de-masked as whole JSON or, for streams (SSE/NDJSON), event by event (a surrogate split
  across two events of an unknown stream is not restored: there is no delta to hold back).
"""

from __future__ import annotations

from ...bodies import BodyLimits, parse_body, write_back
from ..dialect import Dialect
from ..requests import SKIP_KEYS, ChatRequest, Walker

_CONV_KEYS = ("conversation_id", "conversationId", "chat_id", "chatId", "thread_id", "threadId", "session_id",
              "sessionId")
_MAX_SLOTS = 512


class GenericAI(Dialect):
    name = "ai_generic"
    service = "any other AI service (JSON bodies, by rule)"
    priority = -100

    def matches(self, host, path):
        return False  # chosen by the recipient class, never by address

    def read(self, data, path):
        if not isinstance(data, dict | list):
            return None
        w = Walker()
        w.turn = 1
        self._walk(w, data, (), 0)
        if not w.slots:
            return None
        req = ChatRequest(kind=self.name, data=data, history=False, turns=1)
        conv = next((data.get(k) for k in _CONV_KEYS if isinstance(data, dict) and isinstance(data.get(k), str | int)),
                    None)
        req.conversation = str(conv) if conv is not None else "service"
        req.stream = isinstance(data, dict) and data.get("stream") is True
        req.slots = w.slots
        return req

    def _walk(self, w: Walker, value, parts: tuple, depth: int) -> None:
        if depth > 32 or len(w.slots) >= _MAX_SLOTS:
            return
        if isinstance(value, dict):
            for k, v in value.items():
                if k not in SKIP_KEYS and k not in _CONV_KEYS:
                    self._walk(w, v, parts + (k,), depth + 1)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self._walk(w, v, parts + (i,), depth + 1)
        elif isinstance(value, str) and not (len(value) >= 40 and " " not in value):
            w.add(parts, value, "user")


class AIUpload(Dialect):
    """A file upload or form sent to an AI service: the raw body is the file (as the web apps' upload URLs take
    it; `chat.data["body"]`), or a multipart or URL-encoded form (OpenAI `/v1/files` and the like: its text
    fields are user slots, `chat.data["texts"]`, its file parts are read by the session stage,
    `chat.data["parsed"]`) — so a prompt posted as a form is pseudonymised as it would be in JSON."""

    name = "ai_upload"
    service = "files uploaded to an AI service (text, DOCX, PDF)"
    priority = -100

    def matches(self, host, path):
        return False

    def parse(self, body, content_type, path):
        ct = (content_type or "").lower()
        if ct.startswith(("multipart/", "application/x-www-form-urlencoded")):  # the same texts as in JSON
            pb = parse_body(body, content_type, None, BodyLimits())
            if pb.format not in ("multipart", "form"):
                return None
            texts = {f.path: f.text for f in pb.fields}
            chat = ChatRequest(kind=self.name, data={"parsed": pb, "texts": texts, "orig": dict(texts)},
                               history=False, conversation="service", turns=1)
            w = Walker()
            w.turn = 1
            for path, text in texts.items():
                w.add(("texts", path), text, "user")
            chat.slots = w.slots
            return chat
        if not body or "json" in ct or "form" in ct:
            return None
        return ChatRequest(kind=self.name, data={"body": body}, history=False, conversation="service", turns=1)

    def serialise(self, chat):
        if "parsed" in chat.data:
            changed = {p: t for p, t in chat.data["texts"].items() if t != chat.data["orig"][p]}
            return write_back(chat.data["parsed"], changed)
        return chat.data["body"]


DIALECTS = [GenericAI(), AIUpload()]
