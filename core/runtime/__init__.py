"""The shard runtime: layers [start, end) of a decoder-only model, with KV-cache sessions.

The families it computes (Llama, Mistral, Qwen2/3, Phi-3, Gemma 2/3, Mixtral,
Qwen3-MoE) are adapters in ``families/`` over one set of modules.

Public API (other packages import only these names):

    ModelConfig.from_folder(path) / .from_hf(dict)      model hyper-parameters
    Shard.load(model_dir, start, end, compute_dtype=, kv_dtype=, device=, weight_quantization=)
    SessionManager(shard, kv_budget_bytes=, idle_timeout_s=)
        .open(max_length, sampling=, start_layer=, session_id=) -> InferenceSession
        .kv_bytes_per_token, .sessions_that_fit(max_length)
    InferenceSession.step(inputs) -> StepResult ; .close()
    step_batch(sessions, inputs) -> [StepResult | MeshnetError]   one decode forward for many
    SamplingParams(temperature, top_k, top_p, seed, logprobs)
    generate_local(shards, input_ids, max_new_tokens, sampling) -> token stream

The model code is the project's own (see ``layers.py``); ``transformers`` is only
the reference the tests and benchmarks compare against.
"""

from core.runtime.batch import step_batch
from core.runtime.config import ModelConfig
from core.runtime.dtypes import parse_dtype
from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.sessions import InferenceSession, SessionManager, StepResult
from core.runtime.shard import Shard

__all__ = [
    "InferenceSession",
    "ModelConfig",
    "SamplingParams",
    "SessionManager",
    "Shard",
    "StepResult",
    "generate_local",
    "parse_dtype",
    "step_batch",
]
