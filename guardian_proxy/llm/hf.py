"""transformers back end: a causal LM from a local model directory (never downloaded).

- chat template: the tokenizer's own; without one, a plain "role: content" transcript;
- JSON answers: flat object schemas are decoded by guided.py (keys written by us, values constrained
  token by token), so the answer is always well-formed; other schemas: free generation, then extract
  and validate (jsonout.py);
- timeout: a deadline checked at every token (BackendError "timeout").
`torch`/`transformers` are imported in `load()` only.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ..errors import BackendError, ModelLoadError
from . import guided, jsonout


class TransformersBackend:
    name = "transformers"

    def __init__(self, model_path: str | Path, n_threads: int | None = None):
        self.model_path = Path(model_path).expanduser()
        self.n_threads = n_threads
        self._tok = self._model = self._torch = None
        self._vocab: list[str] | None = None
        self._classes: guided.TokenClasses | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        if self._model is not None:
            return
        if not self.model_path.is_dir():
            raise ModelLoadError(f"transformers model directory not found: {self.model_path}")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise ModelLoadError(f"transformers back end for {self.model_path}: {e}") from e
        try:
            self._tok = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            self._model = AutoModelForCausalLM.from_pretrained(self.model_path, local_files_only=True).eval()
        except Exception as e:
            raise ModelLoadError(f"cannot load transformers model {self.model_path}: {type(e).__name__}: {e}") from e
        if self.n_threads:
            torch.set_num_threads(self.n_threads)
        self._torch = torch

    # ------------------------------------------------------------------ prompt and free generation

    def _prompt_ids(self, messages: list[dict]):
        tok = self._tok
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "
        return tok(text, return_tensors="pt", add_special_tokens=not getattr(tok, "chat_template", None)).input_ids

    def chat(self, messages: list[dict], max_tokens: int = 256, timeout: float = 20.0) -> str:
        self.load()
        with self._lock:
            ids = self._prompt_ids(messages)
            out, timed_out = self._free(ids, max_tokens, time.monotonic() + timeout)
        if timed_out:
            raise BackendError(f"transformers: timeout after {timeout:.1f}s")
        return out

    def _step(self, ids, past):
        with self._torch.no_grad():
            res = self._model(input_ids=ids, past_key_values=past, use_cache=True)
        return res.logits[0, -1], res.past_key_values

    def _free(self, ids, max_tokens: int, deadline: float) -> tuple[str, bool]:
        logits, past = self._step(ids, None)
        out: list[int] = []
        eos = self._tok.eos_token_id
        for _ in range(max_tokens):
            if time.monotonic() > deadline:
                return self._tok.decode(out, skip_special_tokens=True), True
            nxt = int(logits.argmax())
            if nxt == eos:
                break
            out.append(nxt)
            logits, past = self._step(self._torch.tensor([[nxt]]), past)
        return self._tok.decode(out, skip_special_tokens=True), False

    # ------------------------------------------------------------------ JSON

    def chat_json(self, messages: list[dict], schema: dict, max_tokens: int = 256, timeout: float = 20.0) -> dict:
        self.load()
        msgs = [dict(m) for m in messages]
        instr = jsonout.schema_instruction(schema)
        if msgs and msgs[0]["role"] == "system":
            msgs[0]["content"] += "\n" + instr
        else:
            msgs.insert(0, {"role": "system", "content": instr})
        deadline = time.monotonic() + timeout
        with self._lock:
            ids = self._prompt_ids(msgs)
            if guided.is_flat(schema):
                classes = self._token_classes()
                step = _TorchStepper(self)
                text = guided.guided_object(step, classes, schema, step.start(ids), max_tokens,
                                            deadline, lambda t: self._tok(t, add_special_tokens=False).input_ids)
            else:
                text, timed_out = self._free(ids, max_tokens, deadline)
                if timed_out:
                    raise BackendError(f"transformers: timeout after {timeout:.1f}s")
        return jsonout.parse(text, schema)

    def _token_classes(self) -> guided.TokenClasses:
        if self._classes is None:
            n = int(self._model.get_output_embeddings().weight.shape[0])
            self._vocab = [self._tok.decode([i]) if i < len(self._tok) else "" for i in range(n)]
            self._classes = guided.TokenClasses(self._vocab)
        return self._classes


class _TorchStepper:
    """guided.Stepper over a causal LM with a KV cache."""

    def __init__(self, backend: TransformersBackend):
        self.b = backend
        self.vocab = backend._vocab
        self.eos = {backend._tok.eos_token_id} if backend._tok.eos_token_id is not None else set()
        self.past = None

    def _run(self, ids):
        logits, self.past = self.b._step(ids, self.past)
        return logits.float().numpy()

    def start(self, ids):
        return self._run(ids)

    def feed_text(self, text: str):
        ids = self.b._tok(text, add_special_tokens=False, return_tensors="pt").input_ids
        return self._run(ids)

    def feed_token(self, token: int):
        return self._run(self.b._torch.tensor([[token]]))
