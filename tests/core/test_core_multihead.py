"""Multi-head attention is a loop of single-head attentions, and every stage in a result is the array
that was computed (not a recomputation); softmax on stacks, huge scores, masks and +inf."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac
from tests.float_bounds import U, assert_within, gamma, scores_bound, softmax_weights_bound

SETTINGS = settings(deadline=None, max_examples=100)  # deadline off: the test machine is shared
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def per_head_reference(X_q, X_kv, heads, mask=None, scale=None, temperature=1.0):
    """Each head on its own through scaled_dot_product_attention, concatenated: the gold for multi-head."""
    X_k = X_q if X_kv is None else X_kv
    results = []
    for h in heads:
        Q, K, V = (
            X @ W + (0.0 if b is None else b)
            for X, W, b in ((X_q, h.W_q, h.b_q), (X_k, h.W_k, h.b_k), (X_k, h.W_v, h.b_v))
        )
        results.append(ac.scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature))
    return results, np.concatenate([r.output for r in results], axis=1)


STAGES = ("Q", "K", "V", "scores", "scaled", "additive_mask", "masked", "mask", "weights", "output")


def assert_matches_reference(result, reference, concat):
    """Equal bit for bit: multi_head_attention runs exactly these single-head calls, one per head."""
    for i, (r, ref) in enumerate(zip(result.heads, reference, strict=True)):
        for name in STAGES:
            np.testing.assert_array_equal(getattr(r, name), getattr(ref, name), err_msg=f"head {i} {name}")
        assert r.scale == ref.scale and r.temperature == ref.temperature
        assert_stages_are_the_formula(r, f"head {i}")
    np.testing.assert_array_equal(result.concat, concat)


def assert_stages_are_the_formula(r, where=""):
    """Each stored stage is exactly the formula applied to the previous stored stage: what is shown is what ran."""
    np.testing.assert_array_equal(r.scores, r.Q @ r.K.T, err_msg=f"{where} scores")
    np.testing.assert_array_equal(r.scaled, r.scores * (r.scale / r.temperature), err_msg=f"{where} scaled")
    np.testing.assert_array_equal(r.masked, r.scaled + r.additive_mask, err_msg=f"{where} masked")
    np.testing.assert_array_equal(r.weights, ac.softmax(r.masked), err_msg=f"{where} weights")
    np.testing.assert_array_equal(r.output, r.weights @ r.V, err_msg=f"{where} output")
    np.testing.assert_array_equal(r.mask, ~np.isneginf(r.additive_mask), err_msg=f"{where} mask")


@st.composite
def split_case(draw):
    """Embeddings, full projections cut into equal heads (with or without biases), a mask, a scale."""
    n_q, n_k, d_model, n_heads, d_head = (draw(st.integers(1, 5)) for _ in range(5))
    cross = draw(st.booleans())
    n_k = n_k if cross else n_q
    Ws = [draw(arrays(np.float64, (d_model, n_heads * d_head), elements=FINITE)) for _ in range(3)]
    bs = [draw(st.none() | arrays(np.float64, n_heads * d_head, elements=FINITE)) for _ in range(3)]
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_k)))
    if mask is not None and draw(st.booleans()):
        mask = np.where(mask, 0.0, -np.inf)  # the seeds' additive form
    X_q = draw(arrays(np.float64, (n_q, d_model), elements=FINITE))
    X_kv = draw(arrays(np.float64, (n_k, d_model), elements=FINITE)) if cross else None
    scale = draw(st.none() | st.floats(-3, 3))
    return X_q, X_kv, ac.split_heads(*Ws, n_heads, *bs), mask, scale, draw(st.floats(0.1, 10))


@SETTINGS
@given(split_case())
def test_heads_of_one_width_equal_each_head_alone(case):
    X_q, X_kv, heads, mask, scale, temperature = case
    result = ac.multi_head_attention(X_q, X_kv, heads=heads, mask=mask, scale=scale, temperature=temperature)
    reference, concat = per_head_reference(X_q, X_kv, heads, mask, scale, temperature)
    assert_matches_reference(result, reference, concat)


def test_many_tokens_with_a_causal_mask_and_biases_equal_each_head_alone():
    rng = np.random.default_rng(7)
    n, d_model, n_heads = 300, 48, 6
    Ws = [rng.standard_normal((d_model, d_model)) for _ in range(3)]
    bs = [rng.standard_normal(d_model) for _ in range(3)]
    heads = ac.split_heads(*Ws, n_heads, *bs)
    X = rng.standard_normal((n, d_model))
    mask = ac.causal_mask(n)
    mask[5] = False  # a query that may attend nothing
    result = ac.multi_head_attention(X, heads=heads, mask=mask, temperature=0.7)
    reference, concat = per_head_reference(X, None, heads, mask, None, 0.7)
    assert_matches_reference(result, reference, concat)
    assert np.all(result.heads[2].weights[5] == 0.0) and np.all(result.heads[2].output[5] == 0.0)


def test_selection_heads_of_different_widths_equal_each_head_alone():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 8))
    heads = [ac.selection_head(dims, 8, f"h{i}") for i, dims in enumerate([[2], [1, 3], [4, 6, 7], [2, 5]])]
    heads.append(
        ac.Head(
            rng.standard_normal((8, 3)),
            rng.standard_normal((8, 3)),
            rng.standard_normal((8, 5)),
            b_v=rng.standard_normal(5),
        )
    )  # d_k = 3 but d_v = 5
    mask = rng.random((40, 40)) < 0.8
    result = ac.multi_head_attention(X, heads=heads, mask=mask)
    reference, concat = per_head_reference(X, None, heads, mask)
    assert_matches_reference(result, reference, concat)
    assert result.concat.shape == (40, 1 + 2 + 3 + 2 + 5)


def test_each_head_output_is_its_column_block_of_the_concatenation():
    rng = np.random.default_rng(5)
    heads = ac.split_heads(*(rng.standard_normal((6, 12)) for _ in range(3)), 4)
    W_o = rng.standard_normal((12, 2))
    result = ac.multi_head_attention(rng.standard_normal((9, 6)), heads=heads, W_o=W_o)
    for i, r in enumerate(result.heads):
        np.testing.assert_array_equal(r.output, result.concat[:, 3 * i : 3 * i + 3])
    np.testing.assert_array_equal(result.output, result.concat @ W_o)


def test_scores_that_overflow_name_the_entry():
    heads = ac.split_heads(np.full((2, 4), 1e155), np.full((2, 4), 1e155), np.ones((2, 4)), 2)
    with pytest.raises(ac.AttentionInputError, match="Q @ K.T overflowed at query row 0, key column 0"):
        ac.multi_head_attention(np.ones((3, 2)), heads=heads)


def test_huge_but_finite_scores_still_give_clean_weights():
    heads = ac.split_heads(np.full((1, 2), 1e100), np.full((1, 2), 1e100), np.ones((1, 2)), 2)
    X = np.array([[1.0], [0.0], [-1.0]])
    result = ac.multi_head_attention(X, heads=heads, scale=1.0)
    reference, concat = per_head_reference(X, None, heads, None, 1.0)
    assert_matches_reference(result, reference, concat)
    np.testing.assert_array_equal(result.heads[0].weights[0], [1.0, 0.0, 0.0])


def test_calls_from_many_threads_give_the_same_independent_results():
    """A classroom server runs sessions in threads: no call may see another call's arrays."""
    rng = np.random.default_rng(11)
    heads = ac.split_heads(*(rng.standard_normal((16, 16)) for _ in range(3)), 4)
    inputs = [rng.standard_normal((260, 16)) for _ in range(6)]
    expected = [ac.multi_head_attention(X, heads=heads, mask=ac.causal_mask(260)) for X in inputs]
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda X: ac.multi_head_attention(X, heads=heads, mask=ac.causal_mask(260)), inputs * 3))
    for i, r in enumerate(got):
        e = expected[i % len(inputs)]
        np.testing.assert_array_equal(r.output, e.output)
        for rh, eh in zip(r.heads, e.heads, strict=True):
            np.testing.assert_array_equal(rh.weights, eh.weights)
    got[0].heads[0].weights[...] = 9.0  # scribbling on one result ...
    np.testing.assert_array_equal(got[len(inputs)].heads[0].weights, expected[0].heads[0].weights)  # ... not another


