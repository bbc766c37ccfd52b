"""GET /chat: the chat page's HTML, its headers and its own static files.

The page runs in a real browser in tests/e2e/test_chat_page_browser.py; here the
tracker's answer alone: the status page's strict CSP, no inline script or style,
the three files it loads served with their types, and the key field shown at once
only when the gateway has API keys.
"""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tracker_service.app import create_app
from tracker_service.config import Settings
from tracker_service.store.api_keys import add_api_key

PAGE_FILES = {
    "/static/chat.js": "text/javascript",
    "/static/chat_markdown.js": "text/javascript",
    "/static/chat.css": "text/css",
    "/static/favicon.svg": "image/svg+xml",
}


def _policy(header: str) -> dict[str, str]:
    return dict(directive.strip().split(" ", 1) for directive in header.split(";"))


def test_chat_page_is_html_under_the_status_pages_strict_csp(client: TestClient) -> None:
    page = client.get("/chat")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = _policy(page.headers["content-security-policy"])
    assert policy["default-src"] == "'self'"
    for kind in ("script-src", "style-src", "connect-src", "img-src"):
        assert policy[kind] == "'self'", kind
    for kind in ("object-src", "base-uri", "frame-ancestors", "form-action"):
        assert policy[kind] == "'none'", kind
    assert policy["require-trusted-types-for"] == "'script'"
    assert "unsafe" not in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"


def test_chat_page_loads_only_its_own_files_and_has_no_inline_script_or_style(
    client: TestClient,
) -> None:
    text = client.get("/chat").text
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", text, re.S)
    assert scripts == [
        (' src="/static/chat_markdown.js" defer', ""),
        (' src="/static/chat.js" defer', ""),
    ]
    assert "<style" not in text and " style=" not in text
    assert re.search(r"\son[a-z]+=", text) is None  # no inline event handlers either
    linked = set(re.findall(r'(?:src|href)="(/static/[^"]+)"', text))
    assert linked == set(PAGE_FILES)
    # Every address the page names is this tracker's own (no CDN, no other origin).
    assert not re.search(r'(?:src|href)="(?!/)', text)
    assert '<meta name="viewport" content="width=device-width' in text


def test_chat_page_files_are_served_with_their_types(client: TestClient) -> None:
    for path, kind in PAGE_FILES.items():
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert answer.headers["content-type"].startswith(kind), (path, answer.headers)
        assert answer.content, path
    # The scripts call the gateway on this origin only.
    script = client.get("/static/chat.js").text
    assert '"/v1/models"' in script and '"/v1/chat/completions"' in script
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "sessionStorage" in script and "localStorage" not in script
    markdown = client.get("/static/chat_markdown.js").text
    assert "innerHTML" not in markdown and "insertAdjacentHTML" not in markdown


def test_key_field_is_hidden_at_first_when_the_gateway_has_no_api_keys(
    client: TestClient,
) -> None:
    assert 'data-needs-key="false"' in client.get("/chat").text


def test_key_field_shows_at_once_when_the_gateway_has_api_keys(settings: Settings) -> None:
    first = create_app(settings)  # migrates the database the key goes into
    with first.state.tracker.database.sessions.begin() as session:
        add_api_key(session, label="chat-page", now=0.0)
    first.state.tracker.database.dispose()
    app = create_app(settings)  # a fresh gateway: it counts the keys anew
    try:
        with TestClient(app) as client:
            assert 'data-needs-key="true"' in client.get("/chat").text
            # What the page's script meets without a key, and shows as the reason to type one.
            refused = client.get("/v1/models")
            assert refused.status_code == 401
            assert "needs an API key" in refused.json()["error"]["message"]
    finally:
        app.state.tracker.database.dispose()


def test_chat_page_is_not_in_the_api_schema(client: TestClient) -> None:
    assert "/chat" not in client.get("/openapi.json").json()["paths"]
