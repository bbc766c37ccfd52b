"""A shard: layers [start, end) of a model, plus the embedding on the first shard
and the final norm + LM head on the last.

``Shard.load`` reads only the tensors of its own range from safetensors (or, in a
GGUF-backed folder, decodes them one by one from ``model.gguf``); the modules are
built on the meta device and take the loaded tensors as they are, so no random
initialisation is ever computed and nothing else is allocated.
Under a quantized recipe each layer (and the embedding, and the head) is
quantized as soon as it is read, so a load never holds the shard in float32
(the doctor sizes it so: ``hardware.ModelFootprint.load_bytes``).
Sessions (``sessions.py``) own the KV caches; the shard itself is stateless
across calls and may serve many sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import ConfigError, ModelError, RangeError
from core.runtime.config import ModelConfig
from core.runtime.dtypes import check_dtype_on_device, parse_device, parse_dtype
from core.runtime.families import adapter_named
from core.runtime.families.tensors import layer_state, layer_tensor_names, norm_weight
from core.runtime.heap import release_free_heap
from core.runtime.layers import Block, LayerCache, RMSNorm, causal_group_mask, mm, rope_tables
from core.runtime.quant import (
    INT8_PER_CHANNEL,
    NO_QUANTIZATION,
    WEIGHT_QUANTIZATIONS,
    Int8Linear,
    quantize_linears,
)
from core.runtime.quant4 import GROUP, INT4_G32_INT8_HEAD, Int4Linear, Int8Embedding, Int8Rows
from core.runtime.quant_digits import Int8DigitsLinear
from core.runtime.rope import RopeTable
from core.runtime.weights import TensorSource, open_weights

__all__ = ["Shard", "parse_dtype"]

log = logging.getLogger(__name__)

PROJECTIONS = ("attn.qkv", "attn.o_proj", "mlp.gate_up", "mlp.down")  # what a scheme quantizes


def _int8_class(device: torch.device) -> type[Int8Linear]:
    """On the CPU fbgemm's int8 product, where it is exact (quant_digits.py); elsewhere
    torch's int8 kernels (quant.py)."""
    return Int8DigitsLinear if device.type == "cpu" else Int8Linear


