"""Reading GGUF files: a tiny file written here byte by byte from the GGUF specification (ggml, docs/gguf.md),
and the model's file, read the same as by the gguf package's own reader (a test-only requirement)."""

from __future__ import annotations

import struct

import gguf
import numpy as np
import pytest

import attention_models as am
from attention_models import gguf_file
from attention_models.gguf_file import dequantize, model_path, read_gguf_file


@pytest.fixture(scope="module")
def path():
    return model_path(am.MODELS["smollm2-135m"])


def test_fields_and_tensors_are_what_gguf_reader_reads(path):
    fields, tensors = read_gguf_file(path)
    reader = gguf.GGUFReader(path)
    want = {key: field.contents() for key, field in reader.fields.items() if not key.startswith("GGUF.")}
    assert fields == want
    assert len(fields["tokenizer.ggml.tokens"]) == 49152
    assert list(tensors) == [t.name for t in reader.tensors]
    for t in reader.tensors:
        mine = tensors[t.name]
        assert mine.kind == t.tensor_type, t.name
        assert mine.shape == tuple(int(n) for n in reversed(t.shape)), t.name
        assert np.array_equal(mine.data.view(np.uint8).ravel(), t.data.view(np.uint8).ravel()), t.name


def test_every_tensor_dequantises_to_gguf_s_numbers(path):
    _, tensors = read_gguf_file(path)
    assert {t.kind.name for t in tensors.values()} == {"F32", "Q4_1", "Q8_0"}  # the file's types, all checked
    for name, t in tensors.items():
        mine = dequantize(t)
        kind = gguf.GGMLQuantizationType(t.kind)
        want = np.asarray(gguf.quants.dequantize(t.data, kind), dtype=np.float32).reshape(t.shape)
        assert mine.dtype == np.float32 and mine.shape == t.shape, name
        assert np.array_equal(mine, want), name


@pytest.mark.parametrize(
    ("cut", "message"), [(b"PK\x03\x04 not a model", "not a GGUF file"), (None, "not a readable GGUF file")]
)
def test_a_file_that_is_not_gguf_or_cut_short_is_refused_with_a_reason(path, tmp_path, cut, message):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(cut if cut is not None else path.read_bytes()[:5000])  # the header stops inside the vocabulary
    with pytest.raises(am.AttentionModelError, match=message):
        read_gguf_file(bad)


def test_the_reader_s_type_numbers_and_block_sizes_are_gguf_s():
    assert {t.name: int(t) for t in gguf_file.GGUFValueType} == {t.name: int(t) for t in gguf.GGUFValueType}
    for t in gguf_file.GGMLType:
        assert int(gguf.GGMLQuantizationType[t.name]) == int(t), t.name
        assert gguf_file._BLOCKS[t] == gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[t.name]], t.name
    assert gguf_file.DEFAULT_ALIGNMENT == gguf.GGUF_DEFAULT_ALIGNMENT


# ---------------------------------------------------------------- a tiny GGUF file, written by hand


def gguf_string(text: str) -> bytes:
    """A GGUF string: its length in bytes (uint64), then its UTF-8 bytes."""
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


FIELDS = [  # key, value type (the spec's numbers), the value's bytes, the value read back
    ("general.architecture", 8, gguf_string("llama"), "llama"),
    ("tiny.int8", 1, struct.pack("<b", -5), -5),
    ("tiny.uint16", 2, struct.pack("<H", 65535), 65535),
    ("tiny.float32", 6, struct.pack("<f", 0.15625), 0.15625),
    ("tiny.bool", 7, struct.pack("<?", True), True),
    ("tiny.uint64", 10, struct.pack("<Q", 2**40 + 3), 2**40 + 3),
    ("tiny.float64", 12, struct.pack("<d", -1.25), -1.25),
    ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + gguf_string("a") + gguf_string("é") + gguf_string("<s>"),
     ["a", "é", "<s>"]),
    ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, -1, 3), [1, -1, 3]),
]  # fmt: skip

F32 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4  # (2, 3)
Q8_0_SCALES, Q8_0_Q = (0.5, -2.0), np.arange(-32, 32).reshape(2, 32)  # a block per row of 32 int8
Q4_1_SCALES, Q4_1_MINS = (0.25, 3.0), (-1.0, 0.5)  # two blocks, one row
Q4_1_Q = np.array([[*range(16), *range(15, -1, -1)], [*(i % 4 for i in range(16)), *[9] * 16]])  # (2, 32) in 0..15


def q8_0_bytes() -> bytes:
    """Per block of 32 values: the scale d (float16), then 32 int8 q; value = d * q."""
    blocks = zip(Q8_0_SCALES, Q8_0_Q, strict=True)
    return b"".join(struct.pack("<e", d) + q.astype(np.int8).tobytes() for d, q in blocks)


