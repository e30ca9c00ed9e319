"""Properties every attention computation must have, checked by hypothesis on random inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac
from attention_core.softmax import softmax_terms

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def matrix(rows: int, cols: int, elements: st.SearchStrategy = FINITE) -> st.SearchStrategy[np.ndarray]:
    return arrays(np.float64, (rows, cols), elements=elements)


@st.composite
def qkv_mask(draw) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) and a bool mask (n_q, n_k) that may block whole rows."""
    n_q, n_k, d_k, d_v = (draw(st.integers(1, 6)) for _ in range(4))
    mask = draw(arrays(np.bool_, (n_q, n_k)))
    return draw(matrix(n_q, d_k)), draw(matrix(n_k, d_k)), draw(matrix(n_k, d_v)), mask


@SETTINGS
@given(qkv_mask(), st.floats(0.05, 20))
def test_weight_rows_sum_to_one_or_are_all_zero_when_fully_masked(data, temperature):
    Q, K, V, mask = data
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask, temperature=temperature)
    open_rows = mask.any(axis=1)
    np.testing.assert_allclose(r.weights[open_rows].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(r.weights[~open_rows] == 0.0)
    assert np.all(r.output[~open_rows] == 0.0)
    assert np.all(r.weights >= 0.0) and np.all(np.isfinite(r.weights))


@SETTINGS
@given(qkv_mask())
def test_masked_keys_get_exactly_zero_weight(data):
    Q, K, V, mask = data
    for given_mask in (mask, np.where(mask, 0.0, -np.inf)):  # bool form and the seeds' additive form
        r = ac.scaled_dot_product_attention(Q, K, V, mask=given_mask)
        assert np.all(r.weights[~mask] == 0.0)
        np.testing.assert_array_equal(r.mask, mask)
        assert np.all(np.isneginf(r.masked[~mask])) and np.all(np.isfinite(r.masked[mask]))


@SETTINGS
@given(matrix(5, 7, st.floats(-50, 50)), arrays(np.float64, (5, 1), elements=st.floats(-1e3, 1e3)))
def test_adding_a_constant_to_a_score_row_changes_nothing(x, c):
    np.testing.assert_allclose(ac.softmax(x + c), ac.softmax(x), rtol=0, atol=1e-9)


@SETTINGS
@given(qkv_mask(), st.data())
def test_a_constant_additive_mask_row_leaves_the_weights_alone(data, draw):
    Q, K, V, _ = data
    c = draw.draw(arrays(np.float64, (Q.shape[0], 1), elements=st.floats(-1e3, 1e3)))
    plain = ac.scaled_dot_product_attention(Q, K, V)
    shifted = ac.scaled_dot_product_attention(Q, K, V, mask=np.repeat(c, K.shape[0], axis=1))
    np.testing.assert_allclose(shifted.weights, plain.weights, rtol=0, atol=1e-9)
    np.testing.assert_allclose(shifted.output, plain.output, rtol=0, atol=1e-8)


@SETTINGS
@given(qkv_mask(), st.data())
def test_permuting_keys_and_values_together_permutes_weight_columns_only(data, draw):
    Q, K, V, mask = data
    perm = np.array(draw.draw(st.permutations(range(K.shape[0]))))
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask)
    p = ac.scaled_dot_product_attention(Q, K[perm], V[perm], mask=mask[:, perm])
    np.testing.assert_allclose(p.weights, r.weights[:, perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p.output, r.output, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(p.scores, r.scores[:, perm], rtol=1e-12, atol=1e-12)


@st.composite
def embeddings_and_head(draw):
    n_q, n_k, d_model, d_k, d_v = (draw(st.integers(1, 6)) for _ in range(5))
    biases = [draw(st.none() | arrays(np.float64, w, elements=FINITE)) for w in (d_k, d_k, d_v)]
    head = ac.Head(draw(matrix(d_model, d_k)), draw(matrix(d_model, d_k)), draw(matrix(d_model, d_v)), *biases)
    X_kv = draw(st.none() | matrix(n_k, d_model))
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_q if X_kv is None else n_k)))
    return draw(matrix(n_q, d_model)), X_kv, head, mask


