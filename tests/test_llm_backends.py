"""make_backend and status: configuration errors are clear, nothing heavy is imported for `none`."""

import subprocess
import sys

import pytest

from guardian_proxy.config import LLMSettings, load_settings
from guardian_proxy.errors import ConfigError, ModelLoadError
from guardian_proxy.llm import make_backend, status


def test_none_and_bad_configuration(tmp_path):
    assert make_backend(LLMSettings()) is None
    with pytest.raises(ConfigError, match="model_path"):
        make_backend(LLMSettings(backend="llama_cpp"))
    with pytest.raises(ConfigError, match="missing.gguf"):
        make_backend(LLMSettings(backend="llama_cpp", model_path=str(tmp_path / "missing.gguf")))


def test_a_file_that_is_not_a_model_fails_at_load_naming_it(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llm)")
    f = tmp_path / "junk.gguf"
    f.write_bytes(b"GGUF but not really")
    with pytest.raises(ModelLoadError, match="junk.gguf"):
        make_backend(LLMSettings(backend="llama_cpp", model_path=str(f))).load()
    with pytest.raises(ModelLoadError, match="hf-model"):
        (tmp_path / "hf-model").mkdir()
        make_backend(LLMSettings(backend="transformers", model_path=str(tmp_path / "hf-model"))).load()


def test_status_reports_without_raising(tmp_path):
    st = status(load_settings(state_dir=tmp_path))
    assert st["ok"] and st["backend"] == "none" and "fallback" in st["note"]
    assert set(st["installed"]) == {"llama_cpp", "transformers", "torch"}
    st = status(LLMSettings(backend="transformers", model_path=str(tmp_path / "nope")))
    assert not st["ok"] and "nope" in st["error"]
    (tmp_path / "empty").mkdir()
    st = status(LLMSettings(backend="transformers", model_path=str(tmp_path / "empty")), load=True)
    assert not st["ok"] and "ModelLoadError" in st["error"]


def test_importing_the_back_ends_does_not_import_the_heavy_libraries():
    code = ("import sys, guardian_proxy.llm, guardian_proxy.llm.llamacpp, guardian_proxy.llm.hf; "
            "bad = [m for m in ('llama_cpp', 'transformers', 'torch') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
