"""`openai_compatible` back end: bring your own local model, served over the OpenAI chat API
(Ollama at http://127.0.0.1:11434/v1, llama.cpp's `llama-server`, vLLM, LM Studio ...).

Rules:
- where it may send data: the base URL must be loopback (127.0.0.0/8, ::1, `localhost`, `*.localhost`)
  or a private address written as an IP (10/8, 172.16/12, 192.168/16, 169.254/16, fc00::/7, fe80::/10).
  Any other host, including a host *name* other than localhost (its address can change after the check),
  is refused with a ConfigError unless the config says `llm.allow_remote: true`: a privacy gateway must
  not send the user's data to a remote model by accident. Credentials in the URL are refused too;
- never through a proxy: the HTTP client ignores HTTP(S)_PROXY / ALL_PROXY (httpx `trust_env=False`)
  and follows no redirects, so the back end's own calls never loop through guardian-proxy itself;
- the key (`llm.api_key`, else the environment variable named by `llm.api_key_env`) is sent as
  `Authorization: Bearer <key>` and nowhere else: every error message is scrubbed of it;
- deadlines: `timeout` is one deadline for the whole call (retries included); no wait is longer than the
  time left, and an answer still arriving at the deadline is dropped. A timeout, a refused connection, an
  HTTP error or an answer that is not what was asked for is a BackendError, as with the other back ends,
  so every caller's fallback applies (the likelihood's m + u(1-m), the deterministic L4/L5 text, the
  deterministic agent guidance);
- JSON answers: asked with `response_format` `json_schema`, else `json_object`, else none (a server that
  answers HTTP 400/422 to one is asked again without it, and the working form is remembered), always with
  the schema in the system message; the answer is read tolerantly (the first JSON object in the text,
  after any `<think>` block) and validated against the schema (jsonout.py);
- greedy decoding (temperature 0); `load()` only checks that the server answers and serves the model
  (for `guardian-proxy doctor`); a call never needs it, so the server may start after the proxy.
"""

from __future__ import annotations

import ipaddress
import json
import re
import threading
import time
from urllib.parse import urlsplit

import httpx

from ..errors import BackendError, ConfigError, ModelLoadError
from . import jsonout

MAX_ANSWER_BYTES = 4 * 1024 * 1024
PROBE_TIMEOUT_S = 2.0
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.S)
_JSON_MODES: tuple[str | None, ...] = ("json_schema", "json_object", None)


