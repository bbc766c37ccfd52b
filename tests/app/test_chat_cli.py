"""`meshnet chat` against a live gateway (a real tracker on loopback, in-process nodes on
a tiny Llama): one-shot, interactive with history, Ctrl-C stops only the answer."""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.chat import Chat, GatewayCallFailed, GatewayClient, run_chat
from app.cli.meshnet import build_parser
from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
)

GREEDY = {"max_tokens": 40, "temperature": 0}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayCluster]:
    model = build_chat_model(tmp_path_factory.mktemp("chat-cli-model"))
    with certified_cluster(tmp_path_factory.mktemp("chat-cli-tracker"), model) as cluster:
        yield cluster


def args_for(cluster: GatewayCluster, *extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["chat", "--tracker", cluster.url, *extra])


def test_one_prompt_streams_the_answer_and_exits(cluster: GatewayCluster) -> None:
    out = io.StringIO()
    code = run_chat(args_for(cluster, "--temperature", "0", "the capital of france is"), out)
    assert code == 0
    client = GatewayClient(cluster.url)
    expected = client.stream_chat(
        MODEL,
        [{"role": "user", "content": "the capital of france is"}],
        lambda _t: None,
        temperature=0,
    )
    client.close()
    assert out.getvalue() == expected.text + "\n"
    assert expected.route.count(":") == 2  # two hops named in X-Meshnet-Route


def test_interactive_chat_keeps_the_history(cluster: GatewayCluster) -> None:
    prompts = iter(["the capital", "of france"])

    def read(_prompt: str) -> str:
        try:
            return next(prompts)
        except StopIteration:
            raise EOFError from None

    client = GatewayClient(cluster.url)
    chat = Chat(client, MODEL, io.StringIO(), dict(GREEDY), read)
    assert chat.interactive() == 0
    client.close()
    assert [m["role"] for m in chat.history] == ["user", "assistant", "user", "assistant"]
    assert chat.history[2]["content"] == "of france"
    assert all(m["content"] for m in chat.history)


class InterruptOnce(io.StringIO):
    """A terminal where the user presses Ctrl-C as the first answer starts."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def write(self, text: str) -> int:
        if not self.interrupted and text and not text.startswith(("\n", " [", "Chatting")):
            self.interrupted = True
            raise KeyboardInterrupt
        return super().write(text)


def test_ctrl_c_stops_the_answer_not_the_program(cluster: GatewayCluster) -> None:
    prompts = iter(["the capital", "of france"])

    def read(_prompt: str) -> str:
        try:
            return next(prompts)
        except StopIteration:
            raise EOFError from None

    out = InterruptOnce()
    client = GatewayClient(cluster.url)
    chat = Chat(client, MODEL, out, dict(GREEDY), read)
    assert chat.interactive() == 0
    client.close()
    assert "[stopped]" in out.getvalue()
    assert len(chat.history) == 4 and chat.history[3]["content"]  # the next answer came
    wait_until(lambda: cluster.open_sessions() == 0, 30, "the stopped answer's route to close")


def test_an_unknown_model_is_a_readable_error(cluster: GatewayCluster) -> None:
    with pytest.raises(GatewayCallFailed, match="does not exist on this tracker"):
        run_chat(args_for(cluster, "--model", "nope", "hi"), io.StringIO())


def test_an_unreachable_tracker_is_a_readable_error(tmp_path: Path) -> None:
    args = build_parser().parse_args(["chat", "--tracker", "http://127.0.0.1:9", "hi"])
    with pytest.raises(GatewayCallFailed, match="cannot reach the gateway"):
        run_chat(args, io.StringIO())
