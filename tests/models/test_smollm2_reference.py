"""SmolLM2-135M run by attention_models (NumPy) against Hugging Face transformers on the same GGUF file.

Gold numbers: tests/data/smollm2_reference.npz, written by scripts/make_model_reference.py (torch,
transformers, eager attention; versions in its ``meta``). Token ids exactly. Every other number is float32
arithmetic done twice, by torch and by NumPy, in other orders (another kernel, RoPE angles in float32 there
and rounded once here): each is compared within SPREAD times Hugging Face's own float32 error for that kind
of number, measured by the script against the same run in float64 and stored in the npz (``float32_error``;
tests/models/conftest.py), plus the npz's float32 storage (``U |value|``) where an array was stored in
float32. Nothing here measures our own run's error: a defect of our float32 path cannot widen its bound.
Probabilities are compared as log-probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest

import attention_models as am
from attention_core.head_scores import induction_score
from attention_models.interp import Patch, patched_logit_diffs
from tests.float_bounds import U, assert_logprobs_within, assert_within
from tests.models.conftest import DLA, LOGPROB, META, REF, SURPRISAL, attention_spread


@pytest.fixture(scope="module")
def repeated_run(model):
    return model.run(REF["repeated_ids"].tolist())


def _stored(reference: np.ndarray) -> np.ndarray:
    """The npz's own rounding of an array it stores in float32: ``U |value|`` (0 for float64)."""
    return U * np.abs(reference) if reference.dtype == np.float32 else np.zeros(reference.shape)


@pytest.mark.parametrize("index", range(len(META["sentences"])))
def test_token_ids_match_hugging_face(model, index):
    text, expected = META["sentences"][index], META["token_ids"][index]
    assert model.tokenize(text) == expected, f"tokenizing {text!r}"


def test_attention_of_several_layers_matches(default_run):
    ours, ref = default_run.attention[REF["default_layers"]], REF["default_attention"]
    bound = attention_spread(ref) + _stored(ref)
    assert_within(ours, ref, bound, "attention of layers " + str(REF["default_layers"].tolist()))


def test_top20_next_token_probabilities_match(default_run):
    ours = default_run.next_token_probs[REF["default_top_ids"]]
    assert_logprobs_within(ours, REF["default_top_probs"], LOGPROB, "top 20")


def test_mary_is_the_most_likely_next_token_at_about_92_percent(model, default_run):
    best = int(np.argmax(default_run.next_token_probs))
    assert model.token(best) == " Mary"
    assert default_run.next_token_probs[best] == pytest.approx(0.92, abs=0.01)


def test_repeated_sequence_attention_and_induction_scores_match(repeated_run):
    layer = int(REF["repeated_attention_layer"])
    ref = REF["repeated_attention"]
    assert_within(repeated_run.attention[layer], ref, attention_spread(ref) + _stored(ref), f"attention of {layer}")
    scores = induction_score(repeated_run.attention, REF["repeated_ids"])  # means of attention entries
    ref = REF["repeated_induction_scores"]
    bound = attention_spread(ref) + _stored(ref)  # a mean of weights moves by at most the share each weight may
    assert_within(scores, ref, bound, "induction scores")


def test_switching_off_ten_induction_heads_raises_the_second_copy_loss_from_3_to_12_nats(model, repeated_run):
    n = META["repeat"]["length"]
    scores = induction_score(repeated_run.attention, REF["repeated_ids"])  # ours, not the reference's
    scale = np.ones_like(scores)
    scale.ravel()[np.argsort(scores.ravel())[::-1][:10]] = 0.0
    np.testing.assert_array_equal(scale, REF["ablated_scale"])  # the same ten heads as Hugging Face's
    ablated = model.run(REF["repeated_ids"].tolist(), head_scale=scale)
    before, after = model.loss(repeated_run, n, 2 * n), model.loss(ablated, n, 2 * n)
    for ours, key in [(before, "repeated_loss_second_copy"), (after, "ablated_loss_second_copy")]:
        assert_within(ours, REF[key], SURPRISAL, key)  # a mean of -log p moves by at most the most one may
    assert 2.0 < before < 4.0 and 11.0 < after < 13.0


def test_fractional_head_scales_match_the_o_proj_hook(model):
    run = model.run(am.DEFAULT_SENTENCE, head_scale=REF["ablated_scale"] * 0.5 + 0.25)
    ours = run.next_token_probs[REF["default_scaled_top_ids"]]
    assert_logprobs_within(ours, REF["default_scaled_top_probs"], LOGPROB, "top 20, heads scaled")


