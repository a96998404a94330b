"""Local chat servers for end-to-end tests of the WebSocket chat protocols and of Gemini's web app.

`start_ws_server` runs a `websockets` server (TLS optional, like `upstream.serve`) that records every
client message and answers, by path, like:

- Microsoft Copilot (`/c/api/chat`): to `{"event":"send",…}` it sends `received`, `startMessage`, the answer
  in small `appendText` pieces, `partCompleted`, `done`, `titleUpdate` and `suggestedFollowups` (both
  naming the person);
- OpenAI Realtime (`/v1/realtime`, `/openai/realtime`): `session.created` on connect, `session.updated`
  echoing `session.update`, `conversation.item.created` echoing each item, and for `response.create` the
  answer in `response.output_text.delta` pieces (`response.output_audio_transcript.delta` when the session's
  `output_modalities` is `["audio"]`, with `response.output_audio.delta` base64 chunks between), or a
  function call (`tool_choice: "required"`) in `response.function_call_arguments.delta` pieces;
- the Responses API over WebSocket (`/responses`, as Codex uses it): the Responses streaming events of
  `llm_server.openai_responses`, one per message.

The answer names the person of the last user text (`llm_server.answer`), in pieces of 3–5 characters so
that surrogates are split across messages.

`start_gemini_server` is an HTTP server answering Gemini web's StreamGenerate form POST with Google's
length-prefixed frames (cumulative text, Google's `\\u003d` escapes, an emoji and non-ASCII text, each
frame written in two HTTP chunks cut at an odd byte), recording the prompts it was sent.
`parse_gemini_reply` is an independent client-side reader of those frames (strict: each count must end
exactly where the next frame starts).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl

from tests.support import llm_server
from tests.support.upstream import Served, self_signed, serve

# ---------------------------------------------------------------------------------------------- events


def copilot_events(said: str, conversation: str, message_id: str = "cunqiwyXHxKALffniSEnf") -> list[dict]:
    text, _ = llm_server.answer({"prompt": said})
    name = llm_server.NAME.findall(said)
    name = name[0] if name else "friend"
    n = 0

    def ev(obj):
        nonlocal n
        out = {**obj, "id": str(n)}
        n += 1
        return out

    out = [ev({"event": "received", "conversationId": conversation, "messageId": "17Wzuonj3Q54L3oYsbPdC",
               "createdAt": "2026-01-01T00:00:00Z"}),
           ev({"event": "startMessage", "conversationId": conversation, "messageId": message_id,
               "createdAt": "2026-01-01T00:00:01Z"})]
    out += [ev({"event": "appendText", "messageId": message_id, "partId": "0", "text": p})
            for p in llm_server.pieces(text)]
    out += [ev({"event": "partCompleted", "messageId": message_id, "partId": "0"}),
            ev({"event": "done", "messageId": message_id}),
            ev({"event": "titleUpdate", "conversationId": conversation, "title": f"Planning with {name}"}),
            ev({"event": "suggestedFollowups", "messageId": message_id,
                "suggestions": [f"What else should {name} see?", "Show me more"]})]
    return out


class _Ids:
    def __init__(self):
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"event_{self.n:04d}"


def realtime_response(said: str, modalities: list[str], tool: bool, ids: _Ids, n: int) -> list[dict]:
    text, args = llm_server.answer({"prompt": said})
    rid, item_id = f"resp_{n}", f"item_{n}"
    resp = {"object": "realtime.response", "id": rid, "status": "in_progress", "output": []}
    out = [{"type": "response.created", "event_id": ids(), "response": resp}]
    if tool:
        arguments = json.dumps(args)
        item = {"id": item_id, "object": "realtime.item", "type": "function_call", "status": "in_progress",
                "name": "save_contact", "call_id": f"call_{n}", "arguments": ""}
        out.append({"type": "response.output_item.added", "event_id": ids(), "response_id": rid,
                    "output_index": 0, "item": item})
        out += [{"type": "response.function_call_arguments.delta", "event_id": ids(), "response_id": rid,
                 "item_id": item_id, "output_index": 0, "call_id": f"call_{n}", "delta": p}
                for p in llm_server.pieces(arguments)]
        out.append({"type": "response.function_call_arguments.done", "event_id": ids(), "response_id": rid,
                    "item_id": item_id, "output_index": 0, "call_id": f"call_{n}", "name": "save_contact",
                    "arguments": arguments})
        done_item = {**item, "status": "completed", "arguments": arguments}
    else:
        audio = modalities == ["audio"]
        kind = "response.output_audio_transcript" if audio else "response.output_text"
        part = {"type": "output_audio", "transcript": ""} if audio else {"type": "output_text", "text": ""}
        item = {"id": item_id, "object": "realtime.item", "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}
        out += [{"type": "response.output_item.added", "event_id": ids(), "response_id": rid, "output_index": 0,
                 "item": item},
                {"type": "response.content_part.added", "event_id": ids(), "response_id": rid, "item_id": item_id,
                 "output_index": 0, "content_index": 0, "part": part}]
        for i, p in enumerate(llm_server.pieces(text)):
            out.append({"type": kind + ".delta", "event_id": ids(), "response_id": rid, "item_id": item_id,
                        "output_index": 0, "content_index": 0, "delta": p})
            if audio and i % 4 == 0:  # base64 audio between the transcript's pieces
                out.append({"type": "response.output_audio.delta", "event_id": ids(), "response_id": rid,
                            "item_id": item_id, "output_index": 0, "content_index": 0,
                            "delta": base64.b64encode(bytes(range(i, i + 48))).decode()})
        key = "transcript" if audio else "text"
        out.append({"type": kind + ".done", "event_id": ids(), "response_id": rid, "item_id": item_id,
                    "output_index": 0, "content_index": 0, key: text})
        if audio:
            out.append({"type": "response.output_audio.done", "event_id": ids(), "response_id": rid,
                        "item_id": item_id, "output_index": 0, "content_index": 0})
        done_part = {**part, key: text}
        out.append({"type": "response.content_part.done", "event_id": ids(), "response_id": rid,
                    "item_id": item_id, "output_index": 0, "content_index": 0, "part": done_part})
        done_item = {**item, "status": "completed", "content": [done_part]}
    out += [{"type": "response.output_item.done", "event_id": ids(), "response_id": rid, "output_index": 0,
             "item": done_item},
            {"type": "response.done", "event_id": ids(),
             "response": {**resp, "status": "completed", "output": [done_item]}}]
    return out


def responses_events(body: dict) -> list[dict]:
    """The Responses streaming events `llm_server` sends over SSE, as dicts (one WebSocket message each)."""
    out = []
    for block in b"".join(llm_server.openai_responses(body, True)).decode().split("\n\n"):
        data = [ln[6:] for ln in block.splitlines() if ln.startswith("data: ")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def item_text(item: dict) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


# ---------------------------------------------------------------------------------------------- WebSocket server


@dataclass
class WSServer:
    port: int = 0
    received: list[tuple[str, str]] = field(default_factory=list)  # (path, message text)
    loop: asyncio.AbstractEventLoop | None = None
    server: object = None

    def texts(self, since: int = 0) -> str:
        return "\n".join(m for _, m in self.received[since:])

    def close(self) -> None:
        if self.loop is not None and self.server is not None:
            async def stop():
                self.server.close()
                await self.server.wait_closed()

            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
            self.loop.call_soon_threadsafe(self.loop.stop)


async def _copilot(ws, srv: WSServer, path: str) -> None:
    async for msg in ws:
        srv.received.append((path, msg if isinstance(msg, str) else msg.decode()))
        m = json.loads(msg)
        if m.get("event") != "send":
            continue
        said = " ".join(p.get("text", "") for p in m.get("content") or [] if isinstance(p, dict))
        for ev in copilot_events(said, m.get("conversationId") or "conv"):
            await ws.send(json.dumps(ev, separators=(",", ":")))


async def _realtime(ws, srv: WSServer, path: str) -> None:
    ids, session, said, n = _Ids(), {"object": "realtime.session", "id": "sess_1", "type": "realtime",
                                     "output_modalities": ["text"], "instructions": ""}, "", 0
    await ws.send(json.dumps({"type": "session.created", "event_id": ids(), "session": session}))
    async for msg in ws:
        srv.received.append((path, msg if isinstance(msg, str) else msg.decode()))
        m = json.loads(msg)
        t = m.get("type")
        if t == "session.update":
            session.update(m.get("session") or {})
            await ws.send(json.dumps({"type": "session.updated", "event_id": ids(), "session": session}))
        elif t == "conversation.item.create":
            item = {**m["item"], "id": f"item_user_{len(srv.received)}", "object": "realtime.item",
                    "status": "completed"}
            if item.get("role") == "user":
                said = item_text(item)
            await ws.send(json.dumps({"type": "conversation.item.created", "event_id": ids(),
                                      "previous_item_id": None, "item": item}))
        elif t == "response.create":
            n += 1
            r = m.get("response") or {}
            tool = r.get("tool_choice") == "required"
            for ev in realtime_response(said, session.get("output_modalities") or ["text"], tool, ids, n):
                await ws.send(json.dumps(ev))


async def _responses(ws, srv: WSServer, path: str) -> None:
    async for msg in ws:
        srv.received.append((path, msg if isinstance(msg, str) else msg.decode()))
        m = json.loads(msg)
        if m.get("type") != "response.create":
            continue
        for ev in responses_events(m):
            await ws.send(json.dumps(ev))


def start_ws_server(tls_dir: Path | None = None, names: list[str] | None = None) -> WSServer:
    from websockets.asyncio.server import serve as ws_serve

    srv = WSServer()
    ctx = None
    if tls_dir is not None:
        cp, kp = self_signed(tls_dir, names or ["localhost"])
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cp, kp)

    async def handler(ws):
        path = ws.request.path.split("?")[0]
        if path.endswith("/c/api/chat"):
            await _copilot(ws, srv, path)
        elif path.endswith("/realtime"):
            await _realtime(ws, srv, path)
        elif path.endswith("/responses"):
            await _responses(ws, srv, path)
        else:
            await ws.close(1008, "unknown path")

    started = threading.Event()

    def run():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        srv.loop = loop

        async def start():
            srv.server = await ws_serve(handler, "127.0.0.1", 0, ssl=ctx)
            srv.port = srv.server.sockets[0].getsockname()[1]
            started.set()

        loop.run_until_complete(start())
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    if not started.wait(10):
        raise RuntimeError("the WebSocket test server did not start")
    return srv


# ---------------------------------------------------------------------------------------------- Gemini web

XSSI = ")]}'"


def _units(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def google_frame(obj) -> str:
    """One frame as Google writes it: the count is the UTF-16 length of "\\n" + JSON + "\\n"."""
    body = "\n" + json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    return f"{_units(body)}{body}"


def _google_inner(value) -> str:
    # Google escapes "=" (and <, >, &) inside the inner JSON's strings
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("=", "\\u003d")


def gemini_reply(said: str, cid: str = "c_8f3e2a1b9c0d7e6f", rid: str = "r_1a2b3c4d5e6f7a8b",
                 rcid: str = "rc_9a8b7c6d5e4f3a2b") -> list[str]:
    """The frames of a StreamGenerate reply (cumulative text); the last one carries the total length."""
    text, _ = llm_server.answer({"prompt": said})
    text += " \U0001F600 café"
    name = llm_server.NAME.findall(said)
    name = name[0] if name else "friend"
    frames = [XSSI + "\n\n"]
    so_far = ""
    for p in llm_server.pieces(text, (4, 9)):
        so_far += p
        cand = [rcid, [so_far]] + [None] * 6 + [[1], "en"] + [None] * 27 + [[[f"Thinking about {name}"]]]
        inner = [None, [cid, rid], None, None, [cand], None, None, None, None, None, None, None, None, None,
                 None, None, None, None, None, None, None, None, None, None, None,
                 "https://gemini.google.com/app?hl=en"]
        frames.append(google_frame([["wrb.fr", None, _google_inner(inner)]]))
    frames.append(google_frame([["di", 192], ["af.httprm", 191, "8196459853603899163", 2]]))
    before, total = _units("".join(frames)), 0
    for _ in range(5):  # the total's own digits count
        last = google_frame([["e", len(frames) + 1, None, None, total]])
        if before + _units(last) == total:
            break
        total = before + _units(last)
    frames.append(last)
    return frames


def parse_gemini_reply(data: bytes) -> list:
    """A client's reading of a StreamGenerate reply: the outer JSON of every frame (strict: every count,
    in UTF-16 units, must end right where the next frame's digits start; the `e` frame's total must be
    the reply's length)."""
    text = data.decode("utf-8")
    assert text.startswith(XSSI), text[:20]
    units = text.encode("utf-16-le")
    pos = len(XSSI) * 2
    out = []
    while pos < len(units):
        while pos < len(units) and units[pos:pos + 2].decode("utf-16-le") in " \n\r\t":
            pos += 2
        if pos >= len(units):
            break
        d = pos
        while units[pos:pos + 2].decode("utf-16-le").isdigit():
            pos += 2
        n = int(units[d:pos].decode("utf-16-le"))
        chunk = units[pos:pos + 2 * n].decode("utf-16-le")
        assert len(units[pos:pos + 2 * n]) == 2 * n, "truncated frame"
        assert chunk.startswith("\n") and chunk.endswith("\n"), repr(chunk[:40] + "…" + chunk[-40:])
        pos += 2 * n
        obj = json.loads(chunk)
        if obj and isinstance(obj[0], list) and obj[0][:1] == ["e"]:
            assert obj[0][4] == pos // 2, (obj[0][4], pos // 2)
        out.append(obj)
    return out


