"""The chat page in a real headless Chromium (Debian's, via Selenium), on a real
tracker process with no nodes.

The markdown renderer against hostile and ordinary answers; markup in a person's
message and in a model's answer shown as text; Stop before and during an answer;
a refused request put back in the box; the API key asked for, sent and kept in
sessionStorage only; the page on a phone. Answers here come from a stand-in
gateway (tests/tracker_service/chat_browser.py) that replaces the page's fetch;
tests/e2e/test_chat_page_browser.py talks to real nodes through the real gateway.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.tracker_service.api.test_status_browser import CLIPPED_TEXT
from tests.tracker_service.browser import DESKTOP, PHONE, chromium, console_problems, set_viewport
from tests.tracker_service.chat_browser import (
    INJECTED,
    fake_gateway,
    last,
    models_shown,
    read_log,
    require_browser,
    send,
)
from tests.tracker_service.server_process import TrackerProcess
from tests.tracker_service.status_scene import wait_for
from tracker_service.store.api_keys import add_api_key
from tracker_service.store.db import Database

pytestmark = pytest.mark.slow

START_S = 120.0  # a tracker's start on a loaded machine (the default 30 s ran out here once)
HOSTILE_MESSAGE = '<img src=x onerror="window.meshnetPwned = 1">'
# A "model" answering markup, cut so the tag is split between two pieces.
HOSTILE_ANSWER = (
    "Here — ü: <scr",
    'ipt>window.meshnetPwned = 2</script> and <img src=x onerror="window.meshnetPwned = 3">\n\n',
    "[a link](javascript:window.meshnetPwned=4) [home](https://example.org/?a=1&b=2)\n\n",
    '```html\n<iframe src="https://example.org"></iframe>\n```',
)

# markdown source -> the DOM chat_markdown.js builds for it, as the browser serializes it.
RENDERED = {
    HOSTILE_MESSAGE: '<p>&lt;img src=x onerror="window.meshnetPwned = 1"&gt;</p>',
    "Use **bold**, *italic*, _also_ and `a <b> c`.": (
        "<p>Use <strong>bold</strong>, <em>italic</em>, <em>also</em> and "
        "<code>a &lt;b&gt; c</code>.</p>"
    ),
    "```html\n<script>alert(1)</script>\n```\nafter": (
        '<pre><code class="language-html">&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>'
        "<p>after</p>"
    ),
    "```python\nprint(1)": '<pre><code class="language-python">print(1)</code></pre>',
    "[site](https://example.org/a?b=1&c=2) [bad](javascript:void0) [rel](/v1/models) "
    "[data](data:text/html,hi)": (
        '<p><a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" '
        'target="_blank">site</a> [bad](javascript:void0) [rel](/v1/models) '
        "[data](data:text/html,hi)</p>"
    ),
    "[<b>x</b>](https://a.example/)": (
        '<p><a href="https://a.example/" rel="noopener noreferrer nofollow" target="_blank">'
        "&lt;b&gt;x&lt;/b&gt;</a></p>"
    ),
    "- one\n- two\n  - inner\n3. three\n4. four": (
        "<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>"
        '<ol start="3"><li>three</li><li>four</li></ol>'
    ),
    "1. first\n   still first\n\n2. second": "<ol><li>first\nstill first</li><li>second</li></ol>",
    "## Title *x*\ntext": "<h4>Title <em>x</em></h4><p>text</p>",
    "a snake_case_name and 2 * 3 * 4": "<p>a snake_case_name and 2 * 3 * 4</p>",
    "line one\nline two\n\nnext": "<p>line one\nline two</p><p>next</p>",
    "**<i>not italic</i>**": "<p><strong>&lt;i&gt;not italic&lt;/i&gt;</strong></p>",
}
# Every element the renderer may build; anything else in its output is a defect.
ALLOWED_TAGS = {"P", "STRONG", "EM", "CODE", "PRE", "UL", "OL", "LI", "A", "H3", "H4", "H5", "H6"}

RENDER = """
const box = document.createElement("div");
box.append(window.MeshnetMarkdown.render(arguments[0]));
return [box.innerHTML, [...box.querySelectorAll("*")].map((e) => e.tagName)];
"""


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackerProcess]:
    require_browser()
    home = tmp_path_factory.mktemp("chat-page")
    process = TrackerProcess(home, f"sqlite:///{home / 'tracker.db'}").start(START_S)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TrackerProcess, str]]:
    """A tracker whose gateway has an API key (issued before it starts) and the key."""
    require_browser()
    home = tmp_path_factory.mktemp("chat-page-keyed")
    db_url = f"sqlite:///{home / 'tracker.db'}"
    database = Database(db_url)
    database.migrate()
    with database.sessions.begin() as session:
        _row, key = add_api_key(session, label="chat-page", now=time.time())
    database.dispose()
    process = TrackerProcess(home, db_url).start(START_S)
    try:
        yield process, key
    finally:
        process.stop()


@pytest.fixture(scope="module")
def driver(tracker: TrackerProcess) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def _open(driver: Any, url: str, size: tuple[int, int] = DESKTOP, *, mobile: bool = False) -> None:
    set_viewport(driver, *size, mobile=mobile)
    driver.get(url + "/chat")
    assert driver.title == "MeshNet chat"


def _state(driver: Any, role: str) -> str:
    log = [m for m in read_log(driver) if m["role"] == role]
    return str(log[-1]["state"]) if log else ""


def test_markdown_renderer_builds_only_safe_elements_and_shows_markup_as_text(
    tracker: TrackerProcess, driver: Any
) -> None:
    _open(driver, tracker.url)
    for source, expected in RENDERED.items():
        html, tags = driver.execute_script(RENDER, source)
        assert html == expected, source
        assert set(tags) <= ALLOWED_TAGS, source
    assert driver.execute_script("return window.meshnetPwned") is None
    assert console_problems(driver) == []


def test_no_model_serving_says_so_and_nothing_can_be_sent(
    tracker: TrackerProcess, driver: Any
) -> None:
    _open(driver, tracker.url)
    notice = driver.find_element(By.ID, "notice")
    wait_for(lambda: notice.text.startswith("No model serves"), "the empty model list")
    assert models_shown(driver) == [""]
    assert driver.find_element(By.ID, "model").get_attribute("disabled") is not None
    assert driver.find_element(By.ID, "send").get_attribute("disabled") is not None
    assert not driver.find_element(By.ID, "key-field").is_displayed()  # loopback: no key needed
    send(driver, "hello?")
    assert read_log(driver) == []
    assert console_problems(driver) == []


def test_markup_in_a_message_and_in_an_answer_shows_as_text(
    tracker: TrackerProcess, driver: Any
) -> None:
    with fake_gateway(driver, pieces=HOSTILE_ANSWER):
        _open(driver, tracker.url)
        wait_for(lambda: models_shown(driver) == ["tests/stand-in"], "the model list")
        send(driver, HOSTILE_MESSAGE)
        wait_for(lambda: _state(driver, "assistant") == "done", "the answer")
        mine, answer = read_log(driver)
        assert (mine["who"], mine["text"]) == ("You", HOSTILE_MESSAGE)
        assert answer["who"] == "tests/stand-in"
        said = driver.find_element(By.CSS_SELECTOR, "#log .assistant .text").text
        assert "Here — ü: <script>window.meshnetPwned = 2</script> and <img src=x" in said
        assert "[a link](javascript:window.meshnetPwned=4) home" in said
        assert '<iframe src="https://example.org"></iframe>' in said
        assert driver.execute_script(INJECTED) == 0
        links = driver.find_elements(By.CSS_SELECTOR, "#log a")
        assert [a.get_attribute("href") for a in links] == ["https://example.org/?a=1&b=2"]
        assert driver.execute_script("return window.meshnetPwned") is None
        sent = driver.execute_script("return window.meshnetSent")
        assert sent == [
            {
                "model": "tests/stand-in",
                "messages": [{"role": "user", "content": HOSTILE_MESSAGE}],
                "stream": True,
                "temperature": 0.7,  # the field's default, as `meshnet chat`
            }
        ]
    assert console_problems(driver) == []


def test_stop_ends_an_answer_and_the_next_question_carries_what_was_shown(
    tracker: TrackerProcess, driver: Any
) -> None:
    with fake_gateway(driver, pieces=("Once", " upon"), forever=True):
        _open(driver, tracker.url)
        wait_for(lambda: models_shown(driver) == ["tests/stand-in"], "the model list")
        send(driver, "Tell me a story")
        wait_for(lambda: last(driver, "assistant")["text"].count("more") >= 3, "the stream")
        assert last(driver, "assistant")["state"] == "streaming"
        assert driver.find_element(By.ID, "stop").is_displayed()
        assert not driver.find_element(By.ID, "send").is_displayed()
        driver.find_element(By.ID, "stop").click()
        wait_for(lambda: _state(driver, "assistant") == "stopped", "the stop")
        assert driver.execute_script("return window.meshnetAborted") == 1
        stopped = last(driver, "assistant")
        assert stopped["note"] == "Stopped." and stopped["text"].startswith("Once upon more")
        shown = stopped["text"]
        time.sleep(0.3)  # the stand-in would add a word every 50 ms if the page still read it
        assert last(driver, "assistant")["text"] == shown
        assert driver.find_element(By.ID, "send").is_displayed()

        send(driver, "Go on")
        wait_for(lambda: len(driver.execute_script("return window.meshnetSent")) == 2, "2nd ask")
        second = driver.execute_script("return window.meshnetSent")[1]["messages"]
        assert second == [
            {"role": "user", "content": "Tell me a story"},
            {"role": "assistant", "content": shown},
            {"role": "user", "content": "Go on"},
        ]
        driver.find_element(By.ID, "stop").click()
        wait_for(lambda: _state(driver, "assistant") == "stopped", "the second stop")
    assert console_problems(driver) == []


def test_stop_before_the_first_word_puts_the_question_back(
    tracker: TrackerProcess, driver: Any
) -> None:
    with fake_gateway(driver, forever=True, silent=True):  # says nothing until stopped
        _open(driver, tracker.url)
        wait_for(lambda: models_shown(driver) == ["tests/stand-in"], "the model list")
        send(driver, "Anyone there?")
        wait_for(lambda: driver.find_element(By.ID, "stop").is_displayed(), "the Stop button")
        driver.find_element(By.ID, "stop").click()
        wait_for(lambda: _state(driver, "user") == "stopped", "the stop")
        [mine] = read_log(driver)  # the empty answer is gone
        assert mine["unsent"] and mine["note"] == "Stopped before the answer began; not sent."
        box = driver.find_element(By.ID, "prompt")
        assert box.get_attribute("value") == "Anyone there?"
    assert console_problems(driver) == []


def test_a_refused_request_says_why_and_puts_the_question_back(
    tracker: TrackerProcess, driver: Any
) -> None:
    error = {
        "message": "no route could serve 'tests/stand-in': every route is busy",
        "type": "server_error",
        "param": None,
        "code": "unavailable",
    }
    with fake_gateway(driver, status=503, error=error):
        _open(driver, tracker.url)
        wait_for(lambda: models_shown(driver) == ["tests/stand-in"], "the model list")
        send(driver, "Hello <b>there</b>")
        wait_for(lambda: _state(driver, "user") == "failed", "the refusal")
        [mine] = read_log(driver)
        assert mine["note"] == f"Not sent: {error['message']}"
        assert driver.find_element(By.ID, "prompt").get_attribute("value") == "Hello <b>there</b>"
        # New chat empties the conversation and says how to start again.
        driver.find_element(By.ID, "new-chat").click()
        assert read_log(driver) == []
        assert driver.find_element(By.ID, "empty").is_displayed()
    assert console_problems(driver) == []


def test_api_key_is_asked_for_sent_and_kept_in_this_tab_only(
    keyed: tuple[TrackerProcess, str], driver: Any
) -> None:
    tracker, key = keyed
    _open(driver, tracker.url)
    field = driver.find_element(By.ID, "api-key")
    notice = driver.find_element(By.ID, "notice")
    assert field.is_displayed()
    assert "needs an API key" in notice.text
    assert models_shown(driver) == [""]

    field.send_keys("not-a-key", Keys.TAB)  # Tab: the field's change event
    wait_for(lambda: "API key is not valid" in notice.text, "the refusal of a wrong key")
    # The browser logs the refused request itself; nothing else may be logged.
    refused = console_problems(driver)
    assert refused and all("401" in line for line in refused), refused

    field.clear()
    field.send_keys(key, Keys.TAB)
    wait_for(lambda: notice.text.startswith("No model serves"), "the models with the key")
    storage = "return [sessionStorage.getItem('meshnet-chat-api-key'), localStorage.length]"
    assert driver.execute_script(storage) == [key, 0]

    driver.refresh()  # the same tab: the key is still there, and used at once
    wait_for(
        lambda: driver.find_element(By.ID, "notice").text.startswith("No model serves"),
        "the models after a reload",
    )
    assert driver.find_element(By.ID, "api-key").get_attribute("value") == key
    assert console_problems(driver) == []
    driver.execute_script("sessionStorage.clear()")


@pytest.mark.parametrize(("size", "mobile"), [(PHONE, True), (DESKTOP, False)])
def test_page_fits_the_screen_with_no_clipped_text(
    tracker: TrackerProcess, driver: Any, size: tuple[int, int], mobile: bool
) -> None:
    answer = ("Sure. Three **colours**:\n\n- red\n- green\n- blue\n\n", "Code: `x = 1`")
    with fake_gateway(driver, models=("HuggingFaceTB/SmolLM2-135M-Instruct",), pieces=answer):
        _open(driver, tracker.url, size, mobile=mobile)
        wait_for(lambda: len(models_shown(driver)) == 1 and models_shown(driver)[0], "models")
        send(driver, "Name three colours, please, and show a line of code.")
        wait_for(lambda: _state(driver, "assistant") == "done", "the answer")
        width = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width == [size[0], size[0]]  # no sideways scrolling
        assert driver.execute_script(CLIPPED_TEXT) == []
        # The message box stays on screen under the conversation.
        bottom = driver.execute_script(
            "return document.getElementById('composer').getBoundingClientRect().bottom"
        )
        assert bottom <= size[1] + 1
    assert console_problems(driver) == []
