"""Reading the GGUF file: the same fields, tensors and numbers as the gguf package's own reader."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

import attention_models as am
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
        want = np.asarray(gguf.quants.dequantize(t.data, t.kind), dtype=np.float32).reshape(t.shape)
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
