"""LLM back ends behind one small interface, shared by the likelihood slow path, the adversarial
guesser and the L4/L5 rewriting. Heavy libraries (llama_cpp, transformers) are imported lazily in
`load()`. `make_backend(settings.llm)` returns None for `backend: none`.

Interface (every back end):
    name: str
    load() -> None                                   # raises ModelLoadError naming the file
    chat(messages, max_tokens, timeout) -> str       # raises BackendError
    chat_json(messages, schema, max_tokens, timeout) -> dict   # JSON-constrained; raises BackendError

Back ends: `llama_cpp` (llamacpp.py: a GGUF file, grammar-constrained JSON), `transformers`
(hf.py: a local model directory, guided JSON decoding) and `openai_compatible` (openai_compatible.py:
a local server speaking the OpenAI chat API at `llm.base_url`, e.g. Ollama; loopback or private
addresses only unless `llm.allow_remote`). `status(settings)` says what is installed and loadable
(for openai_compatible: whether the server answers and serves `llm.model`), for `guardian-proxy doctor`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Protocol

from ..config import LLMSettings, Settings
from ..errors import ConfigError


class LLMBackend(Protocol):
    name: str

    def load(self) -> None: ...

    def chat(self, messages: list[dict], max_tokens: int = 256, timeout: float = 20.0) -> str: ...

    def chat_json(self, messages: list[dict], schema: dict, max_tokens: int = 256, timeout: float = 20.0) -> dict: ...


def make_backend(settings: LLMSettings) -> LLMBackend | None:
    """The configured back end, not loaded yet (call `load()`; it raises ModelLoadError naming the file)."""
    if settings.backend == "none":
        return None
    if settings.backend == "openai_compatible":
        from .openai_compatible import OpenAICompatibleBackend

        if not settings.base_url:
            raise ConfigError("llm.backend 'openai_compatible' needs llm.base_url (e.g. http://127.0.0.1:11434/v1)")
        return OpenAICompatibleBackend(settings.base_url, settings.model or "", api_key=api_key(settings),
                                       allow_remote=settings.allow_remote)
    if not settings.model_path:
        raise ConfigError(f"llm.backend {settings.backend!r} needs llm.model_path")
    if not Path(settings.model_path).expanduser().exists():
        raise ConfigError(f"llm.model_path not found: {settings.model_path}")
    if settings.backend == "llama_cpp":
        from .llamacpp import LlamaCppBackend

        return LlamaCppBackend(settings.model_path, n_threads=settings.n_threads, n_ctx=settings.n_ctx,
                               chat_format=settings.chat_format)
    if settings.backend == "transformers":
        from .hf import TransformersBackend

        return TransformersBackend(settings.model_path, n_threads=settings.n_threads)
    raise ConfigError(f"unknown LLM back end {settings.backend!r}")


def api_key(settings: LLMSettings) -> str | None:
    """`llm.api_key`, else the environment variable named by `llm.api_key_env` (ConfigError when it is unset)."""
    if settings.api_key is not None and settings.api_key.get_secret_value().strip():
        return settings.api_key.get_secret_value()
    if settings.api_key_env:
        value = os.environ.get(settings.api_key_env, "")
        if not value.strip():
            raise ConfigError(f"llm.api_key_env names {settings.api_key_env}, which is not set in the environment")
        return value
    return None


def _version(module: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return None
    try:
        from importlib.metadata import version

        return version({"llama_cpp": "llama-cpp-python"}.get(module, module))
    except Exception:
        return "installed"


def status(settings: Settings | LLMSettings, load: bool = False) -> dict:
    """What is installed and configured; with load=True also tries to load the configured model.
    Never raises: problems are reported in the dict ("ok": False, "error")."""
    llm = settings.llm if isinstance(settings, Settings) else settings
    out: dict = {
        "backend": llm.backend, "model_path": llm.model_path,
        "installed": {"llama_cpp": _version("llama_cpp"), "transformers": _version("transformers"),
                      "torch": _version("torch")},
        "ok": True,
    }
    if llm.backend == "none":
        out["note"] = "no LLM configured: the likelihood slow path uses the conservative fallback"
        return out
    if llm.backend == "openai_compatible":
        return _server_status(llm, out)
    if llm.model_path and not Path(llm.model_path).expanduser().exists():
        out.update(ok=False, error=f"model path not found: {llm.model_path}")
        return out
    needed = "llama_cpp" if llm.backend == "llama_cpp" else "transformers"
    if out["installed"][needed] is None:
        out.update(ok=False, error=f"{needed} is not installed (pip install 'guardian-proxy[llm]')")
        return out
    out["detail"] = f"{llm.backend} {llm.model_path} ({needed} {out['installed'][needed]})"
    if load:
        try:
            backend = make_backend(llm)
            backend.load()
            out["loaded"] = True
            out["detail"] += ", loaded"
        except Exception as e:  # report, never raise: doctor prints it
            out.update(ok=False, loaded=False, error=f"{type(e).__name__}: {e}")
    return out


def _server_status(llm: LLMSettings, out: dict) -> dict:
    """openai_compatible: the configuration is checked and the server probed (one GET /models, 2 s at most)."""
    out.update(base_url=llm.base_url, model=llm.model)
    try:
        backend = make_backend(llm)
        backend.load()
    except Exception as e:  # report, never raise: doctor prints it
        out.update(ok=False, error=f"{type(e).__name__}: {e}")
        return out
    out["detail"] = f"openai_compatible {llm.model} at {backend.base_url}, reachable" + (
        ", key set" if backend.has_key else "")
    backend.close()
    return out
