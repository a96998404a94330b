"""A local stand-in for the AI web apps that stream over HTTP (ChatGPT web, claude.ai, Perplexity, DeepSeek
web, Le Chat), for unit and end-to-end tests.

Each app's path is answered in that app's framing, with the shapes of published captures (see the dialect
modules' docstrings): the answer names the person and e-mail of the new user message (tests.support.llm_server's
`answer`) in small pieces (3–5 characters, a short sleep between them, so surrogates split across events), the
user message is echoed where the app does (ChatGPT's add-message and `input_message` events, Le Chat's
newChat reply), a title naming the person is generated on a conversation's first turn, and a thinking block
that names the person precedes the answer where the app has one (claude.ai, DeepSeek, Le Chat, ChatGPT's
`analysis` channel). `read_*` are what the apps' clients make of a stream (the reference readers the tests
compare against). Every request body is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.llm_server import NAME, answer, pieces
from tests.support.upstream import ClosingHandler, Served, serve

HOSTS = ["chatgpt.com", "claude.ai", "www.perplexity.ai", "chat.deepseek.com", "chat.mistral.ai"]


def _sse(name: str | None, obj) -> bytes:
    head = f"event: {name}\n" if name else ""
    data = obj if isinstance(obj, str) and obj == "[DONE]" else json.dumps(obj, ensure_ascii=False)
    return f"{head}data: {data}\n\n".encode()


def name_of(said: str) -> str:
    names = NAME.findall(said)
    return names[0] if names else "friend"


def thinking_of(said: str) -> str:
    return f"The user {name_of(said)} asks for help; keep {name_of(said)}'s details in mind."


# ---------------------------------------------------------------------- ChatGPT web (delta encoding v1)

def chatgpt_stream(said: str, cid: str, user_id: str, first: bool, thinking: bool = False,
                   text: str | None = None) -> list[bytes]:
    text = text if text is not None else answer({"prompt": said})[0]
    ps = pieces(text)
    user_msg = {"id": user_id, "author": {"role": "user", "name": None, "metadata": {}},
                "content": {"content_type": "text", "parts": [said]}, "status": "finished_successfully",
                "metadata": {"request_id": "req-1"}, "recipient": "all", "channel": None}
    out = [b'event: delta_encoding\ndata: "v1"\n\n',
           _sse(None, {"type": "resume_conversation_token", "kind": "topic", "token": "tok", "conversation_id": cid}),
           _sse("delta", {"p": "", "o": "add", "v": {"message": {
               "id": "sys-1", "author": {"role": "system", "name": None, "metadata": {}},
               "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully",
               "metadata": {"is_visually_hidden_from_conversation": True}, "recipient": "all", "channel": None},
               "conversation_id": cid, "error": None}, "c": 0}),
           _sse("delta", {"v": {"message": user_msg, "conversation_id": cid, "error": None}, "c": 1}),
           _sse(None, {"type": "input_message", "input_message": user_msg, "conversation_id": cid})]
    c = 2
    if thinking:
        out.append(_sse("delta", {"v": {"message": {
            "id": "think-1", "author": {"role": "assistant", "name": None, "metadata": {}},
            "content": {"content_type": "text", "parts": [""]}, "status": "in_progress", "metadata": {},
            "recipient": "all", "channel": "analysis"}, "conversation_id": cid, "error": None}, "c": c}))
        tps = pieces(thinking_of(said))
        out.append(_sse("delta", {"p": "/message/content/parts/0", "o": "append", "v": tps[0]}))
        out += [_sse("delta", {"v": p}) for p in tps[1:]]
        c += 1
    out.append(_sse("delta", {"p": "", "o": "add", "v": {"message": {
        "id": "asst-" + user_id, "author": {"role": "assistant", "name": None, "metadata": {}},
        "content": {"content_type": "text", "parts": [""]}, "status": "in_progress",
        "metadata": {"parent_id": user_id, "model_slug": "gpt-5"}, "recipient": "all", "channel": "final"},
        "conversation_id": cid, "error": None}, "c": c}))
    out.append(_sse(None, {"type": "message_marker", "conversation_id": cid, "message_id": "asst-" + user_id,
                           "marker": "user_visible_token", "event": "first"}))
    out.append(_sse("delta", {"p": "/message/content/parts/0", "o": "append", "v": ps[0]}))
    for i, p in enumerate(ps[1:-1]):
        out.append(_sse("delta", {"v": p}))
        if first and i == len(ps) // 2:  # the title arrives while the answer streams
            out.append(_sse(None, {"type": "title_generation", "title": f"Plans for {name_of(said)}",
                                   "conversation_id": cid}))
    out.append(_sse("delta", {"p": "", "o": "patch", "v": [
        {"p": "/message/content/parts/0", "o": "append", "v": ps[-1]},
        {"p": "/message/status", "o": "replace", "v": "finished_successfully"},
        {"p": "/message/end_turn", "o": "replace", "v": True},
        {"p": "/message/metadata", "o": "append", "v": {"is_complete": True,
                                                        "finish_details": {"type": "stop"}}}]}))
    out.append(_sse(None, {"type": "message_marker", "conversation_id": cid, "message_id": "asst-" + user_id,
                           "marker": "last_token", "event": "last"}))
    out.append(_sse(None, {"type": "message_stream_complete", "conversation_id": cid}))
    out.append(_sse(None, {"type": "conversation_detail_metadata", "banner_info": None, "conversation_id": cid}))
    out.append(b"data: [DONE]\n\n")
    return out


def read_sse(raw: bytes) -> list[tuple[str | None, object]]:
    out = []
    for block in re.split(r"\r?\n\r?\n", raw.decode("utf-8")):
        name, data = None, []
        for ln in block.splitlines():
            if ln.startswith("event:"):
                name = ln[6:].strip()
            elif ln.startswith("data:"):
                data.append(ln[5:].lstrip(" "))
        if data:
            d = "\n".join(data)
            out.append((name, "[DONE]" if d == "[DONE]" else json.loads(d)))
    return out


def _pointer_append(doc: dict, path: str, value) -> None:
    keys = [int(k) if k.isdigit() else k for k in path.strip("/").split("/")]
    node = doc
    for k in keys[:-1]:
        node = node[k]
    last = keys[-1]
    cur = node[last] if (isinstance(node, list) and last < len(node)) or (isinstance(node, dict) and last in node) \
        else None
    if isinstance(cur, str) and isinstance(value, str):
        node[last] = cur + value
    elif isinstance(cur, list):
        cur.append(value)
    elif isinstance(cur, dict) and isinstance(value, dict):
        cur.update(value)
    else:
        node[last] = value


def read_chatgpt(raw: bytes) -> dict:
    """What ChatGPT's client shows: every document by its counter, the title, the conversation id."""
    docs: dict = {}
    cur, p, o, title, cid = None, None, None, None, None
    for _name, obj in read_sse(raw):
        if not isinstance(obj, dict):
            continue
        if "type" in obj:
            title = obj.get("title", title) if obj["type"] == "title_generation" else title
            cid = obj.get("conversation_id", cid)
            continue
        if "c" in obj:
            cur = obj["c"]
        o = obj["o"] if "o" in obj else (None if "p" in obj else o)
        p = obj.get("p", p)
        ops = [(p, o, obj["v"])]
        if o == "patch":
            ops = [(s["p"], s["o"], s["v"]) for s in obj["v"]]
            p, o = ops[-1][0], ops[-1][1]
        for sp, so, sv in ops:
            if sp == "" and so == "add":
                docs[cur] = json.loads(json.dumps(sv))
                cid = sv.get("conversation_id", cid)
            elif so == "append":
                _pointer_append(docs[cur], sp, sv)
            elif so == "replace":
                keys = sp.strip("/").split("/")
                node = docs[cur]
                for k in keys[:-1]:
                    node = node[k]
                node[keys[-1]] = sv
    msgs = [d["message"] for d in docs.values()]
    final = [m for m in msgs if m["author"]["role"] == "assistant" and m.get("channel") != "analysis"]
    return {"text": final[-1]["content"]["parts"][0] if final else "",
            "thinking": "".join(m["content"]["parts"][0] for m in msgs if m.get("channel") == "analysis"),
            "user": [m["content"]["parts"][0] for m in msgs if m["author"]["role"] == "user"],
            "title": title, "conversation_id": cid}


