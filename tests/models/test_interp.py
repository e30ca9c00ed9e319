"""Interpretability on the real model: logit difference, direct logit attribution, logit lens, head_weights, patching.

Invariants, checked on SmolLM2 itself (the numbers against Hugging Face are in test_smollm2_reference.py).
Two float32 computations through many layers are compared within SPREAD times Hugging Face's own float32
error for that kind of number (tests/models/conftest.py, stored with the reference); through the output head
alone, within its dot-product bound (:func:`output_head_bound`).
"""

from __future__ import annotations

import numpy as np
import pytest

import attention_models as am
from attention_core.decoder import decoder_layer, rms_norm
from attention_core.positions import rope
from attention_models.interp import Patch, logit_diffs, patched_logit_diffs
from attention_models.model import rope_heads
from tests.float_bounds import (
    U,
    assert_logprobs_within,
    assert_within,
    gamma,
    logprob_bound,
    probable_gamma,
)
from tests.models.conftest import LOGIT_DIFF, LOGPROB, RESIDUAL, attention_spread, output_head_bound


def test_the_ioi_prompts_have_the_same_length_and_single_token_answers(model, default_run, corrupt_run):
    assert am.IOI.clean == am.DEFAULT_SENTENCE
    assert len(default_run.token_ids) == len(corrupt_run.token_ids) == 14
    assert len(model.tokenize(am.IOI.answer)) == len(model.tokenize(am.IOI.other)) == 1


def test_smollm2_prefers_mary_on_the_clean_prompt_and_john_on_the_corrupted_one(default_run, corrupt_run, answers):
    assert am.logit_diff(default_run, *answers) == pytest.approx(6.12, abs=0.05)
    assert am.logit_diff(corrupt_run, *answers) == pytest.approx(-6.47, abs=0.05)


def test_logit_diff_is_the_difference_of_log_probabilities(model, default_run, answers):
    logp = np.log(default_run.next_token_probs)  # float64 from the float32 output head; logit_diff all float64
    expected = logp[answers[0]] - logp[answers[1]]  # two float32 logits, each within its bound of exact
    bound = output_head_bound(model, default_run.residuals[-1][-1:])[0, list(answers)].sum()
    assert_within(am.logit_diff(default_run, *answers), expected, bound, "logit difference")


def test_direct_logit_attribution_sums_to_the_logit_difference(model, default_run, corrupt_run, answers):
    """The parts telescope to the last residual up to the float32 rounding of the run's residual sums, read through
    the frozen readout: less than the rounding of a whole run's logit difference, which bounds it here."""
    for run in (default_run, corrupt_run):
        parts = am.direct_logit_attribution(run, *answers)
        assert parts["heads"].shape == (30, 9) and parts["mlps"].shape == (30,) and isinstance(parts["embed"], float)
        total = parts["embed"] + parts["heads"].sum() + parts["mlps"].sum()
        assert_within(total, am.logit_diff(run, *answers), LOGIT_DIFF, "embed + heads + MLPs")


def test_direct_logit_attribution_of_a_switched_off_head_is_zero(model, default_run, answers):
    scale = np.ones((30, 9))
    scale[23, 3] = 0.0
    edited = model.run(default_run.token_ids, head_scale=scale, reuse=default_run)
    assert am.direct_logit_attribution(default_run, *answers)["heads"][23, 3] > 1.0  # the strongest head here
    assert am.direct_logit_attribution(edited, *answers)["heads"][23, 3] == 0.0


def test_logit_lens_last_row_is_the_models_prediction_and_rows_are_distributions(model, default_run):
    lens = am.logit_lens(default_run)
    assert lens.shape == (31, model.vocab_size)
    np.testing.assert_allclose(lens.sum(axis=1), 1.0)  # float64 softmax
    # the same final residual through the float32 output head as 31 rows and as one: two evaluation orders
    both = 2 * output_head_bound(model, default_run.residuals[-1][-1:])[0]  # each evaluation within one bound
    assert_logprobs_within(
        lens[-1], default_run.next_token_probs, logprob_bound(both), "the lens's last row against the prediction"
    )


def test_logit_lens_at_an_earlier_position_ends_in_that_positions_prediction(model, default_run):
    shorter = model.run(default_run.token_ids[:5])  # 30 layers on 5 tokens instead of 14: other float32 sums
    assert_logprobs_within(am.logit_lens(default_run, 4)[-1], shorter.next_token_probs, LOGPROB, "lens at position 4")
    with pytest.raises(am.AttentionModelError, match="no position 14"):
        am.logit_lens(default_run, 14)


