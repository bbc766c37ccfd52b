"""The demo's sequence: tracker → nodes → admission → certification → a streamed answer."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from app.demo.processes import Child, split_layers, start_node, start_tracker
from core.errors import MeshnetError
from core.models.default_model import ensure_default_model
from core.models.manifest import ModelManifest
from core.models.tokenizer import ChatTokenizer
from core.recipe_catalogue import load_catalogue
from core.route import RouteSession, hops_from_route, request_route

CERTIFY_TIMEOUT_S = 240.0


@dataclass(frozen=True)
class DemoOptions:
    nodes: int = 2
    prompt: str = "What is the capital of France?"
    max_tokens: int = 64
    keep_workdir: bool = False
    recipe: str = "fp32"  # "fp32", "int8" (the default model's llama-<name>) or a catalogue id


def demo_recipe_id(name: str) -> str:
    """``int8`` -> ``llama-int8`` (the default model is a Llama); a catalogue id as it is.

    Checked here so a typo fails before any process starts."""
    catalogue = load_catalogue()
    known = {r.recipe_id for r in catalogue.recipes}
    recipe_id = name if name in known else f"llama-{name}"
    catalogue.get(recipe_id)  # RecipeError naming the known ones
    return recipe_id


class Demo:
    def __init__(self, options: DemoOptions, out: TextIO = sys.stdout) -> None:
        self.options = options
        self.out = out
        self.children: list[Child] = []
        # Once the answer streams, node events would interleave with it; they stay in the logs.
        self.show_events = True
        self.workdir = Path(tempfile.mkdtemp(prefix="meshnet-demo-"))

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _on_line(self, name: str, line: dict[str, object] | str) -> None:
        if isinstance(line, str) or not self.show_events:
            return  # logs go to the child's log file; the demo shows events only
        if line.get("kind") == "gate":
            mark = {"passed": "✓", "failed": "✗"}.get(str(line.get("gate_state")), "·")
            self.say(f"  {name:7} {mark} {line.get('gate')}: {line.get('message')}")
        elif line.get("kind") == "state" and line.get("state") in ("refused", "error"):
            self.say(f"  {name:7} ✗ {line.get('state')}: {line.get('message')}")

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.stop()

    def _run(self) -> int:
        self.say("MeshNet demo — one tracker and several nodes on this machine\n")
        self.say("1. Importing the packaged default model (SmolLM2-135M-Instruct)…")
        model_dir = ensure_default_model()
        manifest = ModelManifest.load(model_dir)
        self.say(f"   {model_dir} ({manifest.layer_count} layers)\n")

        self.say("2. Starting the tracker…")
        tracker, url = start_tracker(self.workdir, self._on_line)
        self.children.append(tracker)
        self.say(f"   {url} (status page: {url}/)\n")

        recipe_id = demo_recipe_id(self.options.recipe)
        ranges = split_layers(manifest.layer_count, self.options.nodes)
        self.say(
            f"3. Starting {len(ranges)} nodes on recipe {recipe_id}: doctor, admission gate, "
            "registration…"
        )
        for index, layers in enumerate(ranges, start=1):
            self.children.append(
                start_node(
                    index, self.workdir, url, model_dir, layers, self._on_line, recipe_id=recipe_id
                )
            )
        state = self._wait_for_nodes(url, len(ranges))
        self.say("")

        self.say("4. Certifying the recipe with a real distributed forward…")
        recipe = self._wait_for_certification(url, state)
        self.say(f"   recipe {recipe['recipe_id']} is {recipe['status']}: {recipe['detail']}\n")

        self.show_events = False
        self.say(f"5. Asking: {self.options.prompt}")
        asyncio.run(self._chat(url, model_dir, recipe))
        return 0

    def _state(self, url: str) -> dict[str, Any]:
        return dict(httpx.get(url + "/api/v1/state", timeout=5).json())

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
                line = f"{recipe['status']}: {recipe.get('detail', '')}"
                if line != shown:
                    shown = line
                    self.say(f"   recipe {recipe['recipe_id']} → {line}")
                if recipe["status"] == "certified":
                    return dict(recipe)
            time.sleep(0.5)
        raise MeshnetError(
            f"the recipe was not certified within {CERTIFY_TIMEOUT_S:.0f}s (last: {shown}); "
            f"see the tracker's page and logs in {self.workdir}"
        )

    async def _chat(self, url: str, model_dir: Path, recipe: dict[str, Any]) -> None:
        tokenizer = ChatTokenizer.from_folder(model_dir)
        prompt_ids = tokenizer.encode_chat([{"role": "user", "content": self.options.prompt}])
        max_length = len(prompt_ids) + self.options.max_tokens + 1
        route = await request_route(url, recipe)
        hops = hops_from_route(route)
        path = " → ".join(f"{h.node_id[:8]} [{h.effective_start}–{h.end})" for h in hops)
        self.say(f"   route: {path}\n")
        produced: list[int] = []
        shown = ""
        began = time.perf_counter()
        first_token_at = 0.0
        async with RouteSession(hops, route["ticket"], max_length=max_length) as session:
            async for token in session.generate(
                prompt_ids, self.options.max_tokens, tokenizer.eos_token_ids
            ):
                if not produced:
                    first_token_at = time.perf_counter()
                produced.append(token)
                text = tokenizer.decode(produced)
                self.out.write(text[len(shown) :])
                self.out.flush()
                shown = text
            await session.close()
        elapsed = time.perf_counter() - (first_token_at or began)
        rate = (len(produced) - 1) / elapsed if len(produced) > 1 and elapsed > 0 else 0.0
        self.say(
            f"\n\n   {len(produced)} tokens, {rate:.1f} tokens/s decode, "
            f"first token after {(first_token_at - began) * 1000:.0f} ms"
        )

    def stop(self) -> None:
        for child in reversed(self.children):
            child.stop()
        self.children.clear()
        if not self.options.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
