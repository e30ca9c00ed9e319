"""attention_backward and projection_backward against central finite differences of the forward pass."""

from __future__ import annotations

import numpy as np
import pytest

import attention_core as ac
from attention_core.exercises import EDIT_W

H = 1e-5  # finite-difference step
TOLERANCE = 1e-6  # relative error allowed between the formulas and the finite differences


def numeric_gradient(f, arrays: list[np.ndarray], which: int) -> np.ndarray:
    """(f(A + h e_ij) - f(A - h e_ij)) / 2h for every entry of arrays[which], the others held fixed."""
    grad = np.zeros_like(arrays[which])
    for idx in np.ndindex(grad.shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[which][idx] += H
        down[which][idx] -= H
        grad[idx] = (f(*up) - f(*down)) / (2 * H)
    return grad


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """max |a - n| / max(max |a|, max |n|, 1e-3): relative, with a floor so exact zeros compare absolutely."""
    return float(np.max(np.abs(analytic - numeric)) / max(np.max(np.abs(analytic)), np.max(np.abs(numeric)), 1e-3))


def random_mask(rng: np.random.Generator, n_q: int, n_k: int, kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "causal":
        return ac.causal_mask(n_q, n_k)
    if kind == "alibi":  # an additive float mask that is a bias, not only 0 / -inf
        return ac.alibi_bias(n_q, n_k, 0.5) + np.where(ac.causal_mask(n_q, n_k), 0.0, -np.inf)
    mask = rng.random((n_q, n_k)) < 0.6
    mask[0] = False  # a fully masked row
    mask[:, -1] = False  # a key nobody may attend
    return mask


def attention_case(seed: int):
    """A random (Q, K, V, dO, options) with n_q != n_k on most seeds and every mask kind, scale and temperature."""
    rng = np.random.default_rng(seed)
    n_q, n_k, d_k, d_v = (int(v) for v in rng.integers(1, 7, size=4))
    kind = ("none", "causal", "random", "alibi")[seed % 4]
    n_k = max(n_k, 2) if kind == "random" else n_k
    options = {
        "mask": random_mask(rng, n_q, n_k, kind),
        "scale": (None, 1.0, float(rng.uniform(0.1, 2)))[seed % 3],
        "temperature": float(rng.choice([1.0, 0.5, 3.0])),
    }
    Q, K = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k))
    V, dO = rng.normal(size=(n_k, d_v)), rng.normal(size=(n_q, d_v))
    return Q, K, V, dO, options


def assert_matches_finite_differences(Q, K, V, dO, options, label: str) -> None:
    def loss(Q, K, V):  # L = sum(O * dO), so dL/dO = dO
        return float(np.sum(ac.scaled_dot_product_attention(Q, K, V, **options).output * dO))

    grads = ac.attention_backward(Q, K, V, dO, **options)
    for i, name in enumerate(("dQ", "dK", "dV")):
        numeric = numeric_gradient(loss, [Q, K, V], i)
        err = relative_error(grads[i], numeric)
        assert err <= TOLERANCE, f"{label}: {name} relative error {err:.2e}\nformula:\n{grads[i]}\nnumeric:\n{numeric}"


@pytest.mark.parametrize("seed", range(40))
def test_attention_backward_matches_finite_differences(seed):
    Q, K, V, dO, options = attention_case(seed)
    assert_matches_finite_differences(Q, K, V, dO, options, f"seed {seed}")


def test_the_random_cases_cover_what_they_claim():
    cases = [attention_case(s) for s in range(40)]
    assert sum(Q.shape[0] != K.shape[0] for Q, K, *_ in cases) >= 25
    assert {type(c[4]["mask"]).__name__ for c in cases} == {"NoneType", "ndarray"}
    assert {c[4]["temperature"] for c in cases} == {0.5, 1.0, 3.0}
    assert any(c[4]["scale"] is None for c in cases) and any(c[4]["scale"] not in (None, 1.0) for c in cases)


def test_masked_keys_and_fully_masked_rows_get_exactly_zero_gradient():
    rng = np.random.default_rng(1)
    Q, K, V, dO = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    mask = ac.causal_mask(4, 5)  # key 4 is later than every query: nobody may attend it
    mask[2] = False  # query 2 may attend nothing
    dQ, dK, dV = ac.attention_backward(Q, K, V, dO, mask=mask)
    assert np.all(dK[4] == 0) and np.all(dV[4] == 0)
    assert np.all(dQ[2] == 0)
    assert np.all(ac.scaled_dot_product_attention(Q, K, V, mask=mask).output[2] == 0)  # as in the forward
    assert np.abs(dQ[[0, 1, 3]]).max() > 0 and np.abs(dK[:4]).max() > 0  # the others do learn


