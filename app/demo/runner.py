"""The demo's sequence: tracker → nodes → admission → certification → a streamed answer."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from app.demo.processes import Child, split_layers, start_node, start_tracker
from app.gateway_client import GatewayClient
from core.errors import MeshnetError
from core.models.default_model import ensure_default_model
from core.models.local import resolve_model
from core.models.manifest import ModelManifest
from core.recipes.catalogue import load_catalogue

CERTIFY_TIMEOUT_S = 240.0
# Per-heartbeat counters, not steps a newcomer needs to follow.
QUIET_GATES = frozenset({"sessions"})


@dataclass(frozen=True)
class DemoOptions:
    nodes: int = 2
    prompt: str = "What is the capital of France?"
    max_tokens: int = 64
    keep_workdir: bool = False
    serve: bool = False  # keep the network up after the answer, until Ctrl-C
    recipe: str = "fp32"  # "fp32", "int8" (the default model's llama-<name>) or a catalogue id
    model: str | None = None  # a model folder or local model id; None: the packaged default
    # Each node's memory for the model; set, the tracker chooses every node's layers.
    memory_cap_mb: int | None = None


def demo_recipe_id(name: str) -> str:
    """``int8`` -> ``llama-int8`` (the default model is a Llama); a catalogue id as it is.

    Checked here so a typo fails before any process starts."""
    catalogue = load_catalogue()
    known = {r.recipe_id for r in catalogue.recipes}
    recipe_id = name if name in known else f"llama-{name}"
    catalogue.get(recipe_id)  # RecipeError naming the known ones
    return recipe_id


def model_recipe_id(model_dir: Path, name: str) -> str:
    """``fp32``/``bf16``/``int8`` -> that recipe of the model's own family; a catalogue id
    as it is, when it is for that family."""
    from core.one_process_generate import pick_recipe
    from core.runtime import ModelConfig

    architecture = ModelConfig.from_folder(model_dir).architecture
    return pick_recipe(load_catalogue(), name, architecture).recipe_id


class Demo:
    def __init__(self, options: DemoOptions, out: TextIO = sys.stdout) -> None:
        self.options = options
        self.out = out
        self.children: list[Child] = []
        # Once the answer streams, node events would interleave with it; they stay in the logs.
        self.show_events = True
        self._shown: dict[tuple[str, str], str] = {}  # (node, gate) -> its last line shown
        self.workdir = Path(tempfile.mkdtemp(prefix="meshnet-demo-"))

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _on_line(self, name: str, line: dict[str, object] | str) -> None:
        if isinstance(line, str) or not self.show_events:
            return  # logs go to the child's log file; the demo shows events only
        if line.get("kind") == "gate":
            gate = str(line.get("gate"))
            if gate in QUIET_GATES:
                return
            mark = {"passed": "✓", "failed": "✗"}.get(str(line.get("gate_state")), "·")
            text = f"  {name:7} {mark} {gate}: {line.get('message')}"
            if self._shown.get((name, gate)) != text:  # a heartbeat repeats what is known
                self._shown[(name, gate)] = text
                self.say(text)
        elif line.get("kind") == "state" and line.get("state") in ("refused", "error"):
            self.say(f"  {name:7} ✗ {line.get('state')}: {line.get('message')}")

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.stop()

    def _run(self) -> int:
        if self.options.model is None:
            recipe_id = demo_recipe_id(self.options.recipe)  # a typo fails before anything starts
            self.say("MeshNet demo — one tracker and several nodes on this machine\n")
            self.say("1. Importing the packaged default model (SmolLM2-135M-Instruct)…")
            model_dir = ensure_default_model()
        else:
            model_dir = resolve_model(self.options.model)
            recipe_id = model_recipe_id(model_dir, self.options.recipe)
            self.say("MeshNet demo — one tracker and several nodes on this machine\n")
            self.say(f"1. Using the local model {self.options.model}…")
        manifest = ModelManifest.load(model_dir)
        self.say(f"   {model_dir} ({manifest.layer_count} layers)\n")

        self.say("2. Starting the tracker…")
        tracker, url = start_tracker(self.workdir, self._on_line)
        self.children.append(tracker)
        self.say(f"   {url} (status page: {url}/)\n")

        cap = self.options.memory_cap_mb
        ranges: list[tuple[int, int] | None]
        extra: list[str] = []
        if cap is None:
            ranges = list(split_layers(manifest.layer_count, self.options.nodes))
            how = "doctor, admission gate, registration…"
        else:
            ranges = [None] * self.options.nodes
            extra = ["--memory-cap-mb", str(cap)]
            how = f"each with {cap} MB for the model; the tracker chooses each one's layers…"
        self.say(f"3. Starting {len(ranges)} nodes on recipe {recipe_id}: {how}")
        for index, layers in enumerate(ranges, start=1):
            self.children.append(
                start_node(
                    index,
                    self.workdir,
                    url,
                    model_dir,
                    layers,
                    self._on_line,
                    extra,
                    recipe_id=recipe_id,
                )
            )
        state = self._wait_for_nodes(url, len(ranges))
        self.say("")

        self.say("4. Certifying the recipe with a real distributed forward…")
        recipe = self._wait_for_certification(url, state)
        self.say(f"   recipe {recipe['recipe_id']} is {recipe['status']}: {recipe['detail']}\n")

        self.show_events = False
        self.say(f"5. Asking through the gateway: {self.options.prompt}")
        self._chat(url, recipe)
        if self.options.serve:
            self.say(f"   Serving at {url}/v1 until Ctrl-C…")
            while True:
                self._check_children()
                time.sleep(1.0)
        return 0

    def _state(self, url: str) -> dict[str, Any]:
        """The tracker's state; a slow answer (a busy machine, a large model's assets being
        read) is retried until the caller's deadline rather than ending the demo."""
        try:
            return dict(httpx.get(url + "/api/v1/state", timeout=5).json())
        except httpx.TimeoutException:
            return {}

    def _check_children(self) -> None:
        for child in self.children:
            if child.exited is not None:
                raise MeshnetError(
                    f"the {child.name} stopped (status {child.exited}); "
                    f"its log is in {self.workdir}"
                )

    def _wait_for_nodes(self, url: str, count: int) -> dict[str, Any]:
        deadline = time.monotonic() + CERTIFY_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_children()
            state = self._state(url)
            live = [n for n in state.get("nodes", []) if n.get("live")]
            if len(live) >= count:
                return state
            time.sleep(0.5)
        raise MeshnetError(f"fewer than {count} nodes registered in time; logs in {self.workdir}")

    def _wait_for_certification(self, url: str, state: dict[str, Any]) -> dict[str, Any]:
        shown: str | None = None
        deadline = time.monotonic() + CERTIFY_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_children()
            for recipe in self._state(url).get("recipes", []):
                if recipe["status"] == "certified":
                    if shown is None:  # certified before the first look: say it was dark
                        self.say(f"   recipe {recipe['recipe_id']} → {_dark_until(recipe)}")
                    return dict(recipe)  # the caller says it once, as the step's result
                line = f"{recipe['status']}: {recipe.get('detail', '')}"
                if line != shown:
                    shown = line
                    self.say(f"   recipe {recipe['recipe_id']} → {line}")
            time.sleep(0.5)
        raise MeshnetError(
            f"the recipe was not certified within {CERTIFY_TIMEOUT_S:.0f}s (last: {shown}); "
            f"see the tracker's page and logs in {self.workdir}"
        )

    def _chat(self, url: str, recipe: dict[str, Any]) -> None:
        """Ask through the tracker's OpenAI-compatible gateway, like any user would."""
        client = GatewayClient(url)
        try:
            model = str(recipe.get("artifact_id") or client.models()[0])
            self.say(f"   model {model} via {url}/v1/chat/completions\n")
            began = time.perf_counter()
            first: list[float] = []

            def write(text: str) -> None:
                if not first:
                    first.append(time.perf_counter())
                self.out.write(text)
                self.out.flush()

            messages = [{"role": "user", "content": self.options.prompt}]
            reply = client.stream_chat(
                model, messages, write, max_tokens=self.options.max_tokens, temperature=0
            )
        finally:
            client.close()
        ended = time.perf_counter()
        tokens = int(reply.usage.get("completion_tokens", 0))
        decode_s = ended - first[0] if first else 0.0
        rate = (tokens - 1) / decode_s if tokens > 1 and decode_s > 0 else 0.0
        ttft_ms = (first[0] - began) * 1000 if first else 0.0
        self.say(f"\n\n   route: {route_text(reply.route)}")
        self.say(
            f"   {tokens} tokens, {rate:.1f} tokens/s decode, first token after {ttft_ms:.0f} ms"
        )
        self.say(gateway_howto(url, model, serving=self.options.serve))

    def stop(self) -> None:
        for child in reversed(self.children):
            child.stop()
        self.children.clear()
        if not self.options.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def route_text(header: str) -> str:
    """``node:0-15,node:15-30`` -> ``e6e39554 [0–15) → 06bac15c [15–30)``."""
    hops = []
    for hop in filter(None, header.split(",")):
        node, _, span = hop.rpartition(":")
        start, _, end = span.partition("-")
        hops.append(f"{node[:8]} [{start}–{end})")
    return " → ".join(hops) or "-"