class Shard(nn.Module):
    def __init__(
        self,
        config: ModelConfig,
        start: int,
        end: int,
        *,
        compute_dtype: torch.dtype,
        kv_dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        super().__init__()
        if not 0 <= start < end <= config.num_layers:
            raise RangeError(
                f"shard layers [{start}, {end}) are outside the model's [0, {config.num_layers})",
            )
        self.config, self.start, self.end = config, start, end
        self.is_first, self.is_last = start == 0, end == config.num_layers
        self.compute_dtype, self.kv_dtype, self.device = compute_dtype, kv_dtype, device
        self.weight_quantization = NO_QUANTIZATION
        self.tensor_names: tuple[str, ...] = ()  # HF names this shard loaded
        self.files_opened: tuple[str, ...] = ()
        H, V = config.hidden_size, config.vocab_size
        self.embed: nn.Embedding | Int8Embedding | None = (
            nn.Embedding(V, H) if self.is_first else None
        )
        blocks = tuple(Block(config, i) for i in range(start, end))
        self.layers = nn.ModuleList(blocks)
        self._blocks = blocks  # slicing a ModuleList builds a new one per step
        self.norm = RMSNorm(H, config.rms_norm_eps) if self.is_last else None
        self.lm_head: nn.Linear | Int8Linear | Int8Rows | None = (
            nn.Linear(H, V, bias=False) if self.is_last else None
        )
        self.rope = RopeTable(config, compute_dtype, device)
        # Gemma 3's sliding layers rotate with their own base
        self.local_rope = (
            RopeTable(config, compute_dtype, device, local=True) if config.has_local_rope else None
        )
        self._kinds = tuple(dict.fromkeys(b.attn.kind for b in blocks))

    @classmethod
    def load(
        cls,
        model_dir: Path,
        start: int,
        end: int,
        *,
        compute_dtype: str = "float32",
        kv_dtype: str | None = None,
        device: str = "cpu",
        on_layer: Callable[[int, int], None] | None = None,
        weight_quantization: str = NO_QUANTIZATION,
    ) -> Shard:
        """Load layers [start, end); ``on_layer(done, total)`` after each layer is read
        (the doctor's progress and cancel point). ``weight_quantization`` "int8-per-channel"
        stores every projection and the LM head as int8 (see ``quant.py``),
        "int4-g32-int8-head" the projections in 4-bit groups and the LM head and
        embedding in int8 (``quant4.py``); both
        need compute_dtype float32."""
        cfg = ModelConfig.from_folder(Path(model_dir))
        dtype = parse_dtype(compute_dtype)
        if weight_quantization not in WEIGHT_QUANTIZATIONS:
            raise ConfigError(
                f"weight quantization {weight_quantization!r} is not supported; use one of "
                f"{list(WEIGHT_QUANTIZATIONS)}",
                reason="bad-quantization",
            )
        if weight_quantization != NO_QUANTIZATION and cfg.num_experts:
            raise ConfigError(
                f"{weight_quantization} weights are not built for mixture-of-experts models "
                f"({cfg.architecture}); choose a float recipe",
                reason="bad-quantization",
            )
        if weight_quantization != NO_QUANTIZATION and dtype != torch.float32:
            raise ConfigError(
                f"{weight_quantization} weights compute in float32, not {compute_dtype}; "
                "choose the quantized recipe as it is catalogued",
                reason="bad-quantization",
            )
        kv = parse_dtype(kv_dtype) if kv_dtype is not None else dtype
        dev = parse_device(device)
        check_dtype_on_device(dtype, dev)
        check_dtype_on_device(kv, dev)
        with torch.device("meta"):
            shard = cls(cfg, start, end, compute_dtype=dtype, kv_dtype=kv, device=dev)
        source = open_weights(Path(model_dir))
        names = shard._read_weights(source, weight_quantization, dev, on_layer)
        shard.to(dev)
        for module in shard.modules():  # (on the CPU each layer's are packed as it is read)
            if isinstance(module, Int4Linear):
                module.pack_for(dev)  # the device's int4 kernel layout, where one fits
        if dev.type == "cpu":
            shard._weights_in_by_out()
        shard.requires_grad_(False)
        shard.eval()
        shard.tensor_names = tuple(names)
        shard.files_opened = tuple(dict.fromkeys(source.files_opened))
        log.info(
            "loaded shard [%d, %d) of %s: %.1f MB, %s, kv %s, weights %s",
            start,
            end,
            model_dir,
            shard.weight_bytes() / 1e6,
            dtype,
            kv,
            weight_quantization,
        )
        return shard

    def _read_weights(
        self,
        src: TensorSource,
        scheme: str,
        device: torch.device,
        on_layer: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Read the shard's tensors part by part (each layer, then the embedding, the final
        norm and the LM head) and quantize each part (``scheme``) as soon as it is read, so
        the load holds the shard's quantized bytes plus one part in float32, never the whole
        shard in float32. Returns the Hugging Face names read, in order."""
        cfg, dtype = self.config, self.compute_dtype
        layout = adapter_named(cfg.architecture).layout
        embed_name = "model.embed_tokens.weight"
        head_name = self._head_name(src) if self.is_last else None
        tied = self.is_first and head_name == embed_name  # one tensor serves both
        if scheme == INT4_G32_INT8_HEAD:
            self._check_int4_widths(scheme)
        names: list[str] = []
        total = self.end - self.start
        for local, i in enumerate(range(self.start, self.end)):
            wanted = layer_tensor_names(i, cfg, layout)
            self._assign(
                f"layers.{local}", layer_state(i, local, src.load(wanted), cfg, layout, dtype)
            )
            if scheme != NO_QUANTIZATION:
                self._quantize_projections(self._blocks[local], scheme, device)
                release_free_heap()  # the layer's float32 is freed: its pages go back
            names += wanted
            if on_layer is not None:
                on_layer(local + 1, total)
        if self.is_first:
            names.append(embed_name)
            self._assign("embed", {"embed.weight": src.load([embed_name])[embed_name].to(dtype)})
            if scheme == INT4_G32_INT8_HEAD:
                assert isinstance(self.embed, nn.Embedding)
                table = Int8Rows.from_linear(self.embed.weight.data, None)
                self.embed = Int8Embedding(table)
                if tied:
                    self.lm_head = table
                release_free_heap()
        if self.is_last:
            assert head_name is not None
            names.append("model.norm.weight")
            self._assign(
                "norm", {"norm.weight": norm_weight(src.load(names[-1:])[names[-1]], cfg, dtype)}
            )
            if tied and isinstance(self.lm_head, nn.Linear):  # not already the int8 table
                assert isinstance(self.embed, nn.Embedding)
                self.lm_head.weight = self.embed.weight  # one tensor, not two
            elif not tied:
                names.append(head_name)
                self._assign(
                    "lm_head", {"lm_head.weight": src.load([head_name])[head_name].to(dtype)}
                )
            if scheme != NO_QUANTIZATION:
                self._quantize_head(scheme, device)
                release_free_heap()
        self.weight_quantization = scheme
        return names

    def _head_name(self, src: TensorSource) -> str:
        if src.has("lm_head.weight"):
            return "lm_head.weight"
        if not self.config.tie_word_embeddings:
            raise ModelError(
                "lm_head.weight is missing and tie_word_embeddings is false",
                reason="weights-missing",
            )
        return "model.embed_tokens.weight"

    def _assign(self, prefix: str, state: dict[str, torch.Tensor]) -> None:
        """Hand ``state`` (our names, all under ``prefix``) to that submodule as its own
        tensors; every tensor it holds must be there, in the shape config.json implies."""
        module = self.get_submodule(prefix)
        own = {name.removeprefix(prefix + "."): tensor for name, tensor in state.items()}
        for name, param in module.state_dict(keep_vars=True).items():
            got = own.get(name)
            if got is not None and got.shape != param.shape:
                raise ModelError(
                    f"tensor for {prefix}.{name} has shape {tuple(got.shape)}, config.json "
                    f"implies {tuple(param.shape)}",
                    reason="weights-bad",
                )
        module.load_state_dict(own, assign=True, strict=True)

    def _quantize_projections(self, block: nn.Module, scheme: str, device: torch.device) -> None:
        """A block's four projections under ``scheme``: int8 per output channel or 4-bit
        groups (``quant4.py``), the latter packed for the CPU's kernel at once there."""
        cls = _int8_class(device) if scheme == INT8_PER_CHANNEL else Int4Linear
        for name in PROJECTIONS:
            quantize_linears(block, [name], cls)
            module = block.get_submodule(name)
            if isinstance(module, Int4Linear) and device.type == "cpu":
                module.pack_for(device)  # already in place: packed now, not after the shard

    def _quantize_head(self, scheme: str, device: torch.device) -> None:
        """The LM head under ``scheme``: int8 per output channel, or (int4) int8 rows unless
        the embedding's table already serves as the head. Under int8 the embedding stays
        float32 (a step reads one row of it per token), so a tied head gets its own copy."""
        head = self.lm_head
        if scheme == INT8_PER_CHANNEL:
            quantize_linears(self, ["lm_head"], _int8_class(device))
        elif scheme == INT4_G32_INT8_HEAD and isinstance(head, nn.Linear):
            self.lm_head = Int8Rows.from_linear(head.weight.data, head.bias)

    def _check_int4_widths(self, scheme: str) -> None:
        """Refused before anything is read, naming the size, when a width does not split
        into whole groups of 4-bit weights."""
        cfg = self.config
        widths = (
            ("hidden size", cfg.hidden_size),
            ("attention width", cfg.num_heads * cfg.head_dim),
            ("MLP width", cfg.intermediate_size),
        )
        for what, width in widths:
            if width % GROUP:
                raise ConfigError(
                    f"{scheme} needs widths divisible by {GROUP}, but the model's {what} is "
                    f"{width}; choose the int8 or a float recipe",
                    reason="bad-quantization",
                )

    def _weights_in_by_out(self) -> None:
        """Store each float projection's (out, in) weight as the transpose of an
        (in, out)-contiguous matrix: same values and shape, but ``x @ W.T`` reaches BLAS
        as a plain (non-transposed) operand, which MKL multiplies faster for a few rows
        (default model, shard [0, 15), one thread, 8 rows: 9.9 ms vs 21.2 ms; one row
        6.7 vs 7.1 ms; LM head, two threads: one row 2.45 vs 2.84 ms, 8 rows 8.8 vs
        9.2 ms for the (V, H) @ (H, N) form). A head tied to the embedding keeps its
        layout: the embedding reads rows of it."""
        linears = [m for block in self._blocks for m in block.modules() if type(m) is nn.Linear]
        head = self.lm_head
        if type(head) is nn.Linear and (self.embed is None or head.weight is not self.embed.weight):
            linears.append(head)
        for linear in linears:
            w = linear.weight.detach()
            linear.weight = nn.Parameter(w.t().contiguous().t(), requires_grad=False)

    @property
    def product_dtype(self) -> torch.dtype:
        """The precision the weight products round activations to: bfloat16 under
        int4-g32-int8-head (its kernels take bfloat16), else the compute dtype. The doctor's
        incremental tolerance follows the coarser of the two."""
        if self.weight_quantization == INT4_G32_INT8_HEAD:
            return torch.bfloat16
        return self.compute_dtype

    # -- sizes -----------------------------------------------------------------------
    def weight_bytes(self) -> int:
        seen: set[int] = set()
        total = 0
        # parameters() already skips a tied duplicate; int8 weights and scales are buffers
        for p in [*self.parameters(), *self.buffers()]:
            if p.data_ptr() not in seen:
                seen.add(p.data_ptr())
                total += p.numel() * p.element_size()
        # fbgemm's packed int8 weights live outside parameters and buffers
        return total + sum(getattr(m, "packed_bytes", 0) for m in self.modules())

    def kv_bytes_per_token(
        self, start_layer: int | None = None, end_layer: int | None = None
    ) -> int:
        """KV bytes one position of one sequence costs in layers [start_layer, end_layer)."""
        first = self.start if start_layer is None else start_layer
        last = self.end if end_layer is None else end_layer
        cfg = self.config
        per_layer = 2 * cfg.num_kv_heads * cfg.head_dim * self.kv_dtype.itemsize
        return (last - first) * per_layer

    # -- compute (inputs validated by the session) -----------------------------------------
    def embed_tokens(self, ids: torch.Tensor) -> torch.Tensor:
        assert self.embed is not None
        if isinstance(self.embed, Int8Embedding):
            x = self.embed.lookup(ids)  # (B, T, H)
        else:
            x = F.embedding(ids, self.embed.weight)  # (B, T, H)
        if self.config.embed_scale is not None:  # Gemma: the scale rounded to the dtype first
            x = x * torch.tensor(self.config.embed_scale, dtype=x.dtype, device=x.device)
        return x

    def run_layers(
        self, x: torch.Tensor, pos: int, caches: Sequence[LayerCache], start_layer: int
    ) -> torch.Tensor:
        """Layers [start_layer, start_layer + len(caches)) over x (B, T, H) at positions
        [pos, pos+T): a session may stop inside the shard (an audit replay of a hop that
        ends there), so it holds a cache for exactly the layers it runs."""
        B, T, H = x.shape
        cfg = self.config
        # per kind of layer (rope table, window), computed once for all its layers
        per_kind = {
            kind: (
                *self._rope_rows(kind[0], pos + T, lambda t: t.narrow(0, pos, T)),
                causal_group_mask(T, pos, cfg.q_per_kv, x.device, kind[1]),
            )
            for kind in self._kinds
        }
        h = x.reshape(B * T, H)  # (N, H)
        first = start_layer - self.start
        blocks = self._blocks[first : first + len(caches)]
        for layer, cache in zip(blocks, caches, strict=True):
            cos, sin, mask = per_kind[layer.attn.kind]
            h = layer(h, B, T, cos, sin, cache, pos, mask)
        return h.view(B, T, H)

    def _rope_rows(
        self, local: bool, end: int, rows: Callable[[torch.Tensor], torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(rows, nt, hd) cos / sign-folded sin at the positions ``rows`` picks from the
        (>= end, hd) table of the full-attention layers, or of the sliding ones (``local``)."""
        table = self.local_rope if local and self.local_rope is not None else self.rope
        cos, sin = table.get(end)
        cfg = self.config
        n_qk = cfg.num_heads + cfg.num_kv_heads
        return rope_tables(rows(cos), rows(sin), n_qk, cfg.num_kv_heads)

    def run_layers_rows(
        self,
        x: torch.Tensor,  # (B, 1, H)
        positions: Sequence[int],
        caches: Sequence[Sequence[LayerCache]],  # per session, per layer
        start_layer: int,
    ) -> torch.Tensor:
        """One decode position for each of B sessions, each at its own position with its
        own cache (see Attention.forward_rows); layers [start_layer, start_layer + the
        sessions' cache count)."""
        B, _, H = x.shape
        index = torch.tensor(list(positions), dtype=torch.int64, device=self.device)
        end = max(positions) + 1
        # (B, nt, hd) each: row i at its own position, per rope table
        tables = {
            local: self._rope_rows(local, end, lambda t: t.index_select(0, index))
            for local, _ in self._kinds
        }
        h = x.reshape(B, H)
        first = start_layer - self.start
        blocks = self._blocks[first : first + len(caches[0])]
        pos = list(positions)
        for i, layer in enumerate(blocks):
            cos, sin = tables[layer.attn.local_rope]
            h = layer.forward_rows(h, cos, sin, [c[i] for c in caches], pos)
        return h.view(B, 1, H)

    def head(self, x: torch.Tensor) -> torch.Tensor:
        """Final norm + LM head: (B, T, H) -> float32 logits (B, T, V)."""
        assert self.norm is not None and self.lm_head is not None
        B, T, H = x.shape
        h = self.norm(x.reshape(B * T, H))  # (N, H)
        head = self.lm_head
        if B * T > 1 and isinstance(head, nn.Linear) and head.weight.is_contiguous():
            # (V, H) @ (H, N): for several rows BLAS reads the tall head far faster this way
            # round (measured 36 ms vs 86 ms for 8 rows of the default model's head)
            logits = torch.mm(head.weight, h.t()).t()  # (N, V)
        else:
            logits = mm(h, head)  # (N, V)
        cap = self.config.final_softcap
        if cap is not None:  # Gemma 2: logits -> cap * tanh(logits / cap)
            logits = torch.tanh(logits / cap) * cap
        return logits.reshape(B, T, -1).float()