# ---------------------------------------------------------------------- claude.ai (Anthropic-style events)

def claude_stream(said: str, thinking: bool = True, text: str | None = None) -> list[bytes]:
    text = text if text is not None else answer({"prompt": said})[0]
    out = [_sse("conversation_ready", {"type": "conversation_ready"}),
           _sse("message_start", {"type": "message_start", "message": {
               "id": "chatcompl_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
               "stop_reason": None, "uuid": str(uuid.uuid4())}})]
    idx = 0
    if thinking:
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "thinking", "thinking": "", "summaries": [], "cut_off": False}}))
        for p in pieces(thinking_of(said)):
            out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "thinking_delta", "thinking": p}}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "thinking_summary_delta", "summary": {"summary": f"Helping {name_of(said)}."}}}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        idx = 1
    out.append(_sse("content_block_start", {"type": "content_block_start", "index": idx, "content_block": {
        "type": "text", "text": "", "citations": []}}))
    for p in pieces(text):
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                "delta": {"type": "text_delta", "text": p}}))
    out += [_sse("content_block_stop", {"type": "content_block_stop", "index": idx}),
            _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            _sse("message_limit", {"type": "message_limit", "message_limit": {"type": "within_limit"}}),
            _sse("message_stop", {"type": "message_stop"})]
    return out


