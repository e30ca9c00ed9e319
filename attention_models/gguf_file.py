"""Find a GGUF model file and read its configuration, weights and vocabulary.

The file is found through the metadata of the package that ships it (never by importing that
package). Weights are dequantised to float32 and turned into the row-vector convention of
attention_core (``x @ W``). llama.cpp's converter reorders the rows of ``attn_q`` and ``attn_k``
for its interleaved RoPE (pairs ``(2i, 2i+1)``); :func:`unpermute_rows` undoes that, so each head's
query/key columns are back in the rotate-half order ``(i, i + d/2)`` that ``attention_core.rope`` uses.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from attention_core.decoder import DecoderConfig, DecoderLayerWeights
from attention_models.errors import AttentionModelError, ModelNotInstalledError


@dataclass(frozen=True)
class ModelSpec:
    """Where a named model lives: the pip distribution that ships the file, the file, and how to install it."""

    name: str
    distribution: str
    filename: str
    install: str


@dataclass(frozen=True)
class GGUFModel:
    """Everything read from the file: shapes, per-layer weights, embeddings, final norm, vocabulary."""

    config: DecoderConfig
    layers: tuple[DecoderLayerWeights, ...]
    embedding: np.ndarray  # (vocab, d_model), also the output head when the file has no output.weight
    output: np.ndarray  # (vocab, d_model)
    output_norm: np.ndarray  # (d_model,)
    tokens: list[str]
    merges: list[str]
    token_types: list[int]
    pre_tokenizer: str


def model_path(spec: ModelSpec) -> Path:
    """The installed file of ``spec``, or ModelNotInstalledError saying how to install it."""
    try:
        dist = importlib.metadata.distribution(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    files = [f for f in (dist.files or []) if f.name == spec.filename] if dist else []
    path = Path(dist.locate_file(files[0])) if files else None
    if path is None or not path.is_file():
        raise ModelNotInstalledError(
            f"The model {spec.name!r} is not installed (its file {spec.filename} comes in the Python package "
            f"{spec.distribution}). Install it with:  {spec.install}"
        )
    return path


def unpermute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's RoPE row permutation of a Q or K weight ``(n_head d_head, d_model)``.

    The converter maps each head's rows ``[first half | second half]`` to interleaved pairs with
    ``w.reshape(n_head, 2, d_head/2, ...).swapaxes(1, 2)``; this is its inverse.
    """
    half = w.shape[0] // n_head // 2
    return w.reshape(n_head, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_gguf(path: Path) -> GGUFModel:
    """Read a Llama-architecture GGUF file: config, float32 weights (pre-transposed), vocabulary."""
    reader = gguf.GGUFReader(path)
    field = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("tokenizer.chat")}
    arch = field["general.architecture"]
    if arch != "llama":
        raise AttentionModelError(f"{path.name} is a {arch!r} model; only the Llama architecture is supported")
    config = DecoderConfig(
        n_heads=int(field["llama.attention.head_count"]),
        n_kv_heads=int(field["llama.attention.head_count_kv"]),
        rope_base=float(field.get("llama.rope.freq_base", 10000.0)),
        eps=float(field["llama.attention.layer_norm_rms_epsilon"]),
    )
    tensors = {t.name: t for t in reader.tensors}

    def weight(name: str) -> np.ndarray:  # as stored: (out, in) for a matrix, float32
        t = tensors[name]
        w = gguf.quants.dequantize(t.data, t.tensor_type)
        return np.asarray(w, dtype=np.float32).reshape(tuple(int(s) for s in reversed(t.shape)))

    layers = tuple(_layer(weight, f"blk.{i}.", config) for i in range(int(field["llama.block_count"])))
    embedding = weight("token_embd.weight")  # (vocab, d_model)
    output = weight("output.weight") if "output.weight" in tensors else embedding  # tied embeddings
    return GGUFModel(
        config, layers, embedding, output, weight("output_norm.weight"),
        list(field["tokenizer.ggml.tokens"]), list(field["tokenizer.ggml.merges"]),
        [int(x) for x in field["tokenizer.ggml.token_type"]], str(field.get("tokenizer.ggml.pre", "gpt2")),
    )  # fmt: skip


def _layer(weight, prefix: str, config: DecoderConfig) -> DecoderLayerWeights:
    """One layer's weights, transposed once to ``(in, out)`` and made contiguous for ``x @ W``."""

    def linear(name: str, n_head: int | None = None) -> np.ndarray:
        w = weight(prefix + name)  # (out, in)
        w = unpermute_rows(w, n_head) if n_head else w
        return np.ascontiguousarray(w.T)  # (in, out)

    return DecoderLayerWeights(
        attn_norm=weight(prefix + "attn_norm.weight"),
        W_q=linear("attn_q.weight", config.n_heads),
        W_k=linear("attn_k.weight", config.n_kv_heads),
        W_v=linear("attn_v.weight"),
        W_o=linear("attn_output.weight"),
        ffn_norm=weight(prefix + "ffn_norm.weight"),
        W_gate=linear("ffn_gate.weight"),
        W_up=linear("ffn_up.weight"),
        W_down=linear("ffn_down.weight"),
    )