def test_scale_and_temperature_enter_as_one_factor():
    rng = np.random.default_rng(2)
    Q, K, V, dO = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    a = ac.attention_backward(Q, K, V, dO, scale=1.0, temperature=2.0)
    b = ac.attention_backward(Q, K, V, dO, scale=0.5)
    c = ac.attention_backward(Q, K, V, dO)  # default scale 1/sqrt(4) = 0.5
    for x, y, z in zip(a, b, c, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(y, z, rtol=1e-12, atol=1e-15)


def projection_case(seed: int):
    rng = np.random.default_rng(100 + seed)
    n_q, n_k, d_model, d_k, d_v = (int(v) for v in rng.integers(1, 6, size=5))
    X = rng.normal(size=(n_q, d_model))
    X_kv = None if seed % 2 else rng.normal(size=(n_k, d_model))  # odd seeds: self-attention
    n_k = n_q if X_kv is None else n_k
    Ws = [rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v)]
    options = {"mask": ac.causal_mask(n_q, n_k) if seed % 3 == 0 else None, "temperature": 1.5}
    return X, X_kv, Ws, rng.normal(size=(n_q, d_v)), options


@pytest.mark.parametrize("seed", range(12))
def test_projection_backward_matches_finite_differences(seed):
    X, X_kv, Ws, dO, options = projection_case(seed)
    X_kv_or_X = X if X_kv is None else X_kv

    def loss(W_q, W_k, W_v):
        out = ac.scaled_dot_product_attention(X @ W_q, X_kv_or_X @ W_k, X_kv_or_X @ W_v, **options).output
        return float(np.sum(out * dO))

    grads = ac.projection_backward(X, *Ws, dO, X_kv=X_kv, **options)
    for i, name in enumerate(("dW_q", "dW_k", "dW_v")):
        assert grads[i].shape == Ws[i].shape
        err = relative_error(grads[i], numeric_gradient(loss, Ws, i))
        assert err <= TOLERANCE, f"seed {seed}: {name} relative error {err:.2e}"


def exercise_heads():
    """Every head of every exercise at its start and its worked solution: (label, ex, tables, h)."""
    for eid in ac.list_exercises():
        ex = ac.load_exercise(eid)
        for which in ("start", "solution"):
            for h in range(ex.n_heads):
                yield pytest.param(ex, getattr(ex, which), h, id=f"{eid}-{which}-head{h}")


@pytest.mark.parametrize(("ex", "tables", "h"), list(exercise_heads()))
def test_backward_on_every_exercise_setup(ex, tables, h):
    rng = np.random.default_rng(7)
    q_name, k_name = ex.head_tables(h)
    n = len(ex.tokens)
    if ex.edits == EDIT_W:  # the chain to W_q and W_k over the exercise's fixed X
        W_v = rng.normal(size=(ex.X.shape[1], 3))
        Ws, dO = [tables[q_name], tables[k_name], W_v], rng.normal(size=(n, 3))

        def loss(W_q, W_k, W_v):
            return float(np.sum(ac.scaled_dot_product_attention(ex.X @ W_q, ex.X @ W_k, ex.X @ W_v).output * dO))

        grads = ac.projection_backward(ex.X, *Ws, dO)
        for i in range(3):
            assert relative_error(grads[i], numeric_gradient(loss, Ws, i)) <= TOLERANCE
    else:
        Q, K = tables[q_name], tables[k_name]
        assert_matches_finite_differences(Q, K, rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), {}, ex.id)


def test_wrong_shapes_are_named():
    Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5))
    with pytest.raises(ac.AttentionInputError, match=r"dO has shape \(4, 5\).*\(2, 5\)"):
        ac.attention_backward(Q, K, V, np.ones((4, 5)))
    with pytest.raises(ac.AttentionInputError, match="mask has shape"):
        ac.attention_backward(Q, K, V, np.ones((2, 5)), mask=np.ones((2, 3), dtype=bool))
    X = np.ones((2, 3))
    with pytest.raises(ac.AttentionInputError, match="W_k has 2 rows but X has 3 columns"):
        ac.projection_backward(X, np.ones((3, 2)), np.ones((2, 2)), np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(ac.AttentionInputError, match="same width d_k"):
        ac.projection_backward(X, np.ones((3, 2)), np.ones((3, 1)), np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(ac.AttentionInputError, match="X has 3 columns but X_kv has 4"):
        ac.projection_backward(X, *[np.ones((3, 2))] * 3, np.ones((2, 2)), X_kv=np.ones((5, 4)))


def test_backward_never_modifies_its_inputs():
    Q, K, V, dO, options = attention_case(3)
    before = [a.copy() for a in (Q, K, V, dO)]
    ac.attention_backward(Q, K, V, dO, **options)
    for a, b in zip((Q, K, V, dO), before, strict=True):
        np.testing.assert_array_equal(a, b)