def test_a_projection_that_overflows_names_the_head_and_the_entry():
    heads = [ac.identity_head(2), ac.Head(np.full((2, 2), 1e308), np.ones((2, 2)), np.ones((2, 2)))]
    with pytest.raises(ac.AttentionInputError, match=r"head 1 Q = X @ W \+ b overflowed at row 0, column 0"):
        ac.multi_head_attention(np.full((3, 2), 10.0), heads=heads)


@SETTINGS
@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=FINITE),
    arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=FINITE),
    st.data(),
)
def test_every_stage_of_a_single_head_is_the_array_that_ran(Q, K, data):
    K = np.resize(K, (K.shape[0], Q.shape[1]))  # (n_k, d_k): as wide as Q
    V = data.draw(arrays(np.float64, (K.shape[0], 2), elements=FINITE))
    mask = data.draw(st.none() | arrays(np.bool_, (Q.shape[0], K.shape[0])))
    r = ac.scaled_dot_product_attention(Q, K, V, mask=mask, temperature=data.draw(st.floats(0.1, 10)))
    assert_stages_are_the_formula(r)


def reference_softmax_row(row: list[float]) -> list[float]:
    """Gold, in plain Python: a +inf row shares its weight among its +inf entries; an all -inf row is zeros;
    otherwise e^(x - max) / sum, summed with math.fsum."""
    if math.inf in row:
        return [1.0 / row.count(math.inf) if x == math.inf else 0.0 for x in row]
    top = max(row)
    if top == -math.inf:
        return [0.0] * len(row)
    exps = [math.exp(x - top) for x in row]
    total = math.fsum(exps)
    return [e / total for e in exps]


