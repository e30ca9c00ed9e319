"""attention_core readouts, head similarity, weight changes and permutations, against direct computation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

FINITE = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared


def plain_readouts(row: list[float]) -> tuple[float, float, float, float]:
    """Entropy (bits), max, 2**entropy and sum of one row, in plain Python (the gold reference)."""
    h = -sum(w * math.log2(w) for w in row if w > 0)
    return h, max(row), 2**h, sum(row)


# ---------------------------------------------------------------- row readouts


@pytest.mark.parametrize("n", [1, 2, 5, 9, 64])
def test_uniform_row_has_log2_n_bits_and_n_effective_tokens(n):
    r = ac.row_readouts(np.full((3, n), 1 / n))
    np.testing.assert_allclose(r.entropy_bits, math.log2(n), atol=1e-12)
    np.testing.assert_allclose(r.effective_tokens, n, rtol=1e-12)
    np.testing.assert_allclose(r.max_weight, 1 / n)
    np.testing.assert_allclose(r.row_sum, 1.0)


def test_one_hot_rows_have_zero_bits_and_one_effective_token():
    W = np.eye(4)[[2, 0, 3]]  # (3, 4): query i attends key 2, 0, 3 only
    r = ac.row_readouts(W)
    np.testing.assert_array_equal(r.entropy_bits, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(r.effective_tokens, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(r.max_weight, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(r.argmax, [2, 0, 3])


def test_readouts_of_a_scenario_match_plain_python():
    weights = ac.run_scenario(ac.load_scenario("emma-friend")).heads[0].weights  # (9, 9)
    r = ac.row_readouts(weights)
    for i, row in enumerate(weights.tolist()):
        h, top, n_eff, total = plain_readouts(row)
        assert r.entropy_bits[i] == pytest.approx(h, abs=1e-12), f"entropy of row {i}"
        assert r.max_weight[i] == top
        assert r.effective_tokens[i] == pytest.approx(n_eff, rel=1e-12), f"effective tokens of row {i}"
        assert r.row_sum[i] == pytest.approx(total, abs=1e-12)
        assert r.argmax[i] == row.index(top)


def test_fully_masked_row_attends_to_nothing():
    r = ac.row_readouts(np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0]]))
    assert r.row_sum[0] == 0.0 and r.effective_tokens[0] == 0.0 and r.entropy_bits[0] == 0.0
    assert r.effective_tokens[1] == pytest.approx(2.0)


@pytest.mark.parametrize("bad", [[[0.5, -0.1]], [[np.nan, 1.0]], [1.0, 0.0], [["a", 1.0]]])
def test_readouts_refuse_what_is_not_a_weight_matrix(bad):
    with pytest.raises(ac.AttentionInputError):
        ac.row_readouts(bad)


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 8)), elements=FINITE))
def test_effective_tokens_lie_between_one_and_n_k(scores):
    r = ac.row_readouts(ac.softmax(scores, axis=-1))
    n_k = scores.shape[1]
    assert np.all(r.effective_tokens >= 1 - 1e-9) and np.all(r.effective_tokens <= n_k + 1e-9)
    np.testing.assert_allclose(r.effective_tokens, np.exp2(r.entropy_bits))
    np.testing.assert_allclose(r.row_sum, 1.0)


# ---------------------------------------------------------------- head similarity


def test_identical_heads_have_similarity_one_and_disjoint_heads_zero():
    a = np.eye(3)  # every query attends itself
    b = np.eye(3)[[1, 2, 0]]  # every query attends another token
    S = ac.head_similarity([a, a.copy(), b])
    np.testing.assert_allclose(S, [[1, 1, 0], [1, 1, 0], [0, 0, 1]], atol=1e-15)


def test_similarity_is_the_mean_overlap_of_rows():
    a = np.array([[0.5, 0.5], [1.0, 0.0]])
    b = np.array([[0.9, 0.1], [1.0, 0.0]])
    # row 0 overlaps min(.5,.9) + min(.5,.1) = 0.6, row 1 overlaps 1: mean 0.8
    assert ac.head_similarity([a, b])[0, 1] == pytest.approx(0.8)


def test_identical_heads_with_masked_rows_are_still_similarity_one():
    a = np.array([[0.0, 0.0], [0.3, 0.7]])  # row 0 fully masked
    assert ac.head_similarity([a, a])[0, 1] == pytest.approx(1.0)


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5)), elements=FINITE))
def test_head_similarity_is_symmetric_in_zero_one_with_ones_on_the_diagonal(scores):
    S = ac.head_similarity(list(ac.softmax(scores, axis=-1)))
    np.testing.assert_allclose(S, S.T)
    np.testing.assert_allclose(np.diag(S), 1.0)
    assert np.all(S >= -1e-12) and np.all(S <= 1 + 1e-12)


def test_head_similarity_refuses_mixed_shapes_and_no_heads():
    with pytest.raises(ac.AttentionInputError, match="same tokens"):
        ac.head_similarity([np.eye(2), np.eye(3)])
    with pytest.raises(ac.AttentionInputError, match="at least one"):
        ac.head_similarity([])


# ---------------------------------------------------------------- compare


def test_weight_changes_list_the_largest_cells_first():
    before = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    after = np.array([[0.1, 0.9, 0.0], [0.2, 0.2, 0.6]])
    c = ac.weight_changes(before, after, k=3)
    np.testing.assert_allclose(c.delta, after - before)
    assert c.cells.tolist() == [[0, 0], [0, 1], [1, 1]]  # |-0.4|, |0.4| (ties row-major), then |-0.1| at (1, 1)
    np.testing.assert_allclose(c.change, [-0.4, 0.4, -0.1])
    np.testing.assert_allclose(c.before, [0.5, 0.5, 0.3])
    np.testing.assert_allclose(c.after, [0.1, 0.9, 0.2])


def test_no_change_lists_no_cells():
    w = np.full((2, 2), 0.5)
    c = ac.weight_changes(w, w.copy(), k=5)
    assert c.cells.shape == (0, 2) and c.change.size == 0
    assert not np.any(c.delta)


def test_weight_changes_refuse_different_shapes():
    with pytest.raises(ac.AttentionInputError, match=r"snapshot has shape \(2, 5\).*\(2, 6\)"):
        ac.weight_changes(np.zeros((2, 5)), np.zeros((2, 6)))


@SETTINGS
@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)), elements=FINITE),
    arrays(np.float64, (5, 5), elements=FINITE),
    st.integers(0, 30),
)
def test_listed_changes_are_the_k_largest(a, b, k):
    b = b[: a.shape[0], : a.shape[1]]
    c = ac.weight_changes(a, b, k=k)
    size = np.abs(b - a).ravel()
    assert len(c.cells) == min(k, int(np.sum(size > ac.compare.CHANGE_TOLERANCE)))
    if len(c.cells):
        assert np.all(np.diff(np.abs(c.change)) <= 0)
        assert abs(c.change[-1]) >= np.sort(size)[::-1][len(c.cells) - 1]
        np.testing.assert_array_equal(c.change, (b - a)[c.cells[:, 0], c.cells[:, 1]])


# ---------------------------------------------------------------- permutations


def test_shuffled_order_is_reversed_without_a_generator_and_never_the_identity():
    assert ac.shuffled_order(4).tolist() == [3, 2, 1, 0]
    for seed in range(50):
        p = ac.shuffled_order(2, np.random.default_rng(seed))
        assert p.tolist() == [1, 0]
    assert ac.shuffled_order(1, np.random.default_rng(0)).tolist() == [0]


@pytest.mark.parametrize("perm", [[0, 0, 1], [0, 1], [1, 2, 3], [0.0, 1.0, 2.0], [[0, 1, 2]]])
def test_bad_permutations_are_refused(perm):
    with pytest.raises(ac.AttentionInputError, match="permutation"):
        ac.as_permutation(perm, 3)


def test_permute_tokens_moves_rows_and_leaves_inputs_alone():
    X = np.arange(6.0).reshape(3, 2)
    (Xp,) = ac.permute_tokens([2, 0, 1], X)
    np.testing.assert_array_equal(Xp, [[4, 5], [0, 1], [2, 3]])
    np.testing.assert_array_equal(X, np.arange(6.0).reshape(3, 2))


@st.composite
def self_attention_case(draw):
    n, d_k, d_v = draw(st.integers(1, 7)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    Q, K = (draw(arrays(np.float64, (n, d_k), elements=FINITE)) for _ in range(2))
    V = draw(arrays(np.float64, (n, d_v), elements=FINITE))
    perm = draw(st.permutations(range(n)))
    causal = draw(st.booleans())
    return Q, K, V, perm, ac.causal_mask(n) if causal else None


@SETTINGS
@given(self_attention_case())
def test_weights_permute_with_the_tokens(case):
    Q, K, V, perm, mask = case
    check = ac.permutation_check(Q, K, V, perm, mask=mask)
    assert check.weights_equal and check.outputs_equal
    p = np.array(perm)
    np.testing.assert_allclose(check.permuted_weights, check.weights[p][:, p], atol=1e-12)
    np.testing.assert_allclose(check.permuted_output, check.output[p], atol=1e-9)


@SETTINGS
@given(self_attention_case())
def test_permuting_embeddings_permutes_the_weights(case):
    X, _, _, perm, _ = case  # X (n, d); the projections below are square, so any X fits
    d = X.shape[1]
    W_q, W_k = np.eye(d) + 0.5, np.eye(d)[::-1]
    (Xp,) = ac.permute_tokens(perm, X)
    w = ac.scaled_dot_product_attention(X @ W_q, X @ W_k, X).weights
    wp = ac.scaled_dot_product_attention(Xp @ W_q, Xp @ W_k, Xp).weights
    np.testing.assert_allclose(wp, ac.permute_weights(w, perm), atol=1e-12)


def test_keys_only_permutation_reorders_columns_and_keeps_the_output():
    sc = ac.load_scenario("mammal-query")
    check = ac.permutation_check(sc.Q, sc.K, sc.V, [4, 3, 2, 1, 0], keys_only=True)
    assert check.weights_equal and check.outputs_equal
    np.testing.assert_allclose(check.permuted_weights, check.weights[:, ::-1], atol=1e-15)
    np.testing.assert_allclose(check.permuted_output, check.output, atol=1e-12)


def test_a_causal_mask_left_in_place_breaks_the_equality():
    # the mask is position: re-applying it to the new order (instead of moving it) changes the weights
    sc = ac.load_scenario("random-causal")
    perm = [3, 2, 1, 0]
    Qp, Kp, Vp = ac.permute_tokens(perm, sc.Q, sc.K, sc.V)
    w = ac.scaled_dot_product_attention(sc.Q, sc.K, sc.V, mask=ac.causal_mask(4)).weights
    wp = ac.scaled_dot_product_attention(Qp, Kp, Vp, mask=ac.causal_mask(4)).weights
    assert not np.allclose(wp, ac.permute_weights(w, perm))
    assert ac.permutation_check(sc.Q, sc.K, sc.V, perm, mask=ac.causal_mask(4)).weights_equal


def test_self_attention_permutation_needs_as_many_queries_as_keys():
    sc = ac.load_scenario("mammal-query")
    with pytest.raises(ac.AttentionInputError, match="keys_only=True"):
        ac.permutation_check(sc.Q, sc.K, sc.V, [4, 3, 2, 1, 0])


def test_a_changed_check_would_be_reported_false():
    sc = ac.load_scenario("emma-friend")
    check = ac.permutation_check(sc.Q, sc.K, sc.V, list(range(9))[::-1], scale=1.0)
    wrong = ac.PermutationCheck(
        check.perm,
        False,
        check.weights,
        check.weights,
        check.expected_weights,
        check.output,
        check.output,
        check.expected_output,
    )
    assert check.weights_equal and not wrong.weights_equal and not wrong.outputs_equal


def test_min_change_hides_changes_too_small_to_show():
    before = np.array([[0.5, 0.5], [0.25, 0.75]])
    after = np.array([[0.5002, 0.4998], [0.5, 0.5]])  # row 1 changes by exactly +-0.25: a tie, row-major
    c = ac.weight_changes(before, after, k=4, min_change=5e-4)
    assert c.cells.tolist() == [[1, 0], [1, 1]]
    assert len(ac.weight_changes(before, after, k=4).cells) == 4
    with pytest.raises(ac.AttentionInputError, match="min_change"):
        ac.weight_changes(before, after, min_change="small")