def read_claude(raw: bytes) -> dict:
    text, thinking = [], []
    for _n, o in read_sse(raw):
        if isinstance(o, dict) and o.get("type") == "content_block_delta":
            d = o["delta"]
            if d["type"] == "text_delta":
                text.append(d["text"])
            elif d["type"] == "thinking_delta":
                thinking.append(d["thinking"])
    return {"text": "".join(text), "thinking": "".join(thinking)}


# ---------------------------------------------------------------------- Perplexity (schematized diff blocks)

def perplexity_stream(said: str, backend: str, text: str | None = None, lean: bool = False) -> list[bytes]:
    """`lean`: only the entry's ids in each event (short streams for byte-by-byte tests)."""
    text = text if text is not None else answer({"prompt": said})[0]
    ps = pieces(text)
    base = {"backend_uuid": backend, "context_uuid": "ctx-1", "uuid": backend, "frontend_context_uuid": "fctx",
            "display_model": "turbo", "mode": "CONCISE", "thread_url_slug": "slug", "text_completed": False,
            "message_mode": "STREAMING", "reconnectable": True, "cursor": "cur", "status": "PENDING",
            "final_sse_message": False}
    if lean:
        base = {"backend_uuid": backend, "status": "PENDING", "final_sse_message": False}

    def ev(blocks, **kw):
        return _sse("message", {**base, "blocks": blocks, **kw})

    def diff(usage, patches):
        return {"intended_usage": usage, "diff_block": {"field": "markdown_block", "patches": patches}}

    out = [ev([{"intended_usage": "pending_followups", "pending_followups_block": {"followups": []}}]),
           ev([{"intended_usage": "answer_tabs", "diff_block": {"field": "answer_tabs_block", "patches": [
               {"op": "replace", "path": "", "value": {"reformulated_queries": [f"about {name_of(said)}"]}}]}}])]
    first = {"progress": "IN_PROGRESS", "chunks": [ps[0]], "chunk_starting_offset": 0}
    out.append(ev([diff("ask_text_0_markdown", [{"op": "replace", "path": "", "value": dict(first)}]),
                   diff("ask_text", [{"op": "replace", "path": "", "value": {**first, "chunks": [ps[0]]}}])]))
    for i, p in enumerate(ps[1:], start=1):
        out.append(ev([diff(u, [{"op": "add", "path": f"/chunks/{i}", "value": p}])
                       for u in ("ask_text_0_markdown", "ask_text")]))
    full = {"progress": "DONE", "chunks": ps, "chunk_starting_offset": 0, "answer": text}
    out.append(ev([{"intended_usage": u, "markdown_block": full} for u in ("ask_text_0_markdown", "ask_text")],
                  status="COMPLETED", text_completed=True, final_sse_message=True, message_mode="FULL"))
    out.append(b"event: end_of_stream\ndata: {}\n\n")
    return out


