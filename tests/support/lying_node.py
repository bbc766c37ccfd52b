"""A real ``meshnet-node`` process that lies: the product's command line, with the
test-side liars of ``tests/support/lies`` installed first (``MESHNET_TEST_LIE_RATE``,
``MESHNET_TEST_LIE_MODULE`` in its environment). The product itself has no switch
that makes it lie; end-to-end attack tests start their liar through this::

    python -m tests.support.lying_node run --tracker URL --model DIR ...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from app.demo.processes import Child, Line, child_env, node_arguments
from tests.support.lies import install_from_env


def start_lying_node(
    index: int,
    workdir: Path,
    tracker_url: str,
    model_dir: Path,
    layers: tuple[int, int] | None,
    on_line: Line,
    extra: Sequence[str] = (),
    **lies: str,
) -> Child:
    """As ``app.demo.processes.start_node``, lying as ``lies`` (environment) say;
    with none given, at ``MESHNET_TEST_LIE_RATE=1``."""
    lying = lies or {"MESHNET_TEST_LIE_RATE": "1"}
    env = child_env(MESHNET_HOME=str(workdir / f"node-{index}"), **lying)
    arguments = node_arguments(index, workdir, tracker_url, model_dir, layers, extra)
    argv = [sys.executable, "-m", "tests.support.lying_node", *arguments]
    return Child(f"node {index}", argv, env, workdir / f"node-{index}.log", on_line)


def main() -> int:
    if not install_from_env():
        print("lying_node: set MESHNET_TEST_LIE_RATE or MESHNET_TEST_LIE_MODULE", file=sys.stderr)
        return 2
    from app.cli.node import main as node_main

    return node_main()


if __name__ == "__main__":
    sys.exit(main())
