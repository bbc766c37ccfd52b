"""The background mechanism (app.ui.tasks) and one-shot children (app.ui.json_child)."""

from __future__ import annotations

import logging
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QThreadPool
from PySide6.QtWidgets import QWidget

from app.ui.json_child import EXIT_KILLED, JsonChild
from app.ui.tasks import run_in_background


@pytest.fixture
def pool() -> Any:
    pool = QThreadPool()
    yield pool
    pool.waitForDone(10_000)


def test_the_work_runs_off_the_gui_thread_and_the_result_arrives_on_it(
    qtbot: Any, pool: QThreadPool
) -> None:
    parent = QObject()
    threads: dict[str, int] = {}
    results: list[object] = []

    def work() -> int:
        threads["work"] = threading.get_ident()
        return 42

    def success(result: object) -> None:
        threads["success"] = threading.get_ident()
        results.append(result)

    run_in_background(work, on_success=success, parent=parent, pool=pool)
    qtbot.waitUntil(lambda: results == [42], timeout=10_000)
    assert threads["success"] == threading.get_ident()
    assert threads["work"] != threading.get_ident()


def test_a_failure_reaches_on_failure_on_the_gui_thread_and_is_logged(
    qtbot: Any, pool: QThreadPool, caplog: pytest.LogCaptureFixture
) -> None:
    parent = QObject()
    failures: list[tuple[BaseException, int]] = []

    def work() -> None:
        raise ValueError("tracker said no")

    run_in_background(
        work,
        on_success=lambda _r: pytest.fail("no success expected"),
        on_failure=lambda exc: failures.append((exc, threading.get_ident())),
        parent=parent,
        pool=pool,
    )
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    [(error, thread)] = failures
    assert isinstance(error, ValueError) and str(error) == "tracker said no"
    assert thread == threading.get_ident()
    assert any("tracker said no" in r.getMessage() for r in caplog.records)


def test_a_result_after_the_parent_is_destroyed_is_dropped(qtbot: Any, pool: QThreadPool) -> None:
    parent = QObject()
    release = threading.Event()
    delivered: list[object] = []
    run_in_background(
        lambda: release.wait(10) and "late",
        on_success=delivered.append,
        on_failure=delivered.append,
        parent=parent,
        pool=pool,
    )
    destroyed: list[bool] = []
    parent.destroyed.connect(lambda: destroyed.append(True))
    parent.deleteLater()
    qtbot.waitUntil(lambda: destroyed == [True], timeout=10_000)
    release.set()
    assert pool.waitForDone(10_000)
    qtbot.wait(100)  # let any queued delivery run (there must be none)
    assert delivered == []


def test_a_window_held_only_by_its_callback_is_freed_after_delivery(
    qtbot: Any, pool: QThreadPool
) -> None:
    """The callback may hold the window's last reference: releasing it must not crash."""
    results: list[object] = []
    destroyed: list[bool] = []

    class Window(QWidget):
        def got(self, result: object) -> None:
            results.append(result)

    window = Window()
    window.destroyed.connect(lambda: destroyed.append(True))
    release = threading.Event()
    run_in_background(
        lambda: release.wait(10) and 7, on_success=window.got, parent=window, pool=pool
    )
    del window
    release.set()
    qtbot.waitUntil(lambda: results == [7], timeout=10_000)
    qtbot.waitUntil(lambda: destroyed == [True], timeout=10_000)


def test_a_discarded_task_delivers_nothing(qtbot: Any, pool: QThreadPool) -> None:
    parent = QObject()
    release = threading.Event()
    delivered: list[object] = []
    task = run_in_background(
        lambda: release.wait(10), on_success=delivered.append, parent=parent, pool=pool
    )
    task.discard()
    release.set()
    assert pool.waitForDone(10_000)
    qtbot.wait(100)
    assert delivered == []


def test_a_broken_callback_is_logged_and_later_tasks_still_run(
    qtbot: Any, pool: QThreadPool, caplog: pytest.LogCaptureFixture
) -> None:
    parent = QObject()
    results: list[object] = []

    def broken(_result: object) -> None:
        raise RuntimeError("bug in a callback")

    with caplog.at_level(logging.ERROR, logger="app.ui.tasks"):
        run_in_background(lambda: 1, on_success=broken, parent=parent, pool=pool)
        qtbot.waitUntil(
            lambda: any("on_success failed" in r.getMessage() for r in caplog.records),
            timeout=10_000,
        )
    run_in_background(lambda: 2, on_success=results.append, parent=parent, pool=pool)
    qtbot.waitUntil(lambda: results == [2], timeout=10_000)