def gemini_text(frames: list) -> tuple[str, list]:
    """The last candidate text of a parsed reply, and the last inner JSON."""
    last = None
    for obj in frames:
        for item in obj:
            if isinstance(item, list) and item[:1] == ["wrb.fr"] and isinstance(item[2], str):
                last = json.loads(item[2])
    return (last[4][0][1][0] if last else ""), last


@dataclass
class GeminiServer(Served):
    prompts: list[str] = field(default_factory=list)
    forms: list[list[tuple[str, str]]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)


def _gemini_handler(srv: GeminiServer):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n)
            srv.raw.append(raw)
            form = parse_qsl(raw.decode(), keep_blank_values=True)
            srv.forms.append(form)
            freq = dict(form).get("f.req", "[null,\"[[\\\"\\\"]]\"]")
            inner = json.loads(json.loads(freq)[1])
            said = inner[0][0]
            srv.prompts.append(said)
            conv = inner[2] if len(inner) > 2 and isinstance(inner[2], list) else []
            cid = conv[0] if conv and conv[0] else "c_8f3e2a1b9c0d7e6f"
            self.send_response(200)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.close_connection = True
            self.end_headers()
            for k, frame in enumerate(gemini_reply(said, cid)):
                b = frame.encode()
                cut = (7 * k + 3) % max(len(b), 1)
                for part in (b[:cut], b[cut:]):
                    if part:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return H


def start_gemini_server(tls_dir: Path | None = None, names: list[str] | None = None) -> GeminiServer:
    srv = GeminiServer(server=None)  # type: ignore[arg-type]
    srv.server = serve(_gemini_handler(srv), tls_dir, names or ["gemini.google.com"])
    return srv