def q4_1_bytes() -> bytes:
    """Per block of 32 values: d and m (float16), then 16 bytes, value i in the low four bits of byte i and value
    i + 16 in its high four bits; value = d * q + m."""
    out = b""
    for d, m, q in zip(Q4_1_SCALES, Q4_1_MINS, Q4_1_Q, strict=True):
        out += struct.pack("<ee", d, m) + bytes(int(lo) | int(hi) << 4 for lo, hi in zip(q[:16], q[16:], strict=True))
    return out


TENSORS = [  # name, ne (innermost first, as the file stores it), ggml type number, data
    ("tiny.f32", (3, 2), 0, F32.tobytes()),
    ("tiny.q8_0", (32, 2), 8, q8_0_bytes()),
    ("tiny.q4_1", (64, 1), 3, q4_1_bytes()),
    ("tiny.f16", (3,), 1, np.array([1.5, -2.0, 65504.0], dtype=np.float16).tobytes()),  # a vector, as norms are
]


def tiny_gguf(alignment: int | None, tensors=TENSORS, version: int = 3, name: str = "tiny") -> bytes:
    """Header, metadata, tensor infos, zero padding to the alignment, then each tensor's data at an aligned offset."""
    fields = [*FIELDS, ("general.name", 8, gguf_string(name), name)]
    fields += [("general.alignment", 4, struct.pack("<I", alignment), alignment)] if alignment else []
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(fields))
    out += b"".join(gguf_string(key) + struct.pack("<I", kind) + value for key, kind, value, _ in fields)
    align, data = alignment or 32, b""
    for name, ne, kind, payload in tensors:
        data += b"\0" * (-len(data) % align)
        out += gguf_string(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, kind, len(data))
        data += payload
    return out + b"\0" * (-len(out) % align) + data


@pytest.mark.parametrize(
    ("alignment", "name"),
    [(None, "tiny"), (None, "tiny" + "-" * 32), (64, "tiny"), (64, "tiny" + "-" * 32)],
    ids=["default alignment", "default alignment, longer header", "alignment 64", "alignment 64, longer header"],
)
def test_a_tiny_file_written_by_hand_reads_back_its_fields_tensors_and_values(tmp_path, alignment, name):
    """Names 32 bytes apart move the end of the header by 32: with the default alignment of 32, one of the two has
    its data at an odd multiple of 32, where any other default would read from the wrong byte."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(tiny_gguf(alignment, name=name))
    fields, tensors = read_gguf_file(path)
    want = {key: value for key, _, _, value in FIELDS} | {"general.name": name}
    want |= {"general.alignment": alignment} if alignment else {}
    assert fields == want
    assert list(tensors) == ["tiny.f32", "tiny.q8_0", "tiny.q4_1", "tiny.f16"]
    kinds = [(t.kind.name, t.shape) for t in tensors.values()]
    assert kinds == [("F32", (2, 3)), ("Q8_0", (2, 32)), ("Q4_1", (1, 64)), ("F16", (3,))]
    values = {name: dequantize(t) for name, t in tensors.items()}
    assert all(v.dtype == np.float32 for v in values.values())
    np.testing.assert_array_equal(values["tiny.f32"], F32)
    np.testing.assert_array_equal(values["tiny.q8_0"], np.array(Q8_0_SCALES)[:, None] * Q8_0_Q)
    q4_1 = np.array(Q4_1_SCALES)[:, None] * Q4_1_Q + np.array(Q4_1_MINS)[:, None]  # (2 blocks, 32)
    np.testing.assert_array_equal(values["tiny.q4_1"], q4_1.reshape(1, 64))
    np.testing.assert_array_equal(values["tiny.f16"], np.array([1.5, -2.0, 65504.0], dtype=np.float32))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (tiny_gguf(None, version=1), "GGUF version 1 is not supported"),
        (tiny_gguf(None)[:-2], r"tensor 'tiny.f16' needs bytes .* but the file ends"),
        (tiny_gguf(None)[:100], "not a readable GGUF file"),  # inside the metadata
        (tiny_gguf(None, [("tiny.q4_0", (32, 1), 2, bytes(18))]), "tensor 'tiny.q4_0' has ggml type 2, which this"),
        (tiny_gguf(None, [("tiny.q8_0", (20, 1), 8, bytes(34))]), "rows of 20 values do not fill blocks of 32"),
    ],
    ids=["version 1", "cut inside the data", "cut inside the metadata", "a type not read", "a row not whole blocks"],
)
def test_a_tiny_file_with_a_fault_is_refused_with_a_reason(tmp_path, data, message):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(data)
    with pytest.raises(am.AttentionModelError, match=message):
        read_gguf_file(bad)