CHILD = textwrap.dedent(
    """
    import json, sys, time
    mode = sys.argv[1]
    sys.stderr.write('{"kind": "progress", "data": {"stage": "import", "done": 1, "total": 2}}\\n')
    sys.stderr.write("INFO core: a plain log line\\n{not json\\n")
    sys.stderr.write('{"kind": "progress", "data": {"stage": "imp')  # split mid-line
    sys.stderr.flush()
    time.sleep(0.2)
    sys.stderr.write('ort", "done": 2, "total": 2}}\\n')
    sys.stderr.flush()
    if mode == "stop":
        print(json.dumps({"got": sys.stdin.readline().strip(), "then": sys.stdin.read()}))
        sys.exit(0)
    if mode == "stubborn":
        import signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            time.sleep(1)
    if mode == "busy":  # reads no stdin, but cleans up on KeyboardInterrupt
        try:
            while True:
                time.sleep(0.05)
        except KeyboardInterrupt:
            print(json.dumps({"cleaned": True}), flush=True)
            sys.exit(130)
    print(json.dumps({"path": "/x"}))
    sys.exit(3)
    """
)


def run_child(qtbot: Any, tmp_path: Path, mode: str, cancel: bool = False, **kw: Any) -> Any:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = JsonChild(**kw)
    events: list[dict[str, Any]] = []
    lines: list[str] = []
    child.event.connect(events.append)
    child.log_line.connect(lines.append)
    with qtbot.waitSignal(child.finished, timeout=20_000) as finished:
        child.start([sys.executable, str(script), mode])
        if cancel:
            qtbot.waitUntil(lambda: len(events) == 2, timeout=10_000)
            child.cancel()
    return child, events, lines, finished.args


def test_stderr_json_lines_become_events_and_the_rest_log_lines(qtbot: Any, tmp_path: Path) -> None:
    child, events, lines, (code, stdout) = run_child(qtbot, tmp_path, "plain")
    assert [e["data"]["done"] for e in events] == [1, 2]
    assert events[1]["data"]["stage"] == "import"
    assert lines == ["INFO core: a plain log line", "{not json"]
    assert code == 3 and stdout.strip() == '{"path": "/x"}'
    assert not child.running and not child.cancelled


def test_cancel_writes_stop_and_closes_stdin(qtbot: Any, tmp_path: Path) -> None:
    child, _events, _lines, (code, stdout) = run_child(qtbot, tmp_path, "stop", cancel=True)
    assert code == 0 and child.cancelled
    assert stdout.strip() == '{"got": "stop", "then": ""}'  # then EOF


def test_cancel_kills_a_child_that_ignores_stop(qtbot: Any, tmp_path: Path) -> None:
    child, _events, _lines, (code, _stdout) = run_child(
        qtbot,
        tmp_path,
        "stubborn",
        cancel=True,
        interrupt_after_s=0.1,
        terminate_after_s=0.3,
        kill_after_s=1.0,
    )
    assert code == EXIT_KILLED and child.cancelled and not child.running


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is the POSIX step of cancel")
def test_cancel_interrupts_a_child_that_reads_no_stdin_so_it_cleans_up(
    qtbot: Any, tmp_path: Path
) -> None:
    child, _events, _lines, (code, stdout) = run_child(
        qtbot, tmp_path, "busy", cancel=True, interrupt_after_s=0.2
    )
    assert code == 130 and stdout.strip() == '{"cleaned": true}' and child.cancelled


def test_a_command_that_cannot_start_finishes_with_a_sentence(qtbot: Any, tmp_path: Path) -> None:
    child = JsonChild()
    lines: list[str] = []
    child.log_line.connect(lines.append)
    with qtbot.waitSignal(child.finished, timeout=10_000) as finished:
        child.start([str(tmp_path / "no-such-program")])
    assert finished.args == [EXIT_KILLED, ""]
    assert lines and "could not start" in lines[0]