def read_perplexity(raw: bytes) -> dict:
    chunks: dict[str, list] = {}
    answer_text, backend = None, None
    for _n, o in read_sse(raw):
        if not isinstance(o, dict):
            continue
        backend = o.get("backend_uuid", backend)
        for b in o.get("blocks") or []:
            u = b["intended_usage"]
            if "markdown_block" in b:
                answer_text = b["markdown_block"].get("answer", answer_text) if u == "ask_text" else answer_text
                continue
            d = b.get("diff_block")
            if not d or d["field"] != "markdown_block":
                continue
            for pt in d["patches"]:
                if pt["op"] == "replace" and pt["path"] == "":
                    chunks[u] = list(pt["value"]["chunks"])
                elif pt["op"] == "add":
                    n = pt["path"].rsplit("/", 1)[1]
                    chunks[u].insert(len(chunks[u]) if n == "-" else int(n), pt["value"])
    return {"text": "".join(chunks.get("ask_text", [])), "markdown": "".join(chunks.get("ask_text_0_markdown", [])),
            "answer": answer_text, "backend_uuid": backend}


# ---------------------------------------------------------------------- DeepSeek web (sticky patch events)

def deepseek_stream(said: str, thinking: bool = True, text: str | None = None) -> list[bytes]:
    text = text if text is not None else answer({"prompt": said})[0]
    ps = pieces(text)
    out = [_sse("ready", {"request_message_id": 1, "response_message_id": 2, "model_type": "default"}),
           _sse("update_session", {"updated_at": time.time()})]
    resp = {"message_id": 2, "parent_id": 1, "model": "", "role": "ASSISTANT", "thinking_enabled": thinking,
            "status": "WIP", "accumulated_token_usage": 0, "search_enabled": False, "has_pending_fragment": False}
    if thinking:
        tps = pieces(thinking_of(said))
        out.append(_sse(None, {"v": {"response": {**resp, "fragments": [
            {"id": 1, "type": "THINK", "content": tps[0], "elapsed_secs": None, "references": [], "stage_id": 1}]}}}))
        out += [_sse(None, {"v": p}) for p in tps[1:]]
        out.append(_sse(None, {"p": "response/fragments/-1/elapsed_secs", "o": "SET", "v": 0.5}))
        out.append(_sse(None, {"p": "response/fragments", "o": "APPEND", "v": [
            {"id": 2, "type": "RESPONSE", "content": ps[0], "references": [], "stage_id": 1}]}))
    else:
        out.append(_sse(None, {"v": {"response": {**resp, "fragments": [
            {"id": 2, "type": "RESPONSE", "content": ps[0], "references": [], "stage_id": 1}]}}}))
    out.append(_sse(None, {"p": "response/fragments/-1/content", "o": "APPEND", "v": ps[1]}))
    out += [_sse(None, {"v": p}) for p in ps[2:]]
    out += [_sse(None, {"p": "response", "o": "BATCH", "v": [{"p": "accumulated_token_usage", "v": 60},
                                                             {"p": "quasi_status", "v": "FINISHED"}]}),
            _sse(None, {"p": "response/status", "o": "SET", "v": "FINISHED"}),
            _sse("finish", {}), _sse("update_session", {"updated_at": time.time()}),
            _sse("title", {"content": f"Help for {name_of(said)}"}),
            _sse("close", {"click_behavior": "none", "auto_resume": False})]
    return out