def test_head_weights_equal_to_the_heads_own_weights_change_nothing(model, default_run):
    own = {(3, 2): default_run.attention[3, 2], (20, 7): default_run.attention[20, 7]}
    again = model.run(default_run.token_ids, head_weights=own)  # those two heads as weights @ V: another order
    assert_logprobs_within(again.next_token_probs, default_run.next_token_probs, LOGPROB, "next-token probabilities")
    assert_within(again.attention, default_run.attention, attention_spread(default_run.attention), "attention")


def test_head_weights_replace_the_softmax_and_reuse_starts_at_their_layer(model, default_run):
    T = len(default_run.token_ids)
    first = np.zeros((T, T))
    first[:, 0] = 1.0  # every query looks only at the first token
    edited = model.run(default_run.token_ids, head_weights={(20, 7): first}, reuse=default_run)
    assert edited.first_layer == 20
    np.testing.assert_array_equal(edited.attention[20, 7], first)
    _, _, V = model.head_qkv(default_run, 20, 7)  # V recomputed: a float32 dot product of d_model terms per entry
    a = rms_norm(default_run.residuals[20], model.weights.layers[20].attn_norm, model.config.eps)  # (T, d_model)
    W_v = model.weights.layers[20].W_v[:, 2 * 64 : 3 * 64]  # query head 7 reads key/value head 7 // 3 = 2
    v_bound = 2 * (probable_gamma(576) + gamma(576) / 2 + 4 * U) * (np.abs(a[:1]) @ np.abs(W_v))  # two evaluations
    assert_within(edited.head_outputs[20, 7], np.tile(V[0], (T, 1)), v_bound, "every row is v_0")
    fresh = model.run(default_run.token_ids, head_weights={(20, 7): first})
    assert_logprobs_within(edited.next_token_probs, fresh.next_token_probs, LOGPROB, "reused against fresh")
    assert model.run(default_run.token_ids, head_weights={(20, 7): first}, reuse=edited) is edited
    assert model.run(default_run.token_ids, reuse=edited).first_layer == 20  # the edit undone from layer 20


@pytest.mark.parametrize(
    ("head_weights", "message"),
    [({(30, 0): np.eye(14)}, "not a head"), ({3: np.eye(14)}, "not a head"), ({(3, 2): np.eye(5)}, "14 x 14")],
)
def test_bad_head_weights_are_named(model, default_run, head_weights, message):
    with pytest.raises(am.AttentionModelError, match=message):
        model.run(default_run.token_ids, head_weights=head_weights)


def test_the_batched_layer_is_the_cores_decoder_layer(model, default_run):
    x = default_run.residuals[7]  # (T, d_model)
    scale = np.linspace(0.0, 1.5, 9)
    core = decoder_layer(x, model.weights.layers[7], model.config, scale)
    heads, weights = model.attention_heads(np.stack([x, x]), 7, scale)  # a batch of two copies
    out = model.layer_output(np.stack([x, x]), heads, 7)  # float32 sums in another order than the core's
    assert_within(out, np.stack([core.output] * 2), RESIDUAL, "layer output")  # one layer: less than thirty
    assert_within(weights, np.stack([core.weights] * 2), attention_spread(np.stack([core.weights] * 2)), "weights")


def test_rope_heads_is_the_cores_rope_on_every_head():
    X = np.random.default_rng(0).normal(size=(4, 6, 8))
    np.testing.assert_array_equal(rope_heads(X, 100.0), np.stack([rope(x, base=100.0) for x in X]))  # the same bits
    narrow = rope_heads(X.astype(np.float32), 100.0)  # float32 tables and arithmetic, as the model runs
    assert narrow.dtype == np.float32
    # out_i = x_i cos + x_j sin (j the other half): x, cos, sin each rounded once, two products, one sum: 4U + U
    pair = np.abs(X) + np.abs(np.concatenate([X[..., 4:], X[..., :4]], axis=-1))  # |x_i| + |x_j|
    assert_within(narrow, np.stack([rope(x, base=100.0) for x in X]), 5 * U * pair, "float32 RoPE")


def test_patching_a_run_with_its_own_values_changes_nothing(default_run, answers):
    patches = [Patch(3, head=1), Patch(29, head=8), Patch(0, position=5), Patch(30, position=13)]
    diffs = patched_logit_diffs(default_run, default_run, patches, *answers)
    np.testing.assert_array_equal(diffs, am.logit_diff(default_run, *answers))


