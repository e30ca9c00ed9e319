"""explain_cell: one attention cell worked out term by term, checked against the stored stages and seed 003."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SEED_003 = "003_772d8909e260d638.txt"  # the emma-friend notebook, source of every gold number below
FRIEND, EMMA = 8, 0


def emma(mask: str = "none", scale: object = ac.SCENARIO_DEFAULT) -> ac.AttentionResult:
    sc = ac.load_scenario("emma-friend")
    assert sc.seed == SEED_003
    return ac.run_scenario(sc, mask=mask, scale=scale).heads[0]


def test_friend_to_emma_products_and_dot_are_the_notebooks():
    # seed 003, "Attention of friend to Emma": 1.2*1.0 + 0.8*0.9 + 1.0*0.5 + 0*1 = 2.42
    e = ac.explain_cell(emma(), FRIEND, EMMA)
    np.testing.assert_allclose(e.q, [1.0, 0.9, 0.5, 1.0])
    np.testing.assert_allclose(e.k, [1.2, 0.8, 1.0, 0.0])
    np.testing.assert_allclose(e.products, [1.2, 0.72, 0.5, 0.0], err_msg="q_i * k_i of friend -> Emma")
    assert e.dot == pytest.approx(2.42)
    assert e.products.sum() == pytest.approx(e.dot)


def test_unscaled_weight_is_the_first_tables_058():
    # seed 003, In [57]: w = softmax(wtilde), row "friend": 0.58 on Emma
    e = ac.explain_cell(emma(), FRIEND, EMMA)
    assert (e.scale, e.temperature, e.scaled) == (1.0, 1.0, pytest.approx(2.42))
    assert round(e.weight, 2) == 0.58
    np.testing.assert_allclose(e.weights_row.round(2), [0.58, 0.04, 0.03, 0.03, 0.05, 0.04, 0.03, 0.1, 0.09])
    # seed 003, In [65]: the friend row of wtilde (no mask, so masked == scores)
    np.testing.assert_allclose(e.masked_row, [2.42, -0.25, -0.5, -0.5, 0.0, -0.25, -0.5, 0.7, 0.5])


def test_causal_half_scale_weight_is_the_second_tables_030():
    # seed 003, In [58]: causal mask, softmax(wtilde / sqrt(4)), row "friend": 0.3 on Emma
    e = ac.explain_cell(emma("causal", None), FRIEND, EMMA)
    assert e.scale == 0.5 and e.scaled == pytest.approx(1.21)
    assert round(e.weight, 2) == 0.30
    np.testing.assert_allclose(e.weights_row.round(2), [0.3, 0.08, 0.07, 0.07, 0.09, 0.08, 0.07, 0.13, 0.12])


def test_stable_softmax_shifts_by_the_row_maximum():
    e = ac.explain_cell(emma(), FRIEND, EMMA)
    assert e.row_max == pytest.approx(2.42)  # friend's largest score is Emma's
    assert e.exps[EMMA] == pytest.approx(1.0)  # exp(2.42 - 2.42)
    np.testing.assert_allclose(e.exps, np.exp(e.masked_row - 2.42))
    assert e.denominator == pytest.approx(1 / 0.5831242988, rel=1e-9)


def test_causal_future_key_is_blocked_and_weighs_nothing():
    e = ac.explain_cell(emma("causal", None), EMMA, FRIEND)  # Emma (first) may not look at friend (last)
    assert not e.allowed
    assert np.isneginf(e.masked_row[FRIEND]) and e.exps[FRIEND] == 0.0 and e.weight == 0.0
    assert e.dot == pytest.approx(0.9)  # the score exists, the mask removes it
    np.testing.assert_allclose(e.output, [1.2, 0.8, 1.0, 0.0])  # Emma sees only herself: her own value row


def test_weighted_values_sum_to_the_output_row():
    r = emma()
    e = ac.explain_cell(r, FRIEND, EMMA)
    np.testing.assert_allclose(e.weighted_values, r.weights[FRIEND][:, None] * r.V)
    np.testing.assert_allclose(e.weighted_values.sum(axis=0), e.output, atol=1e-12)
    np.testing.assert_allclose(e.output, r.output[FRIEND])


@pytest.mark.parametrize("scenario", ac.list_scenarios())
def test_every_cell_of_every_scenario_matches_the_stored_stages(scenario):
    r = ac.run_scenario(ac.load_scenario(scenario)).heads[0]
    for i in range(r.weights.shape[0]):
        for j in range(r.weights.shape[1]):
            _check_against_stages(r, i, j)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n_q=st.integers(1, 5),
    n_k=st.integers(1, 5),
    d_k=st.integers(1, 4),
    temperature=st.floats(0.1, 5.0),
    causal=st.booleans(),
)
def test_explanation_matches_stages_for_random_inputs(data, n_q, n_k, d_k, temperature, causal):
    finite = st.floats(-30, 30, allow_nan=False)
    Q = data.draw(arrays(np.float64, (n_q, d_k), elements=finite))
    K = data.draw(arrays(np.float64, (n_k, d_k), elements=finite))
    V = data.draw(arrays(np.float64, (n_k, 3), elements=finite))
    mask = ac.causal_mask(n_q, n_k) if causal else None
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask, temperature=temperature)
    _check_against_stages(r, data.draw(st.integers(0, n_q - 1)), data.draw(st.integers(0, n_k - 1)))


def _check_against_stages(r: ac.AttentionResult, i: int, j: int) -> None:
    e = ac.explain_cell(r, i, j)
    where = f"cell ({i}, {j})"
    np.testing.assert_array_equal(e.products, r.Q[i] * r.K[j], err_msg=where)
    assert e.products.sum() == pytest.approx(r.scores[i, j], abs=1e-9), where
    assert e.dot == r.scores[i, j] and e.scaled == r.scaled[i, j], where
    assert e.scaled == pytest.approx(e.dot * e.scale / e.temperature, rel=1e-12, abs=1e-12), where
    assert e.allowed == bool(r.mask[i, j]), where
    assert e.weight == r.weights[i, j], where
    if e.denominator > 0:
        np.testing.assert_allclose(e.exps / e.denominator, r.weights[i], rtol=1e-12, atol=1e-15, err_msg=where)
        assert e.exps.max() == 1.0, where  # the shift by the row maximum makes the largest term e^0
    np.testing.assert_allclose(e.weighted_values.sum(axis=0), r.output[i], rtol=1e-9, atol=1e-9, err_msg=where)


def test_huge_scores_do_not_overflow_the_exponentials():
    r = ac.scaled_dot_product_attention([[30.0, 30.0]], [[30.0, 30.0], [29.0, 29.0]], [[1.0], [0.0]], scale=1.0)
    e = ac.explain_cell(r, 0, 1)  # scores 1800 and 1740: plain exp(1800) would be inf
    assert np.all(np.isfinite(e.exps)) and e.exps[0] == 1.0
    assert e.weight == pytest.approx(np.exp(-60.0))


def test_fully_blocked_row_gives_zeros_not_nan():
    mask = np.array([[False, False], [True, True]])
    r = ac.scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.eye(2), mask=mask)
    e = ac.explain_cell(r, 0, 1)
    assert np.isneginf(e.row_max)
    assert e.denominator == 0.0 and e.weight == 0.0
    np.testing.assert_array_equal(e.exps, [0.0, 0.0])
    np.testing.assert_array_equal(e.output, [0.0, 0.0])


def test_explaining_leaves_the_result_untouched():
    r = emma()
    before = {name: getattr(r, name).copy() for name in ("Q", "K", "V", "scores", "masked", "weights", "output")}
    e = ac.explain_cell(r, FRIEND, EMMA)
    e.q[:] = 99.0
    e.weighted_values[:] = 99.0
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(r, name), value, err_msg=name)


@pytest.mark.parametrize(
    ("i", "j", "message"),
    [
        (9, 0, "query index 9 is out of range: there are 9 query tokens, numbered 0 to 8"),
        (0, -1, "key index -1 is out of range"),
        (1.0, 0, "query index must be a whole number"),
        (0, True, "key index must be a whole number"),
    ],
)
def test_indices_out_of_range_raise_a_clear_error(i, j, message):
    with pytest.raises(ac.AttentionInputError, match=message):
        ac.explain_cell(emma(), i, j)


def test_numpy_integer_indices_are_accepted():
    e = ac.explain_cell(emma(), np.int64(FRIEND), np.int32(EMMA))
    assert (e.i, e.j) == (FRIEND, EMMA) and type(e.i) is int