def rows_with_every_kind(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random scores with some rows near +-1e200, some with -inf or +inf entries, some all -inf."""
    x = rng.standard_normal(shape) * 5
    flat = x.reshape(-1, shape[-1])
    flat[::7] *= 1e199  # gaps of ~1e199: one key takes all the weight
    flat[3::11] -= 1e200  # all equal to -1e200 after rounding: uniform weights
    flat[5::7] *= 1e3
    flat[1::13, ::3] = -np.inf
    flat[2::17] = -np.inf
    flat[4::19, -1] = np.inf
    flat[6::19, ::2] = np.inf
    return x


@pytest.mark.parametrize("shape", [(3, 5), (2, 40, 30), (3, 7, 1), (1, 2, 500)])
def test_softmax_of_a_stack_is_each_row_against_a_plain_python_reference(shape):
    x = rows_with_every_kind(np.random.default_rng(sum(shape)), shape)
    got = ac.softmax(x, axis=-1)
    assert got.shape == x.shape and np.all(np.isfinite(got))
    for idx in np.ndindex(x.shape[:-1]):
        np.testing.assert_allclose(
            got[idx], reference_softmax_row(x[idx].tolist()), rtol=1e-13, atol=1e-300, err_msg=f"row {idx}: {x[idx]}"
        )


def test_softmax_along_the_first_axis_is_the_softmax_of_the_transpose():
    x = rows_with_every_kind(np.random.default_rng(2), (6, 40))
    np.testing.assert_array_equal(ac.softmax(x, axis=0), ac.softmax(x.T, axis=-1).T)


@SETTINGS
@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 7)), elements=st.floats(-1e300, 1e300)),
    st.data(),
)
def test_softmax_with_an_additive_mask_zeroes_the_blocked_keys_and_renormalises_the_rest(x, data):
    blocked = data.draw(arrays(np.bool_, x.shape))
    w = ac.softmax(x + np.where(blocked, -np.inf, 0.0))
    assert np.all(w[blocked] == 0.0) and np.all(np.isfinite(w))
    open_rows = ~blocked.all(axis=1)
    np.testing.assert_allclose(w[open_rows].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for i in np.flatnonzero(open_rows):  # the open keys' weights are the softmax of the open keys alone
        np.testing.assert_allclose(w[i, ~blocked[i]], ac.softmax(x[i, ~blocked[i]]), rtol=1e-12, atol=1e-300)


def test_runs_of_heads_of_one_shape_between_other_shapes_equal_each_head_alone():
    """Consecutive heads of one shape run as one stack, a change of width or of biases starts the next."""
    rng = np.random.default_rng(11)
    n, d_model = 20, 12

    def head(d_k, d_v, bias=False):
        W_q, W_k, W_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        return ac.Head(W_q, W_k, W_v, b_q=rng.standard_normal(d_k) if bias else None)

    heads = [head(2, 2), head(2, 2), head(3, 2), head(3, 2), head(3, 2), head(3, 2, bias=True), head(2, 2)]
    X = rng.standard_normal((n, d_model))
    result = ac.multi_head_attention(X, heads=heads, mask=ac.causal_mask(n), temperature=1.3)
    reference, concat = per_head_reference(X, None, heads, ac.causal_mask(n), None, 1.3)
    assert_matches_reference(result, reference, concat)


def test_heads_share_one_read_only_mask():
    heads = ac.split_heads(*(np.eye(4) for _ in range(3)), 2)
    result = ac.multi_head_attention(np.arange(12.0).reshape(3, 4) / 10, heads=heads, mask=ac.causal_mask(3))
    first, second = result.heads
    assert first.additive_mask is second.additive_mask and first.mask is second.mask
    for shared in (first.additive_mask, first.mask):
        with pytest.raises(ValueError, match="read-only"):
            shared[0, 0] = 0
    first.weights[...] = 7.0  # the stacked stages are each head's own: a scribble stays in its head
    assert not np.any(second.weights == 7.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_stages_on_a_batch_of_heads_is_each_slice_alone(dtype):
    """attention_stages runs leading axes (batch, heads) as one stack in the inputs' dtype; each slice is the
    2-D call on that slice, bit for bit."""
    rng = np.random.default_rng(1)
    Q, K, V = (rng.standard_normal((2, 3, n, 5)).astype(dtype) for n in (4, 6, 6))  # (batch, h, n, d)
    mask = ac.additive_mask(ac.causal_mask(4, 6))  # (n_q, n_k), float64: the scores' dtype wins
    stack = ac.attention.attention_stages(Q, K, V, mask, 0.5, 2.0)
    assert stack.weights.shape == (2, 3, 4, 6) and stack.output.shape == (2, 3, 4, 5)
    for name in ("scores", "scaled", "additive_mask", "masked", "weights", "output"):
        assert getattr(stack, name).dtype == dtype, name
    for b, i in np.ndindex(2, 3):
        alone = ac.attention.attention_stages(Q[b, i], K[b, i], V[b, i], mask, 0.5, 2.0)
        for name in ("scores", "scaled", "masked", "weights", "output"):
            np.testing.assert_array_equal(getattr(stack, name)[b, i], getattr(alone, name), err_msg=f"{b, i} {name}")
    np.testing.assert_array_equal(stack.mask, ac.causal_mask(4, 6))


def test_float32_weights_are_close_to_float64_weights():
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((4, 8, 16)) for _ in range(3))
    wide = ac.attention.attention_stages(Q, K, V, None, 0.25, 1.0)
    narrow = ac.attention.attention_stages(*(M.astype(np.float32) for M in (Q, K, V)), None, 0.25, 1.0)
    assert_within(
        narrow.weights, wide.weights, softmax_weights_bound(scores_bound(Q, K, 0.25), wide.weights), "weights"
    )
    # a float32 softmax row sums to 1 within its normaliser's sum and one division; the check's own sum adds gamma_7
    assert_within(narrow.weights.sum(axis=-1), 1.0, 2 * gamma(7) + U, "row sums")


def test_a_nan_in_a_later_head_of_a_stack_names_that_head_and_entry():
    W_v = np.ones((4, 2))
    W_v[2, 1] = np.nan
    heads = [ac.Head(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), name=f"h{i}") for i in range(2)]
    heads.append(ac.Head(np.ones((4, 2)), np.ones((4, 2)), W_v, name="h2"))  # one stack of three heads
    with pytest.raises(ac.AttentionInputError, match=r"head 2 \(h2\) W_v row 2, column 1 is NaN"):
        ac.multi_head_attention(np.ones((3, 4)), heads=heads)


def test_softmax_keeps_float32_makes_other_numbers_float64_and_leaves_its_input_alone():
    x = np.array([[1.0, 2.0, -np.inf]], dtype=np.float32)
    before = x.copy()
    assert ac.softmax(x).dtype == np.float32
    np.testing.assert_array_equal(x, before)
    assert ac.softmax(np.array([[1, 2, 3]])).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_stack_with_huge_scores_and_a_fully_masked_query_is_each_slice_alone(dtype):
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3))
    Q[0, 1, 2] = 1e30 if dtype == np.float32 else 1e200  # a row of huge scores
    mask = ac.additive_mask(rng.random((5, 5)) < 0.7)
    mask[3] = -np.inf  # a query that may attend nothing
    stack = ac.attention.attention_stages(Q, K, V, mask, 1.0, 1.0)
    assert np.all(stack.weights[..., 3, :] == 0.0) and np.all(np.isfinite(stack.weights))
    for b, i in np.ndindex(2, 3):
        alone = ac.attention.attention_stages(Q[b, i], K[b, i], V[b, i], mask, 1.0, 1.0)
        for name in ("scores", "scaled", "masked", "weights", "output"):
            assert getattr(stack, name).dtype == dtype
            np.testing.assert_array_equal(getattr(stack, name)[b, i], getattr(alone, name), err_msg=f"{b, i} {name}")


def test_heads_of_lists_or_integers_give_the_bits_of_float64_heads():
    """Float64 heads pass the checks as they are (multihead._ready); any other form is converted to the same."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(5, 4))
    ints = [rng.integers(-3, 4, size=(4, 2)) for _ in range(3)]
    bias = rng.integers(-2, 3, size=2)
    as_given = ac.Head(*(W.tolist() for W in ints), b_q=bias, b_v=bias.tolist(), name="typed")
    as_float = ac.Head(*(W.astype(np.float64) for W in ints), b_q=bias * 1.0, b_v=bias * 1.0, name="typed")
    a, b = (ac.multi_head_attention(X, heads=[h, h]) for h in (as_given, as_float))
    for name in STAGES:
        np.testing.assert_array_equal(getattr(a.heads[1], name), getattr(b.heads[1], name), err_msg=name)
    np.testing.assert_array_equal(a.output, b.output)
    wide = ac.Head(*(W.astype(np.float64) for W in ints), b_k=np.ones(3))  # a bias one entry too long
    with pytest.raises(ac.AttentionInputError, match="b_k has 3 entries but its matrix has 2 columns"):
        ac.multi_head_attention(X, heads=[wide])