def test_a_batched_residual_patch_equals_the_single_run_from_the_patched_layer(
    model, default_run, corrupt_run, answers, ld_spread
):
    patches = [Patch(12, position=9), Patch(12, position=3), Patch(25, position=13), Patch(29, position=1)]
    diffs = patched_logit_diffs(default_run, corrupt_run, patches, *answers)
    for p, diff in zip(patches, diffs, strict=True):
        x = corrupt_run.residuals[p.layer].copy()
        x[p.position] = default_run.residuals[p.layer, p.position]
        with model.threads():
            residuals, _, _ = model._layers(x, corrupt_run.head_scale, {}, p.layer)  # every row, one sequence
        assert_within(diff, logit_diffs(model, residuals[-1][-1:], *answers)[0], ld_spread, f"{p}")
    assert len(set(np.round(diffs, 3))) == 4


def test_residual_patching_is_zero_where_the_prompts_agree_and_one_on_the_last_output(
    model, default_run, corrupt_run, answers
):
    T = len(default_run.token_ids)
    clean_ld, corrupt_ld = am.logit_diff(default_run, *answers), am.logit_diff(corrupt_run, *answers)
    shares = am.patch_residual(model, am.IOI.clean, am.IOI.corrupt, *answers)
    assert shares.shape == (31, T)
    np.testing.assert_allclose(shares[30], np.eye(T)[T - 1], atol=1e-6)  # only the last row is read out
    names = [t for t in range(T) if default_run.token_ids[t] != corrupt_run.token_ids[t]]
    assert names == [1, 3, 9]  # " Mary" and " John" swapped
    assert np.all(shares[0, [t for t in range(T) if t not in names]] == 0.0)  # an equal embedding changes nothing
    assert shares[0, names].sum() > 0.5 and np.all(np.abs(shares[0, names]) <= 1.5)
    assert shares[29, T - 1] > 0.8 and abs(clean_ld - corrupt_ld) > 10


def test_patch_heads_shares_and_progress(model, answers):
    seen: list[float] = []
    shares = am.patch_heads(model, am.IOI.clean, am.IOI.corrupt, *answers, progress=seen.append)
    assert shares.shape == (30, 9)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    # reported as the work goes (each layer of each batch), not only at its end: a progress bar that moves
    assert len(seen) >= model.n_layers and seen[0] < 0.05, f"{len(seen)} reports, the first at {seen[:1]}"
    assert np.unravel_index(np.argmax(shares), shares.shape) == (23, 3)  # the head DLA names too
    assert 0.5 < shares[23, 3] < 0.7


def test_the_batch_size_changes_no_patched_logit_difference(default_run, corrupt_run, answers, monkeypatch, ld_spread):
    """Patches starting at four layers, run in one batch and in batches of 7 sequences (starts mixed within a
    batch and across batches): the same numbers."""
    patches = [Patch(layer, head=h) for layer in (0, 11, 23, 29) for h in range(9)]
    whole = patched_logit_diffs(default_run, corrupt_run, patches, *answers)
    monkeypatch.setattr(am.interp, "BATCH_ROWS", len(default_run.token_ids) * 7)
    small = patched_logit_diffs(default_run, corrupt_run, patches, *answers)
    assert_within(small, whole, ld_spread, "batches of 7 against one batch")
    assert np.ptp(whole) > 0.1  # the patches do differ


def test_patch_heads_agrees_with_patched_logit_diffs_one_head_at_a_time(default_run, corrupt_run, answers, ld_spread):
    clean_ld, corrupt_ld = am.logit_diff(default_run, *answers), am.logit_diff(corrupt_run, *answers)
    (one,) = patched_logit_diffs(default_run, corrupt_run, [Patch(29, head=1)], *answers)
    both = patched_logit_diffs(default_run, corrupt_run, [Patch(0, head=0), Patch(29, head=1)], *answers)
    assert_within(both[1], one, ld_spread, "in a batch of two against alone")
    assert (one - corrupt_ld) / (clean_ld - corrupt_ld) == pytest.approx(0.268, abs=0.01)


def test_patching_prompts_of_different_lengths_or_equal_answers_is_refused(model, answers):
    with pytest.raises(am.AttentionModelError, match="same number of tokens"):
        am.patch_heads(model, am.IOI.clean, am.IOI.clean + " the", *answers)
    with pytest.raises(am.AttentionModelError, match="same logit difference"):
        am.patch_heads(model, am.IOI.clean, am.IOI.clean, *answers)
