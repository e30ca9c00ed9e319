"""SmolLM2-135M run by attention_models (NumPy) against Hugging Face transformers on the same GGUF file.

Gold numbers: tests/data/smollm2_reference.npz, written by scripts/make_model_reference.py (torch,
transformers, eager attention; versions in its ``meta``). Attention to 1e-4, probabilities to 1e-3,
token ids exactly; logit differences and their attribution (a few units; measured within 1e-5) to 1e-4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import attention_models as am
from attention_core.head_scores import induction_score
from attention_models.interp import Patch, patched_logit_diffs

REF = np.load(Path(__file__).parents[1] / "data" / "smollm2_reference.npz")
META = json.loads(str(REF["meta"]))


@pytest.fixture(scope="module")
def repeated_run(model):
    return model.run(REF["repeated_ids"].tolist())


@pytest.mark.parametrize("index", range(len(META["sentences"])))
def test_token_ids_match_hugging_face(model, index):
    text, expected = META["sentences"][index], META["token_ids"][index]
    assert model.tokenize(text) == expected, f"tokenizing {text!r}"


def test_attention_of_several_layers_matches(default_run):
    ours = default_run.attention[REF["default_layers"]]
    np.testing.assert_allclose(ours, REF["default_attention"], rtol=0, atol=1e-4)


def test_top20_next_token_probabilities_match(default_run):
    np.testing.assert_allclose(
        default_run.next_token_probs[REF["default_top_ids"]], REF["default_top_probs"], atol=1e-3
    )


def test_mary_is_the_most_likely_next_token_at_about_92_percent(model, default_run):
    best = int(np.argmax(default_run.next_token_probs))
    assert model.token(best) == " Mary"
    assert default_run.next_token_probs[best] == pytest.approx(0.92, abs=0.01)


def test_repeated_sequence_attention_and_induction_scores_match(repeated_run):
    layer = int(REF["repeated_attention_layer"])
    np.testing.assert_allclose(repeated_run.attention[layer], REF["repeated_attention"], atol=1e-4)
    scores = induction_score(repeated_run.attention, REF["repeated_ids"])
    np.testing.assert_allclose(scores, REF["repeated_induction_scores"], atol=1e-4)


def test_switching_off_ten_induction_heads_raises_the_second_copy_loss_from_3_to_12_nats(model, repeated_run):
    n = META["repeat"]["length"]
    scores = induction_score(repeated_run.attention, REF["repeated_ids"])  # ours, not the reference's
    scale = np.ones_like(scores)
    scale.ravel()[np.argsort(scores.ravel())[::-1][:10]] = 0.0
    np.testing.assert_array_equal(scale, REF["ablated_scale"])  # the same ten heads as Hugging Face's
    before = model.loss(repeated_run, n, 2 * n)
    after = model.loss(model.run(REF["repeated_ids"].tolist(), head_scale=scale), n, 2 * n)
    assert before == pytest.approx(float(REF["repeated_loss_second_copy"]), abs=1e-3)
    assert after == pytest.approx(float(REF["ablated_loss_second_copy"]), abs=1e-3)
    assert 2.0 < before < 4.0 and 11.0 < after < 13.0


def test_fractional_head_scales_match_the_o_proj_hook(model):
    run = model.run(am.DEFAULT_SENTENCE, head_scale=REF["ablated_scale"] * 0.5 + 0.25)
    ours = run.next_token_probs[REF["default_scaled_top_ids"]]
    np.testing.assert_allclose(ours, REF["default_scaled_top_probs"], atol=1e-3)


@pytest.fixture(scope="module")
def ioi_runs(model):
    return model.run(META["ioi"]["clean"]), model.run(META["ioi"]["corrupt"])


def test_ioi_answers_and_logit_differences_match(model, ioi_runs):
    a, b = REF["ioi_answer_ids"].tolist()
    assert [model.tokenize(META["ioi"][k]) for k in ("answer", "other")] == [[a], [b]]
    clean, corrupt = ioi_runs
    assert clean.logit_diff(a, b) == pytest.approx(float(REF["ioi_logit_diff"]), abs=1e-4)
    assert corrupt.logit_diff(a, b) == pytest.approx(float(REF["ioi_corrupt_logit_diff"]), abs=1e-4)


def test_direct_logit_attribution_matches_the_o_proj_and_mlp_hooks(ioi_runs):
    a, b = REF["ioi_answer_ids"].tolist()
    parts = ioi_runs[0].direct_logit_attribution(a, b)
    assert parts["embed"] == pytest.approx(float(REF["ioi_dla_embed"]), abs=1e-4)
    np.testing.assert_allclose(parts["heads"], REF["ioi_dla_heads"], atol=1e-4)
    np.testing.assert_allclose(parts["mlps"], REF["ioi_dla_mlps"], atol=1e-4)


def test_one_patched_head_and_one_patched_residual_row_match(ioi_runs):
    a, b = REF["ioi_answer_ids"].tolist()
    layer, head = REF["ioi_patched_head"].tolist()
    at, position = REF["ioi_patched_residual"].tolist()
    patches = [Patch(layer, head=head), Patch(at, position=position)]
    ours = patched_logit_diffs(*ioi_runs, patches, a, b)
    np.testing.assert_allclose(
        ours, [float(REF["ioi_patched_head_logit_diff"]), float(REF["ioi_patched_residual_logit_diff"])], atol=1e-4
    )


def test_one_logit_lens_row_matches(default_run):
    lens = default_run.logit_lens()[int(REF["lens_index"])]
    np.testing.assert_allclose(lens[REF["lens_top_ids"]], REF["lens_top_probs"], atol=1e-3)
