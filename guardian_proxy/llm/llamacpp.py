"""llama.cpp back end (llama-cpp-python, the `llm` extra): a local GGUF model.

- chat template: `chat_format` from the settings if given, else the GGUF's own Jinja template
  (`tokenizer.chat_template`), else the format of the model family (Gemma GGUFs often ship without a
  template: "gemma"), else llama-cpp-python's default. llama-cpp-python's built-in "gemma" and
  "mistral-instruct" formats silently drop system messages, so for those the system text is folded into
  the first user turn (as Gemma's own template does);
- JSON answers are constrained: flat object schemas (the likelihood answer, the guesser's) by guided
  decoding over the raw logits (guided.py: fast on any vocabulary); other schemas by llama.cpp's
  JSON-schema grammar (`response_format={"type": "json_object", "schema": ...}`), which tests the grammar
  against the whole vocabulary per token and is slow on large vocabularies. Both are validated again;
- timeout: a deadline checked at every token (BackendError "timeout");
- one generation at a time per model (a lock); greedy decoding (temperature 0) for reproducible L.
`llama_cpp` is imported in `load()` only.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from ..errors import BackendError, ModelLoadError
from . import guided, jsonout

FAMILY_FORMATS = {"gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "llama": "llama-3", "qwen2": "chatml",
                  "qwen3": "chatml", "mistral": "mistral-instruct"}
_NO_SYSTEM_ROLE = {"gemma", "mistral-instruct"}
_FORMATTERS = {"gemma": "format_gemma", "llama-2": "format_llama2", "llama-3": "format_llama3",
               "chatml": "format_chatml", "mistral-instruct": "format_mistral_instruct"}


class LlamaCppBackend:
    name = "llama_cpp"

    def __init__(self, model_path: str | Path, n_threads: int | None = None, n_ctx: int = 4096,
                 chat_format: str | None = None, seed: int = 0):
        self.model_path = Path(model_path).expanduser()
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.seed = seed
        self._llm = None
        self._template = None  # Jinja formatter from the GGUF, when used
        self._classes: guided.TokenClasses | None = None
        self._vocab: list[str] = []
        self._lock = threading.Lock()

    def load(self) -> None:
        if self._llm is not None:
            return
        if not self.model_path.is_file():
            raise ModelLoadError(f"GGUF model not found: {self.model_path}")
        try:
            from llama_cpp import Llama, llama_chat_format
        except ImportError as e:
            raise ModelLoadError(f"llama_cpp back end for {self.model_path}: llama-cpp-python is not installed "
                                 f"(pip install 'guardian-proxy[llm]' or make llm)") from e
        try:
            llm = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                        chat_format=self.chat_format, seed=self.seed, verbose=False)
        except Exception as e:  # llama.cpp raises ValueError/RuntimeError for unreadable files
            raise ModelLoadError(f"cannot load GGUF model {self.model_path}: {type(e).__name__}: {e}") from e
        meta = llm.metadata or {}
        if self.chat_format is None:
            template = meta.get("tokenizer.chat_template")
            if template:
                tok = llm._model
                self._template = llama_chat_format.Jinja2ChatFormatter(
                    template=template, eos_token=tok.token_get_text(tok.token_eos()),
                    bos_token=tok.token_get_text(tok.token_bos()))
            else:
                family = FAMILY_FORMATS.get(meta.get("general.architecture", ""), "llama-2")
                self.chat_format = family
                llm.chat_format = family
        self._llm = llm

    # ------------------------------------------------------------------ free text

    def _messages(self, messages: list[dict]) -> list[dict]:
        if self._template is None and self.chat_format in _NO_SYSTEM_ROLE:
            return fold_system(messages)
        return messages

    def _stream(self, messages: list[dict], max_tokens: int, timeout: float, response_format: dict | None) -> str:
        messages = self._messages(messages)
        deadline = time.monotonic() + timeout
        parts: list[str] = []
        try:
            stream = self._llm.create_chat_completion(
                messages=messages, max_tokens=max_tokens, temperature=0.0, stream=True,
                response_format=response_format)
            for chunk in stream:
                parts.append(chunk["choices"][0].get("delta", {}).get("content") or "")
                if time.monotonic() > deadline:
                    stream.close()
                    raise BackendError(f"llama_cpp: timeout after {timeout:.1f}s")
        except BackendError:
            raise
        except Exception as e:
            raise BackendError(f"llama_cpp generation failed: {type(e).__name__}: {e}") from e
        return "".join(parts)

    def chat(self, messages: list[dict], max_tokens: int = 256, timeout: float = 20.0) -> str:
        self.load()
        with self._lock:
            return self._stream(messages, max_tokens, timeout, None)

    # ------------------------------------------------------------------ JSON

    def chat_json(self, messages: list[dict], schema: dict, max_tokens: int = 256, timeout: float = 20.0) -> dict:
        self.load()
        msgs = _with_instruction(messages, jsonout.schema_instruction(schema))
        with self._lock:
            if guided.is_flat(schema):
                deadline = time.monotonic() + timeout
                try:
                    step = _LlamaStepper(self._llm, self._token_classes(), self._vocab)
                    logits = step.start(self._prompt_tokens(msgs))
                    text = guided.guided_object(step, self._classes, schema, logits, max_tokens, deadline,
                                                lambda t: self._llm.tokenize(t.encode(), add_bos=False, special=False))
                except BackendError:
                    raise
                except Exception as e:
                    raise BackendError(f"llama_cpp guided decoding failed: {type(e).__name__}: {e}") from e
            else:
                text = self._stream(msgs, max_tokens, timeout, {"type": "json_object", "schema": schema})
        return jsonout.parse(text, schema)

    def _prompt_tokens(self, messages: list[dict]) -> list[int]:
        from llama_cpp import llama_chat_format

        messages = self._messages(messages)
        if self._template is not None:
            res = self._template(messages=messages)
        else:
            fmt = getattr(llama_chat_format, _FORMATTERS.get(self.chat_format or "", "format_chatml"))
            res = fmt(messages=messages)
        add_bos = not getattr(res, "added_special", False)
        return self._llm.tokenize(res.prompt.encode(), add_bos=add_bos, special=True)

    def _token_classes(self) -> guided.TokenClasses:
        if self._classes is None:
            llm = self._llm
            self._vocab = [llm.detokenize([i]).decode("utf-8", errors="replace") for i in range(llm.n_vocab())]
            self._classes = guided.TokenClasses(self._vocab)
        return self._classes


def fold_system(messages: list[dict]) -> list[dict]:
    """System messages joined in front of the first user message (for chat formats without a system role)."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{system}\n\n{m.get('content') or ''}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def _with_instruction(messages: list[dict], instruction: str) -> list[dict]:
    msgs = [dict(m) for m in messages]
    if msgs and msgs[0]["role"] == "system":
        msgs[0]["content"] += "\n" + instruction
    else:
        msgs.insert(0, {"role": "system", "content": instruction})
    return msgs


class _LlamaStepper:
    """guided.Stepper over a llama.cpp context (its KV cache grows with every token fed)."""

    def __init__(self, llm, classes: guided.TokenClasses, vocab: list[str]):
        self.llm = llm
        self.vocab = vocab
        self.eos = {int(llm.token_eos())}
        self.n_vocab = llm.n_vocab()

    def _logits(self) -> np.ndarray:
        from llama_cpp import llama_get_logits_ith

        ptr = llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def _eval(self, tokens: list[int]) -> np.ndarray:
        if self.llm.n_tokens + len(tokens) > self.llm.n_ctx():
            raise BackendError("llama_cpp: prompt and answer exceed n_ctx")
        self.llm.eval(tokens)
        return self._logits()

    def start(self, tokens: list[int]) -> np.ndarray:
        self.llm.reset()
        return self._eval(tokens)

    def feed_text(self, text: str) -> np.ndarray:
        return self._eval(self.llm.tokenize(text.encode(), add_bos=False, special=False))

    def feed_token(self, token: int) -> np.ndarray:
        return self._eval([token])