def read_deepseek(raw: bytes) -> dict:
    frags: list[dict] = []
    content, p, o, title = "", None, None, None
    for name, obj in read_sse(raw):
        if name == "title":
            title = obj["content"]
        if name or not isinstance(obj, dict) or "v" not in obj:
            continue
        if "p" not in obj and "o" not in obj and isinstance(obj["v"], dict) and "response" in obj["v"]:
            r = obj["v"]["response"]
            frags = [dict(f) for f in r.get("fragments") or []]
            content = r.get("content") or ""
            p, o = ("response/fragments/-1/content" if frags else "response/content"), "APPEND"
            continue
        p = obj.get("p", p)
        o = obj["o"] if "o" in obj else (None if "p" in obj else o)
        v = obj["v"]
        if p == "response/fragments" and isinstance(v, list):
            frags += [dict(f) for f in v]
        elif p == "response/fragments/-1/content" and isinstance(v, str) and o in (None, "APPEND"):
            frags[-1]["content"] += v
        elif p == "response/content" and isinstance(v, str) and o in (None, "APPEND"):
            content += v
    return {"text": content + "".join(f["content"] for f in frags if f["type"] == "RESPONSE"),
            "thinking": "".join(f["content"] for f in frags if f["type"] == "THINK"), "title": title}


# ---------------------------------------------------------------------- Le Chat (`<n>:<json>` lines)

def lechat_stream(said: str, msg_id: str, user_id: str, reasoning: bool = True,
                  text: str | None = None) -> list[bytes]:
    text = text if text is not None else answer({"prompt": said})[0]
    ps = pieces(text)

    def line(patches, mid=msg_id):
        return ("15:" + json.dumps({"json": {"type": "message", "messageId": mid, "messageVersion": 0,
                                             "patches": patches}}, ensure_ascii=False) + "\n").encode()

    out = [b'16:{"json":{"disclaimers":[]}}\n',
           line([{"op": "replace", "path": "/", "value": {"role": "assistant", "content": "", "contentChunks": None,
                                                          "id": msg_id, "generationStatus": "in-progress",
                                                          "parentId": user_id}}]),
           line([{"op": "replace", "path": "/references", "value": []}])]
    i = 0
    if reasoning:
        tps = pieces(thinking_of(said))
        ctx = {"type": "reasoning", "contextId": "ctx-1", "startTime": 1, "endTime": 1}
        out.append(line([{"op": "replace", "path": "/contentChunks", "value": [
            {"type": "text", "text": tps[0], "_context": ctx}]}]))
        for p in tps[1:]:
            out.append(line([{"op": "append", "path": "/contentChunks/0/text", "value": p},
                             {"op": "replace", "path": "/contentChunks/0/_context", "value": ctx}]))
        out.append(line([{"op": "add", "path": "/contentChunks/1", "value": {"type": "text", "text": ps[0],
                                                                              "_context": None}}]))
        i = 1
    else:
        out.append(line([{"op": "replace", "path": "/contentChunks", "value": [
            {"type": "text", "text": ps[0], "_context": None}]}]))
    for k, p in enumerate(ps[1:]):
        out.append(line([{"op": "append", "path": f"/contentChunks/{i}/text", "value": p}]))
        if k == 3:  # the user message's moderation arrives in the middle
            out.append(line([{"op": "replace", "path": "/moderationCategory", "value": "safe"}], user_id))
    out += [line([{"op": "replace", "path": "/generationStatus", "value": "success"}]), b"8:null\n"]
    return out