def gateway_howto(url: str, model: str, *, serving: bool) -> str:
    """How to reach the same model from a shell or from Python, printed by the demo.

    Without ``--serve`` the network stops right after, so the text says so rather
    than offer a URL that no longer answers."""
    body = (
        f'{{"model": "{model}", "stream": true, '
        '"messages": [{"role": "user", "content": "Hello!"}]}'
    )
    if serving:
        lead = "\n   Reach it yourself while the network runs:\n"
    else:
        lead = (
            "\n   The network stops now. To reach it yourself, run `meshnet demo --serve`, "
            "which keeps it up,\n   then (with the address it prints; it changes each run):\n"
        )
    return lead + (
        f"   curl -N {url}/v1/chat/completions -H 'Content-Type: application/json' "
        f"-d '{body}'\n\n"
        "   from openai import OpenAI\n"
        f'   client = OpenAI(base_url="{url}/v1", api_key="none")\n'
        "   stream = client.chat.completions.create(\n"
        f'       model="{model}", stream=True,\n'
        '       messages=[{"role": "user", "content": "Hello!"}])\n'
        "   for chunk in stream:\n"
        '       print(chunk.choices[0].delta.content or "", end="")\n'
    )


def _dark_until(recipe: dict[str, Any]) -> str:
    """Every recipe starts dark; the ledger's times say for how long this one was."""
    first, certified = recipe.get("first_seen_at"), recipe.get("certified_at")
    if isinstance(first, int | float) and isinstance(certified, int | float):
        return (
            f"dark: for {max(0.0, certified - first):.1f} s after its first node "
            "registered, until a real distributed forward certified it"
        )
    return "dark: until a real distributed forward certified it"
