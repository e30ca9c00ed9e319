"""The fast paths against plain references: heads of one width run as one stack (attend_stack), and
the in-place softmax runs large arrays in row blocks."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac
from attention_core.softmax import softmax_rows_inplace

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


def assert_matches_reference(result, reference, concat):
    for i, (r, ref) in enumerate(zip(result.heads, reference, strict=True)):
        for name in ("Q", "K", "V", "scores", "scaled", "additive_mask", "masked", "mask", "weights", "output"):
            np.testing.assert_allclose(
                getattr(r, name), getattr(ref, name), rtol=1e-12, atol=1e-12, err_msg=f"head {i} {name}"
            )
        assert r.scale == ref.scale and r.temperature == ref.temperature
        np.testing.assert_allclose(r.weights, ac.softmax(r.masked), rtol=1e-12, atol=1e-12, err_msg=f"head {i}")
        np.testing.assert_allclose(r.output, r.weights @ r.V, rtol=1e-12, atol=1e-12, err_msg=f"head {i}")
    np.testing.assert_allclose(result.concat, concat, rtol=1e-12, atol=1e-12)


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
def test_heads_of_one_width_as_a_stack_equal_each_head_alone(case):
    X_q, X_kv, heads, mask, scale, temperature = case
    result = ac.multi_head_attention(X_q, X_kv, heads=heads, mask=mask, scale=scale, temperature=temperature)
    reference, concat = per_head_reference(X_q, X_kv, heads, mask, scale, temperature)
    assert_matches_reference(result, reference, concat)


def test_a_larger_stack_with_a_causal_mask_and_biases_equals_each_head_alone():
    rng = np.random.default_rng(7)
    n, d_model, n_heads = 300, 48, 6  # 6 x 300 x 300 weights: several softmax blocks per head
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


def test_scores_too_large_for_the_stack_fall_back_and_name_the_entry():
    heads = ac.split_heads(np.full((2, 4), 1e155), np.full((2, 4), 1e155), np.ones((2, 4)), 2)
    with pytest.raises(ac.AttentionInputError, match="Q @ K.T overflowed at query row 0, key column 0"):
        ac.multi_head_attention(np.ones((3, 2)), heads=heads)


def test_huge_but_finite_scores_in_a_stack_still_give_clean_weights():
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
    inputs = [rng.standard_normal((260, 16)) for _ in range(6)]  # 4 x 260 x 260 > one softmax block
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


def rows_with_every_kind(rng: np.random.Generator, shape: tuple[int, ...], plus_inf: bool = True) -> np.ndarray:
    """Random scores with some rows beyond +-300, some with -inf (or +inf) entries, some all -inf."""
    x = rng.standard_normal(shape) * 5
    flat = x.reshape(-1, shape[-1])
    flat[::7] += 1e3
    flat[3::11] -= 1e3
    flat[1::13, ::3] = -np.inf
    flat[2::17] = -np.inf
    if plus_inf:
        flat[4::19, 1] = np.inf
    return x


@pytest.mark.parametrize("shape", [(3, 5), (2, 40, 30), (3, 700, 500), (1, 2, 100_000)])
@pytest.mark.parametrize("with_mask", [False, True])
def test_the_in_place_softmax_of_a_stack_in_blocks_matches_softmax(shape, with_mask):
    """One block, several blocks, rows longer than a block; +inf entries only without a mask (+inf - inf
    has no softmax)."""
    rng = np.random.default_rng(sum(shape))
    x = rows_with_every_kind(rng, shape, plus_inf=not with_mask)  # scores are finite where a mask is added
    add = np.where(rng.random(shape[-2:]) < 0.7, 0.0, -np.inf) if with_mask else None
    expected = ac.softmax(x if add is None else x + add, axis=-1)
    got = softmax_rows_inplace(x, None, add)
    assert got is x
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    if with_mask:
        assert np.all(got[..., np.isneginf(add)] == 0.0)


def test_the_in_place_softmax_writes_into_a_non_contiguous_view():
    rng = np.random.default_rng(4)
    base = rng.standard_normal((6, 8))
    view = base[:, ::2]  # (6, 4), not contiguous: goes through the block path
    expected = ac.softmax(view.copy(), axis=-1)
    softmax_rows_inplace(view)
    np.testing.assert_allclose(base[:, ::2], expected, rtol=1e-12)


@SETTINGS
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(1, 7)),
        elements=st.floats(-1e300, 1e300) | st.just(-np.inf),
    ),
    st.data(),
)
def test_the_in_place_softmax_of_a_stack_with_a_mask_matches_softmax(x, data):
    add = data.draw(arrays(np.float64, x.shape[1:], elements=st.just(0.0) | st.just(-np.inf) | FINITE))
    with np.errstate(invalid="ignore"):
        expected = ac.softmax(x + add, axis=-1)
    np.testing.assert_allclose(softmax_rows_inplace(x, None, add), expected, rtol=1e-12, atol=1e-300)
