"""The leaderboard name and team on a real tracker, and the credit in the tray's tooltip.

A tracker process on loopback; this computer's key in a dict keyring (the app's
profile), registered with the tracker as the node child would; the app posts the
signed account claim once the registration gate says so (app/ui/credit_linker.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QSettings

from app.credit_link import LinkWish, needs_posting
from app.network_join import APP_PROFILE
from app.settings_model import AppSettings
from app.texts import text
from app.ui.main import MeshNetApp
from app.ui.settings_store import SettingsStore
from core.identity.keypair import NodeIdentity
from core.identity.keystore import KeyringStore
from tests.app.ui.join_support import dict_keyring as dict_keyring  # a fixture
from tests.app.ui.test_main import NoProbes, StubApp, Usage
from tests.core.keyring_backend import DictKeyring
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.server_process import TrackerProcess, free_port

CREDIT = 2.5


@pytest.fixture
def identity(dict_keyring: DictKeyring) -> NodeIdentity:
    """This computer's key, where the node child and the app both find it."""
    made = NodeIdentity.generate()
    KeyringStore(APP_PROFILE).save(made)
    return made


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    home = tmp_path / "tracker-home"
    home.mkdir()
    db_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    process = TrackerProcess(home, db_url, MESHNET_TRACKER_REACHABILITY_POLL_S="3600").start()
    try:
        yield process
    finally:
        process.stop()


def register_and_credit(tracker: TrackerProcess, identity: NodeIdentity) -> None:
    """Register this computer's key (as its node would) and give it some verified credit."""
    from tracker_service.domain.credit_rules import bucket_of
    from tracker_service.store import credits as ledger
    from tracker_service.store.db import Database

    with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
        assert register(client, FakeNode(key=identity.private_key)).status_code == 200
    database = Database(tracker.db_url)
    row = ledger.CreditRow(identity.node_id, bucket_of(time.time()), credit=CREDIT, hops=1)
    ledger.add_credit(database, [row])
    database.dispose()


def make_app(qtbot: Any, tmp_path: Path, *, tray: bool) -> MeshNetApp:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url="http://127.0.0.1:9"))
    app = MeshNetApp(
        StubApp(),  # type: ignore[arg-type]
        store=store,
        probes=NoProbes(),
        usage=Usage(),
        tray_available=tray,
        state=QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat),
    )
    return app


def registered(app: MeshNetApp, tracker_url: str, node_id: str) -> None:
    """The node child's registration gate, as it reaches the controller."""
    app.controller.handle_event(
        {
            "kind": "gate",
            "gate": "registration",
            "gate_state": "passed",
            "message": "Registered with the tracker.",
            "data": {"node_id": node_id, "tracker_url": tracker_url},
            "at": time.time(),
        }
    )


def credit_row(tracker: TrackerProcess, credit_id: str) -> dict[str, Any]:
    reply = httpx.get(f"{tracker.url}/api/v1/credits/{credit_id}", timeout=10.0)
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    return found


def test_the_name_and_team_reach_the_leaderboard_and_a_change_is_posted_again(
    qtbot: Any, tmp_path: Path, tracker: TrackerProcess, identity: NodeIdentity
) -> None:
    register_and_credit(tracker, identity)
    app = make_app(qtbot, tmp_path, tray=True)
    app.store.update(display_name="Ada", team="Analytical")  # as the wizard's Finish does
    assert app.credit_linker.sentence == ""  # not registered yet: nothing to link
    registered(app, tracker.url, identity.node_id)
    qtbot.waitUntil(lambda: app.credit_linker.sentence != "", timeout=20_000)
    assert app.credit_linker.sentence == text("leaderboard.done")
    assert app.status_window.details.credit_link_label.text() == text("leaderboard.done")
    account = credit_row(tracker, f"pc-{identity.node_id}")
    assert (account["kind"], account["display_name"], account["team"]) == (
        "account",
        "Ada",
        "Analytical",
    )
    assert [row["node_id"] for row in account["identities"]] == [identity.node_id]
    assert account["total"] == CREDIT

    app.store.update(team="Difference Engines")  # the settings window's Save
    qtbot.waitUntil(
        lambda: (app.store.credit_link() or {}).get("team") == "Difference Engines",
        timeout=20_000,
    )
    assert credit_row(tracker, f"pc-{identity.node_id}")["team"] == "Difference Engines"

    # the credit card read the tracker on registration: the tray says it in one line
    card = app.status_window.credit_card
    qtbot.waitUntil(lambda: card.summary is not None, timeout=20_000)
    assert card.summary is not None and card.summary.total == CREDIT
    assert app.tray is not None
    assert app.tray.icon.toolTip().splitlines()[-1] == card.summary.one_line()
    card.refresh()  # the next minute's read shows the name it is listed under
    qtbot.waitUntil(
        lambda: card.label.text().startswith("On the leaderboard as Ada"), timeout=20_000
    )
    assert app.tray.icon.toolTip().splitlines() == [
        "MeshNet — not contributing",
        card.summary.one_line(),
    ]


def test_a_refusal_is_said_in_details_and_the_next_registration_tries_again(
    qtbot: Any, tmp_path: Path, tracker: TrackerProcess, identity: NodeIdentity
) -> None:
    app = make_app(qtbot, tmp_path, tray=False)  # no tray: the app works without one
    app.store.update(display_name="Ada")
    registered(app, tracker.url, identity.node_id)  # but the tracker never saw this key
    qtbot.waitUntil(lambda: app.credit_linker.sentence != "", timeout=20_000)
    assert app.credit_linker.sentence == f"{text('leaderboard.refused')} [unknown-node]"
    assert app.status_window.details.credit_link_label.text() == app.credit_linker.sentence
    assert app.store.credit_link() is None

    register_and_credit(tracker, identity)
    registered(app, tracker.url, identity.node_id)
    qtbot.waitUntil(lambda: app.credit_linker.sentence == text("leaderboard.done"), timeout=20_000)
    assert credit_row(tracker, f"pc-{identity.node_id}")["display_name"] == "Ada"


def test_an_unreachable_tracker_is_said_plainly(
    qtbot: Any, tmp_path: Path, identity: NodeIdentity
) -> None:
    app = make_app(qtbot, tmp_path, tray=False)
    app.store.update(team="Analytical")
    registered(app, f"http://127.0.0.1:{free_port()}", identity.node_id)
    qtbot.waitUntil(lambda: app.credit_linker.sentence != "", timeout=20_000)
    assert app.credit_linker.sentence == text("leaderboard.unreachable")
    assert app.store.credit_link() is None


def test_nothing_is_sent_for_a_contributor_who_gave_no_name(
    qtbot: Any, tmp_path: Path, identity: NodeIdentity
) -> None:
    app = make_app(qtbot, tmp_path, tray=False)
    registered(app, f"http://127.0.0.1:{free_port()}", identity.node_id)
    assert not app.credit_linker.posting and app.credit_linker.sentence == ""


def test_a_name_is_posted_when_it_differs_from_what_this_tracker_accepted() -> None:
    wish = LinkWish("http://t", "a" * 32, "Ada", "")
    assert needs_posting(wish, None)
    assert not needs_posting(wish, wish)
    cleared = LinkWish("http://t", "a" * 32, "", "")
    assert needs_posting(cleared, wish)  # taken off the leaderboard
    assert not needs_posting(cleared, None)  # never opted in: nothing to send
    elsewhere = LinkWish("http://other", "a" * 32, "Ada", "")
    assert needs_posting(elsewhere, wish)
    assert LinkWish.from_record(wish.record()) == wish and LinkWish.from_record({}) is None