@SETTINGS
@given(embeddings_and_head(), st.floats(0.1, 10))
def test_one_full_width_head_equals_attention_on_the_projected_matrices(data, temperature):
    X_q, X_kv, head, mask = data
    X_k = X_q if X_kv is None else X_kv
    Q, K, V = (
        X @ W + (0.0 if b is None else b)
        for X, W, b in ((X_q, head.W_q, head.b_q), (X_k, head.W_k, head.b_k), (X_k, head.W_v, head.b_v))
    )
    multi = ac.multi_head_attention(X_q, X_kv, heads=[head], mask=mask, temperature=temperature)
    single = ac.scaled_dot_product_attention(Q, K, V, mask=mask, temperature=temperature)
    (r,) = multi.heads
    for name in ("Q", "K", "V"):
        np.testing.assert_allclose(getattr(r, name), getattr(single, name), rtol=1e-12, atol=1e-12, err_msg=name)
    assert r.scale == single.scale == 1 / np.sqrt(head.W_q.shape[1])
    np.testing.assert_allclose(r.weights, single.weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(multi.output, single.output, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(multi.concat, multi.output)  # no W_o: the output is the concatenation


@st.composite
def full_projections(draw):
    d_model, n_heads, d_head, n = (draw(st.integers(1, 5)) for _ in range(4))
    Ws = [draw(matrix(d_model, n_heads * d_head)) for _ in range(3)]
    bs = [draw(st.none() | arrays(np.float64, n_heads * d_head, elements=FINITE)) for _ in range(3)]
    return draw(matrix(n, d_model)), Ws, bs, n_heads, d_head


@SETTINGS
@given(full_projections())
def test_equal_split_is_manual_column_slicing(data):
    X, (W_q, W_k, W_v), (b_q, b_k, b_v), n_heads, d_head = data
    heads = ac.split_heads(W_q, W_k, W_v, n_heads, b_q, b_k, b_v)
    assert len(heads) == n_heads
    manual_outputs = []
    for i, head in enumerate(heads):
        cols = slice(i * d_head, (i + 1) * d_head)
        for name, W, b in (("W_q", W_q, b_q), ("W_k", W_k, b_k), ("W_v", W_v, b_v)):
            np.testing.assert_array_equal(getattr(head, name), W[:, cols])
            bias = getattr(head, "b_" + name[-1])
            assert (bias is None) if b is None else np.array_equal(bias, b[cols])
        Q, K, V = (X @ W[:, cols] + (0.0 if b is None else b[cols]) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
        manual_outputs.append(ac.scaled_dot_product_attention(Q, K, V).output)
    multi = ac.multi_head_attention(X, heads=heads)
    np.testing.assert_allclose(multi.concat, np.concatenate(manual_outputs, axis=1), rtol=1e-9, atol=1e-9)


@SETTINGS
@given(full_projections(), st.data())
def test_w_o_mixes_the_concatenated_heads(data, draw):
    X, Ws, bs, n_heads, d_head = data
    W_o = draw.draw(matrix(n_heads * d_head, draw.draw(st.integers(1, 5))))
    b_o = draw.draw(st.none() | arrays(np.float64, W_o.shape[1], elements=FINITE))
    multi = ac.multi_head_attention(X, heads=ac.split_heads(*Ws, n_heads, *bs), W_o=W_o, b_o=b_o)
    np.testing.assert_allclose(multi.output, multi.concat @ W_o + (0.0 if b_o is None else b_o), rtol=1e-12)


@SETTINGS
@given(qkv_mask(), st.one_of(st.none(), st.floats(-3, 3)), st.floats(0.1, 10))
def test_every_stage_is_consistent_with_the_next(data, scale, temperature):
    Q, K, V, mask = data
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)
    np.testing.assert_allclose(r.scores, Q @ K.T, rtol=1e-13, atol=1e-13)
    expected_scale = 1 / np.sqrt(Q.shape[1]) if scale is None else scale
    assert r.scale == expected_scale and r.temperature == temperature
    np.testing.assert_allclose(r.scaled, r.scores * expected_scale / temperature, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(r.additive_mask, np.where(mask, 0.0, -np.inf))
    np.testing.assert_array_equal(r.masked, r.scaled + r.additive_mask)
    np.testing.assert_allclose(r.weights, ac.softmax(r.masked), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.output, r.weights @ V, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(qkv_mask())
def test_inputs_are_never_modified(data):
    Q, K, V, mask = data
    copies = [M.copy() for M in (Q, K, V, mask)]
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask)
    r.weights[...] = 7.0  # even writing into a result leaves the caller's arrays alone
    for before, after in zip(copies, (Q, K, V, mask), strict=True):
        np.testing.assert_array_equal(before, after)


@SETTINGS
@given(embeddings_and_head(), st.data())
def test_multi_head_attention_neither_modifies_nor_shares_its_inputs(data, draw):
    X_q, X_kv, head, mask = data
    W_o = draw.draw(matrix(head.W_v.shape[1], 3))
    inputs = [M for M in (X_q, X_kv, head.W_q, head.W_k, head.W_v, head.b_q, head.b_k, head.b_v, W_o) if M is not None]
    copies = [M.copy() for M in inputs]
    result = ac.multi_head_attention(X_q, X_kv, heads=[head], W_o=W_o, mask=mask)
    r = result.heads[0]
    outputs = [result.concat, result.output, r.Q, r.K, r.V, r.weights, r.output, r.scores, r.masked]
    for M in outputs:
        M[...] = 0.0  # a caller scribbling on the result ...
    for before, after in zip(copies, inputs, strict=True):
        np.testing.assert_array_equal(before, after)  # ... leaves every input as it was
        assert not any(np.shares_memory(after, M) for M in outputs)


@SETTINGS
@given(matrix(4, 6, st.floats(-1e300, 1e300)))
def test_softmax_of_huge_scores_has_no_nan(x):
    w = ac.softmax(x)
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)


def test_softmax_of_1e200_scores():
    w = ac.softmax(np.array([[1e200, 0.0], [1e200, 1e200], [-1e200, 1e200], [1e200, 1e200 * (1 - 1e-15)]]))
    assert not np.isnan(w).any()
    np.testing.assert_allclose(w[:3], [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]], atol=0)
    assert w[3, 0] == 1.0  # a gap of ~1e185 between the two scores: all weight on the larger


def test_attention_with_scores_of_1e200_has_no_nan():
    r = ac.scaled_dot_product_attention([[1e100]], [[1e100], [0.0], [-1e100]], [[1.0], [2.0], [3.0]], scale=1.0)
    assert r.scores[0, 0] == 1e200
    np.testing.assert_array_equal(r.weights, [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(r.output, [[1.0]])


def test_an_all_minus_inf_row_gives_zeros():
    w = ac.softmax(np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]]))
    np.testing.assert_array_equal(w[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(w[1], [1 / (1 + np.e), 0.0, np.e / (1 + np.e)], rtol=1e-15)
    np.testing.assert_array_equal(ac.softmax(np.full(4, -np.inf)), np.zeros(4))  # 1-D slice too
    blocked = ac.scaled_dot_product_attention(
        np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)), mask=[[False] * 3, [True, False, True]]
    )
    np.testing.assert_array_equal(blocked.weights[0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(blocked.output[0], [0.0])
    np.testing.assert_allclose(blocked.weights[1], [0.5, 0.0, 0.5])


def test_softmax_gives_plus_inf_entries_all_the_weight():
    np.testing.assert_array_equal(
        ac.softmax(np.array([[np.inf, 0.0, np.inf], [1.0, np.inf, -np.inf]])), [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]
    )


@SETTINGS
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 5), st.integers(1, 7)),
        elements=st.floats(-1e300, 1e300) | st.just(-np.inf),
    )
)
def test_softmax_divides_the_exponentials_of_the_row_minus_its_maximum(x):
    """The taught formula, on every row: m = max x, exps = e^(x - m) (largest term e^0 = 1), softmax = exps / sum."""
    m, exps, total = softmax_terms(x)
    np.testing.assert_array_equal(m[:, 0], x.max(axis=1))
    open_rows = ~np.isneginf(m[:, 0])
    assert np.all(exps[open_rows].max(axis=1) == 1.0)
    assert np.all(exps[np.isneginf(x)] == 0.0) and np.all(total[~open_rows] == 0.0)
    w = ac.softmax(x)
    np.testing.assert_array_equal(w[open_rows], exps[open_rows] / total[open_rows])
    assert np.all(w[~open_rows] == 0.0) and np.all(w[np.isneginf(x)] == 0.0)


@SETTINGS
@given(matrix(4, 6, st.floats(-50, 50)))
def test_softmax_equals_the_unshifted_formula_where_that_does_not_overflow(x):
    """e^x / sum e^x, the textbook formula without the shift, is the same function for moderate scores."""
    plain = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(ac.softmax(x), plain, rtol=1e-12, atol=1e-300)


def test_causal_mask_is_lower_triangular_and_rectangular_when_asked():
    np.testing.assert_array_equal(ac.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(ac.causal_mask(2, 4), [[1, 0, 0, 0], [1, 1, 0, 0]])
    assert ac.causal_mask(3).dtype == bool