@pytest.fixture(scope="module")
def ioi_runs(model):
    return model.run(META["ioi"]["clean"]), model.run(META["ioi"]["corrupt"])


def test_ioi_answers_and_logit_differences_match(model, ioi_runs, ld_spread):
    a, b = REF["ioi_answer_ids"].tolist()
    assert [model.tokenize(META["ioi"][k]) for k in ("answer", "other")] == [[a], [b]]
    clean, corrupt = ioi_runs
    assert_within(am.logit_diff(clean, a, b), REF["ioi_logit_diff"], ld_spread, "clean logit difference")
    assert_within(am.logit_diff(corrupt, a, b), REF["ioi_corrupt_logit_diff"], ld_spread, "corrupted logit difference")


def test_direct_logit_attribution_matches_the_o_proj_and_mlp_hooks(ioi_runs):
    a, b = REF["ioi_answer_ids"].tolist()
    parts = am.direct_logit_attribution(ioi_runs[0], a, b)
    for key in ("embed", "heads", "mlps"):
        ref = REF[f"ioi_dla_{key}"]
        assert_within(parts[key], ref, DLA + _stored(ref), f"direct logit attribution: {key}")


def test_one_patched_head_and_one_patched_residual_row_match(ioi_runs, ld_spread):
    a, b = REF["ioi_answer_ids"].tolist()
    layer, head = REF["ioi_patched_head"].tolist()
    at, position = REF["ioi_patched_residual"].tolist()
    patches = [Patch(layer, head=head), Patch(at, position=position)]
    ours = patched_logit_diffs(*ioi_runs, patches, a, b)
    expected = [float(REF["ioi_patched_head_logit_diff"]), float(REF["ioi_patched_residual_logit_diff"])]
    assert_within(ours, expected, ld_spread, "patched logit differences")


def test_one_logit_lens_row_matches(default_run):
    index = int(REF["lens_index"])
    ours = am.logit_lens(default_run)[index][REF["lens_top_ids"]]
    assert_logprobs_within(ours, REF["lens_top_probs"], LOGPROB, f"lens row {index}")


def test_logit_lens_rows_at_several_layers_and_positions_match(model, default_run):
    """Residuals 0 (the embeddings) .. 30 (the last output) at four positions; each row's top 20 tokens and ten
    fixed tokens (mostly improbable), as log-probabilities."""
    for i, r in enumerate(REF["lens_grid_residuals"].tolist()):
        for j, position in enumerate(REF["lens_grid_positions"].tolist()):
            ours = np.log(am.logit_lens(default_run, position)[r])  # (vocab,)
            ids = REF["lens_grid_ids"][i, j]
            where = f"lens: residual {r}, position {position}"
            assert_within(ours[ids], REF["lens_grid_logprobs"][i, j], LOGPROB, where)
    assert REF["lens_grid_logprobs"][:, :, -10:].min() < -15  # the fixed tokens do reach into the tail


def test_the_whole_heads_patching_grid_matches(model, ioi_runs, ld_spread):
    """Every head's patched logit difference, and the share of the clean one it restores, against Hugging Face
    runs with that head's o_proj input columns taken from the clean run. A share is ``(LD_p - LD_k) / D`` with
    ``D = LD_c - LD_k``: each LD off by at most ``s``, it is off by at most ``s (2 + 2 |share|) / |D|``."""
    a, b = REF["ioi_answer_ids"].tolist()
    L, h = REF["ioi_patched_heads_logit_diff"].shape
    patches = [Patch(layer, head=i) for layer in range(L) for i in range(h)]
    ours = patched_logit_diffs(*ioi_runs, patches, a, b).reshape(L, h)
    assert_within(ours, REF["ioi_patched_heads_logit_diff"], ld_spread, "patched logit differences (layer, head)")
    shares = am.patch_heads(model, META["ioi"]["clean"], META["ioi"]["corrupt"], a, b)  # what the page draws
    ref = REF["ioi_patched_heads_share"]
    D = float(REF["ioi_logit_diff"] - REF["ioi_corrupt_logit_diff"])
    assert_within(shares, ref, ld_spread * (2 + 2 * np.abs(ref)) / abs(D), "patched shares (layer, head)")
    assert np.unravel_index(np.argmax(ref), ref.shape) == (23, 3) and np.ptp(ref) > 0.5  # a grid worth comparing
