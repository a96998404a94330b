"""A local server speaking the OpenAI chat API the way Ollama, llama.cpp's server, vLLM and LM Studio do,
for the `openai_compatible` back end's tests.

Endpoints: GET /v1/models (the configured model ids) and POST /v1/chat/completions (non-streaming).
It answers deterministically by what the caller's system message asks for:
- the likelihood slow path (likelihood/slow.py) → {"likelihood": <likelihood>, "reason": "statement 1 permits it"}
- the adversarial guesser (anonymize/guesser.py) → {"guesses": [{"value": "Springfield", ...}]}
- L4 rewriting / L5 paraphrase (anonymize/llm_rewrite.py) → "REWRITE: " / "PARAPHRASE: " + the text with
  every "Firstname Lastname" replaced by "a person"
- the agent instructor (agents/instructor.py) → one sentence of guidance (PROSE)
- the agents' record judge (agents/instructor.py) → {"withhold": [the numbered records that tell a diagnosis]}
Knobs on `Server.cfg` (changed between calls): `json_modes` (the response_format types it accepts; any other
is HTTP 400, as older servers do), `delay_s` (sleeps before answering), `trickle_s` (sends the answer 8 bytes at a time, sleeping this long
between them), `api_key` (required as a Bearer key;
a wrong one is HTTP 401 that echoes what it got, as OpenAI does), `think` (answers start with a <think> block
holding a decoy JSON object), `answer` (a fixed content string instead). Without response_format a JSON
answer comes wrapped in prose and a code fence. Every request is recorded (path, headers, parsed body).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field

from tests.support.upstream import ClosingHandler, Served, serve

NAME = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")
RECORD = re.compile(r"^\[(\d+)\] (.*)$", re.M)
DIAGNOSIS = re.compile(r"diagnos|cancer|chemotherapy|therapy session", re.I)
PROSE = "Leave the other people's health details out of your message; the meeting time is yours to share."
GUESS = {"value": "Springfield", "confidence": 0.9, "type": "LOCATION"}


@dataclass
class Config:
    models: list[str] = field(default_factory=lambda: ["test-model"])
    json_modes: set[str] = field(default_factory=lambda: {"json_schema", "json_object"})
    delay_s: float = 0.0
    trickle_s: float = 0.0
    api_key: str | None = None
    think: bool = False
    answer: str | None = None
    likelihood: float = 0.15


@dataclass
class Request:
    path: str
    headers: dict
    body: dict


@dataclass
class Server(Served):
    cfg: Config = field(default_factory=Config)
    received: list[Request] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chats(self) -> list[dict]:
        return [r.body for r in self.received if r.path.endswith("/chat/completions")]


def _content(messages: list[dict], role: str) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == role)


def reply(cfg: Config, body: dict) -> str:
    """The assistant's text for a chat request."""
    if cfg.answer is not None:
        return cfg.answer
    msgs = body.get("messages") or []
    system, user = _content(msgs, "system"), _content(msgs, "user")
    fmt = body.get("response_format")
    if "privacy policy" in system:
        obj: dict | None = {"likelihood": cfg.likelihood, "reason": "statement 1 permits it"}
    elif "adversary" in system:
        obj = {"guesses": [GUESS]}
    elif "contextual integrity" in system:  # the agents' record judge: the numbered records that tell a diagnosis
        obj = {"withhold": [int(n) for n, text in RECORD.findall(user) if DIAGNOSIS.search(text)]}
    elif "JSON" in system:
        obj = {"ok": True}
    else:
        obj = None
    if obj is not None:
        text = json.dumps(obj)
        if not fmt:
            text = f"Sure! Here is the answer:\n```json\n{text}\n```\nAnything else?"
    elif system.startswith("Rewrite"):
        text = "REWRITE: " + NAME.sub("a person", user)
    elif system.startswith("Paraphrase"):
        text = "PARAPHRASE: " + NAME.sub("a person", user)
    elif "privacy guidance" in system:
        text = PROSE
    else:
        text = "ok: " + user
    if cfg.think:
        text = '<think>The user wants {"likelihood": 0.99}. Let me answer.</think>\n' + text
    return text


def _handler(srv: Server, lock: threading.Lock):
    class H(ClosingHandler):
        def _send(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            try:
                step = srv.cfg.trickle_s
                for piece in ([data[i:i + 8] for i in range(0, len(data), 8)] if step else [data]):
                    self.wfile.write(piece)
                    self.wfile.flush()
                    time.sleep(step)
            except OSError:  # the client gave up (a deadline test): nothing to answer
                pass

        def _record(self) -> dict:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_raw": raw.decode("latin-1")}
            with lock:
                srv.received.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            return body

        def _authorised(self) -> bool:
            cfg = srv.cfg
            got = self.headers.get("authorization") or ""
            if cfg.api_key is None or got == f"Bearer {cfg.api_key}":
                return True
            self._send(401, {"error": {"message": f"Incorrect API key provided: {got.removeprefix('Bearer ')}",
                                       "type": "invalid_request_error", "code": "invalid_api_key"}})
            return False

        def do_GET(self):
            self._record()
            if not self._authorised():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"}
                                                            for m in srv.cfg.models]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self):
            body = self._record()
            cfg = srv.cfg
            if cfg.delay_s:
                time.sleep(cfg.delay_s)
            if not self._authorised():
                return
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            if body.get("model") not in cfg.models:
                self._send(404, {"error": {"message": f"model '{body.get('model')}' not found, try pulling it first"}})
                return
            fmt = body.get("response_format")
            if fmt and fmt.get("type") not in cfg.json_modes:
                self._send(400, {"error": {"message": f"response_format type {fmt.get('type')!r} is not supported"}})
                return
            text = reply(cfg, body)
            self._send(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                             "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

    return H


def start_server(**cfg) -> Server:
    """The server on a free 127.0.0.1 port (close() it); keyword arguments set its Config."""
    srv = Server(server=None, cfg=Config(**cfg))  # type: ignore[arg-type]
    srv.server = serve(_handler(srv, threading.Lock()))
    return srv