def is_local_host(host: str) -> bool:
    """Loopback or a private address written as an IP, or `localhost` / `*.localhost`."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone id (fe80::1%eth0) is not part of it
    except ValueError:
        return False  # a name: its address can change after any check
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:8.8.8.8 is 8.8.8.8
    return ip.is_loopback or ip.is_private


def check_base_url(url: str, allow_remote: bool = False) -> str:
    """The base URL without a trailing slash; ConfigError when it is malformed, carries credentials, or
    is remote while `allow_remote` is false."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"llm.base_url {url!r} is not an http(s) URL (e.g. http://127.0.0.1:11434/v1)")
    if parts.username is not None or parts.password is not None:
        raise ConfigError("llm.base_url must not carry credentials: put the key in llm.api_key or llm.api_key_env")
    if not allow_remote and not is_local_host(parts.hostname):
        raise ConfigError(f"llm.base_url {url} is not a loopback or private address: guardian-proxy does not send "
                          f"your data to a remote model unless the config says llm.allow_remote: true")
    return url.strip().rstrip("/")


def _check_key(key: str | None) -> str | None:
    if key is None:
        return None
    key = key.strip()
    if not key:
        return None
    if not all(" " < c < "\x7f" for c in key):
        raise ConfigError("the LLM API key holds characters an HTTP header cannot carry (spaces, line breaks, "
                          "non-ASCII)")
    return key


class OpenAICompatibleBackend:
    name = "openai_compatible"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, allow_remote: bool = False):
        self.base_url = check_base_url(base_url, allow_remote)
        if not model:
            raise ConfigError("llm.backend 'openai_compatible' needs llm.model (the served model's name)")
        self.model = model
        self._key = _check_key(api_key)
        headers = {"accept": "application/json"}
        if self._key:
            headers["authorization"] = f"Bearer {self._key}"
        # trust_env=False: no HTTP(S)_PROXY, ALL_PROXY, .netrc; never through guardian-proxy itself
        self._client = httpx.Client(trust_env=False, follow_redirects=False, headers=headers)
        self._modes = list(_JSON_MODES)  # the response_format forms still worth trying
        self._lock = threading.Lock()

    @property
    def has_key(self) -> bool:
        return bool(self._key)

    def __repr__(self) -> str:
        return f"OpenAICompatibleBackend({self.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------ helpers

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _fail(self, what: str) -> BackendError:
        err = BackendError(self._scrub(f"{self.name} ({self.base_url}): {what}"))
        err.__suppress_context__ = True  # the chained httpx error would repeat the request; we keep ours
        return err

    def _request(self, method: str, path: str, deadline: float, timeout: float, payload: dict | None = None):
        """(status, body bytes); raises BackendError on a timeout, an unreachable server or a runaway answer."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._fail(f"timeout after {timeout:.1f}s")
        try:
            with self._client.stream(method, self.base_url + path, json=payload, timeout=httpx.Timeout(left)) as r:
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise self._fail(f"answer over {MAX_ANSWER_BYTES} bytes")
                    if time.monotonic() > deadline:
                        raise self._fail(f"timeout after {timeout:.1f}s")
                return r.status_code, bytes(body)
        except BackendError:
            raise
        except httpx.TimeoutException:
            raise self._fail(f"timeout after {timeout:.1f}s") from None
        except httpx.HTTPError as e:
            raise self._fail(f"cannot reach the server ({type(e).__name__}: {e})") from None

    def _explain(self, status: int, body: bytes) -> str:
        try:
            data = json.loads(body)
            err = data.get("error", data) if isinstance(data, dict) else data
            msg = err.get("message") if isinstance(err, dict) else err
            text = msg if isinstance(msg, str) else json.dumps(msg)
        except (ValueError, AttributeError):
            text = body.decode("utf-8", "replace")
        text = " ".join(text.split())[:200]
        hint = {401: "the server refused the key", 403: "the server refused the key",
                404: f"no such model or endpoint (is {self.model!r} pulled / served?)"}.get(status, "")
        return f"HTTP {status}" + (f" ({hint})" if hint else "") + (f": {text}" if text else "")

    def _complete(self, messages: list[dict], max_tokens: int, timeout: float, schema: dict | None) -> str:
        deadline = time.monotonic() + timeout
        modes = list(self._modes) if schema is not None else [None]
        for i, mode in enumerate(modes):
            payload: dict = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                             "temperature": 0, "stream": False}
            if mode == "json_schema":
                payload["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "answer", "schema": schema}}
            elif mode == "json_object":
                payload["response_format"] = {"type": "json_object"}
            status, body = self._request("POST", "/chat/completions", deadline, timeout, payload)
            if status in (400, 422) and mode is not None and i + 1 < len(modes):
                continue  # the server does not take this response_format: ask again without it
            if status != 200:
                raise self._fail(self._explain(status, body))
            if mode != modes[0]:
                with self._lock:  # remember the form this server takes
                    self._modes = list(modes[i:])
            return self._content(body)
        raise self._fail("no answer")  # not reached: the last mode returns or raises

    def _content(self, body: bytes) -> str:
        try:
            data = json.loads(body)
            content = data["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise self._fail(f"not an OpenAI chat completion ({len(body)} bytes)") from None
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            raise self._fail("the answer has no text content")
        return _THINK.sub("", content, count=1)

    # ------------------------------------------------------------------ interface

    def load(self) -> None:
        """Check that the server answers and serves `model` (ModelLoadError naming both); never required."""
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        try:
            status, body = self._request("GET", "/models", deadline, PROBE_TIMEOUT_S)
        except BackendError as e:
            raise ModelLoadError(f"{e}; start the server (e.g. `ollama serve`) or fix llm.base_url") from None
        if status in (401, 403):
            raise ModelLoadError(self._scrub(f"{self.name} ({self.base_url}): {self._explain(status, body)}; "
                                             f"set llm.api_key or llm.api_key_env"))
        if status != 200:
            return  # a server without /models (or with another shape) may still chat
        try:
            served = [m["id"] for m in json.loads(body)["data"] if isinstance(m, dict) and "id" in m]
        except (ValueError, KeyError, TypeError):
            return
        if served and self.model not in served and f"{self.model}:latest" not in served:
            raise ModelLoadError(self._scrub(f"{self.name} ({self.base_url}) does not serve model {self.model!r}; "
                                             f"it serves: {', '.join(served[:10])} (fix llm.model)"))

    def chat(self, messages: list[dict], max_tokens: int = 256, timeout: float = 20.0) -> str:
        return self._complete(messages, max_tokens, timeout, None)

    def chat_json(self, messages: list[dict], schema: dict, max_tokens: int = 256, timeout: float = 20.0) -> dict:
        text = self._complete(jsonout.with_instruction(messages, schema), max_tokens, timeout, schema)
        try:
            return jsonout.parse(text, schema)
        except BackendError as e:
            raise self._fail(str(e)) from None

    def close(self) -> None:
        self._client.close()