def read_lechat(raw: bytes) -> dict:
    chunks: list[dict] = []
    for ln in raw.decode("utf-8").splitlines():
        m = re.match(r"^(\d+):(.*)$", ln)
        if not m or m.group(1) != "15":
            continue
        j = json.loads(m.group(2))["json"]
        if j.get("type") != "message":
            continue
        for pt in j["patches"]:
            path, v = pt["path"], pt.get("value")
            if pt["op"] == "replace" and path == "/contentChunks":
                chunks = [dict(c) for c in v]
            elif pt["op"] == "add" and re.match(r"^/contentChunks/\d+$", path):
                chunks.insert(int(path.rsplit("/", 1)[1]), dict(v))
            elif pt["op"] == "append" and path.endswith("/text"):
                chunks[int(path.split("/")[2])]["text"] += v
    reason = [c for c in chunks if (c.get("_context") or {}).get("type") == "reasoning"]
    return {"text": "".join(c["text"] for c in chunks if c not in reason),
            "thinking": "".join(c["text"] for c in reason)}


def lechat_newchat_reply(said: str, chat_id: str, user_id: str) -> bytes:
    lines = [{"json": {"0": [[0], [None, 0, 0]]}}, {"json": [0, 0, [[{"result": 0}], ["result", 0, 1]]]},
             {"json": [1, 0, [[{"data": 0}], ["data", 0, 2]]]},
             {"json": [2, 0, [[{"messages": {"role": "user", "content": said, "contentChunks": None, "turn": 0,
                                             "chatId": chat_id, "id": user_id, "status": "active"},
                                "chatId": chat_id}]]], "meta": {"values": {"2.0.0.messages.createdAt": ["Date"]}}}]
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode()


# ---------------------------------------------------------------------- the server

@dataclass
class WebAppServer(Served):
    received: list[dict] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    delay: float = 0.01
    lock: threading.Lock = field(default_factory=threading.Lock)
    state: dict = field(default_factory=dict)

    def bodies_text(self, since: int = 0) -> str:
        return "\n".join(json.dumps(b, ensure_ascii=False) for b in self.received[since:])


def _handler(srv: WebAppServer):
    class H(ClosingHandler):

        def _send(self, chunks: list[bytes], ctype: str) -> None:
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for c in chunks:
                self.chunk(c)
                time.sleep(srv.delay)
            self.chunk(b"")

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.loads(raw or b"{}")
            path = self.path.split("?")[0]
            with srv.lock:
                srv.received.append(body)
                srv.paths.append(path)
            if re.match(r"^/backend-(api|anon)/(f/)?conversation$", path):
                msg = body["messages"][-1]
                cid = body.get("conversation_id") or str(uuid.uuid4())
                self._send(chatgpt_stream(msg["content"]["parts"][0], cid, msg["id"],
                                          first=not body.get("conversation_id")), "text/event-stream; charset=utf-8")
            elif re.match(r"^/api/organizations/[^/]+/chat_conversations/[^/]+/(retry_)?completion$", path):
                self._send(claude_stream(body.get("prompt", "")), "text/event-stream; charset=utf-8")
            elif path == "/rest/sse/perplexity_ask":
                self._send(perplexity_stream(body["query_str"], str(uuid.uuid4())), "text/event-stream")
            elif path == "/api/v0/chat/completion":
                self._send(deepseek_stream(body["prompt"], thinking=bool(body.get("thinking_enabled"))),
                           "text/event-stream; charset=utf-8")
            elif path.startswith("/api/trpc/") and "message.newChat" in path:
                said = body["0"]["json"]["content"][0]["text"]
                chat_id, user_id = str(uuid.uuid4()), str(uuid.uuid4())
                with srv.lock:
                    srv.state[chat_id] = said
                self._send([lechat_newchat_reply(said, chat_id, user_id)], "application/json")
            elif path == "/api/chat":
                mi = body.get("messageInput")
                said = srv.state.get(body["chatId"], "") if body.get("mode") == "start" else \
                    (mi if isinstance(mi, str) else " ".join(c.get("text", "") for c in mi or []))
                self._send(lechat_stream(said, str(uuid.uuid4()), body.get("messageId") or "u1"),
                           "text/event-stream")
            else:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

    return H


def start_webapp_server(tls_dir: Path | None = None, delay: float = 0.01) -> WebAppServer:
    srv = WebAppServer(server=None, delay=delay)  # type: ignore[arg-type]
    srv.server = serve(_handler(srv), tls_dir, HOSTS)
    return srv
