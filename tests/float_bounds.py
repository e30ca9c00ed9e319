r"""How far apart two float32 results may be: bounds from float32's precision and the sizes involved.

Two float32 evaluations of the same formula differ when their sums run in another order or blocking
(another BLAS kernel, AVX-512 against AVX2, a batch of 31 rows against one row). Every float32
comparison in the tests states its bound through this module, from:

* the **unit roundoff** ``U = eps / 2 = 2**-24`` (``eps = np.finfo(np.float32).eps``): one correctly
  rounded operation (+, -, *, /, sqrt) is off by at most ``U`` relative;
* NumPy's float32 ``exp`` and ``log`` are off by at most :data:`ELEMENTARY_ULPS` ulp (the tolerance in
  NumPy's own ``umath-validation-set-exp.csv`` / ``-log.csv``), each ulp ``<= eps`` relative;
* a **sum of n terms** ``s = x_1 + ... + x_n`` (a dot product: ``x_i = a_i b_i``) in *any* order and
  blocking obeys Higham's worst case (Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1, §4.2)

  .. math:: |\hat s - s| \le \gamma_n \sum_i |x_i|, \qquad \gamma_n = \frac{nU}{1 - nU};

  for the long sums of a real model (n = 576 .. 1536) that worst case is ~n times what rounding does, so
  those use Higham & Mary's probabilistic bound (SIAM J. Sci. Comput. 41(5), 2019, Thm 2.4): with
  rounding errors independent and of mean zero,

  .. math:: |\hat s - s| \le \tilde\gamma_n(\lambda) \sum_i |x_i|, \qquad
            \tilde\gamma_n(\lambda) = \exp\!\big(\lambda\sqrt n\,U + \tfrac{nU^2}{1-U}\big) - 1
            \approx \lambda\sqrt n\,U

  holds with probability at least ``1 - 2n exp(-lambda**2 (1-U)**2 / 2)``; :data:`LAMBDA` = 8 makes that
  failure ``< 3e-14 n`` for one sum, under 1e-6 across all the sums a test compares;
* **softmax** ``p = exp(z - logsumexp z)``: if each logit moves by at most ``dz_j``, each log-probability
  moves by at most ``dz_v + max_j dz_j`` (logsumexp is 1-Lipschitz in the max norm), so probabilities are
  compared as **log-probabilities** (a relative bound: ``|dp_v| / p_v <= e**b - 1``), never with one absolute
  tolerance for 0.92 and 1e-9 alike;
* **deep float32 computations** (30 layers), where no useful forward bound exists: the *reference side*
  measured its own error, Hugging Face's float32 run against the same run in float64, and stored the largest
  one per kind of number with the reference numbers (``float32_error`` in tests/data/smollm2_reference.npz's
  meta, written by scripts/make_model_reference.py). Any two float32 evaluations (ours, another kernel, theirs)
  are independent draws of such an error; :func:`stored_spread` allows :data:`SPREAD` times the stored ceiling,
  :func:`relative_spread` the same relative to each entry. The code under test never measures its own
  tolerance: a defect that only touches the float32 path (a residual rounded to float16) cannot widen it.

Comparisons of float64 results (seed numbers, bit-for-bit equalities) do not come through here.
"""

from __future__ import annotations

import math

import numpy as np

EPS = float(np.finfo(np.float32).eps)  # 2**-23: the gap between 1 and the next float32
U = EPS / 2  # unit roundoff: one correctly rounded float32 operation is off by at most U relative
ELEMENTARY_ULPS = 3  # NumPy's float32 exp/log: at most 3 ulp (its umath-validation-set-exp.csv, -log.csv)
LAMBDA = 8.0  # probabilistic bounds: failure below 2 n exp(-32) < 3e-14 n per sum
SPREAD = 4.0  # two independent draws of an error e: |e_1 - e_2| <= sqrt(2) max|e| typically; 4 leaves ~3x


def gamma(n: int) -> float:
    r"""Higham's ``gamma_n = nU / (1 - nU)``: a sum of ``n`` float32 terms in any order is within ``gamma_n``
    times the sum of their absolute values (a dot product of length ``n``: ``gamma_n`` times ``|a| @ |b|``)."""
    if n * U >= 1:
        raise ValueError(f"gamma_n needs n U < 1, got n = {n}")
    return n * U / (1 - n * U)


def probable_gamma(n: int, lam: float = LAMBDA) -> float:
    """Higham & Mary's ``gamma~_n(lambda) = exp(lambda sqrt(n) U + n U^2 / (1 - U)) - 1`` (~ lambda sqrt(n) U)."""
    return math.expm1(lam * math.sqrt(n) * U + n * U * U / (1 - U))


def dot_bound(a_abs: np.ndarray, b_abs: np.ndarray, *, probable: bool = True) -> np.ndarray:
    """Bound on the float32 rounding error of ``a @ b`` given ``|a|`` and ``|b|``: ``g(n) * (|a| @ |b|)`` in float64,
    ``g`` :func:`probable_gamma` (default) or :func:`gamma` (every order, worst case); ``n = a.shape[-1]``."""
    n = np.shape(a_abs)[-1]
    magnitude = np.abs(np.asarray(a_abs, dtype=np.float64)) @ np.abs(np.asarray(b_abs, dtype=np.float64))
    return (probable_gamma(n) if probable else gamma(n)) * magnitude


def sum_bound(x: np.ndarray, axis: int = -1, *, probable: bool = False) -> np.ndarray:
    """Bound on the float32 rounding error of ``x.sum(axis)`` in any order: ``g(n - 1) * sum |x|``."""
    x = np.asarray(x, dtype=np.float64)
    n = max(x.shape[axis] - 1, 1)
    return (probable_gamma(n) if probable else gamma(n)) * np.abs(x).sum(axis=axis)


def logprob_bound(logit_bound: np.ndarray) -> np.ndarray:
    """Bound on ``|d log softmax(z)_v|`` when each logit ``z_j`` moves by at most ``logit_bound_j``, (..., vocab):
    ``logit_bound_v + max_j logit_bound_j`` (log-sum-exp moves by at most the largest logit move)."""
    b = np.asarray(logit_bound, dtype=np.float64)
    return b + b.max(axis=-1, keepdims=True)


def softmax_rounding(n: int) -> float:
    """Relative rounding of a float32 softmax of ``n`` entries computed from exact inputs: the max and the
    subtraction exact-ish (one rounding), ``exp`` (ELEMENTARY_ULPS ulp), the sum of ``n`` (``gamma_{n-1}``),
    the division (one rounding)."""
    return 2 * U + ELEMENTARY_ULPS * EPS + gamma(max(n - 1, 1))


def scores_bound(Q: np.ndarray, K: np.ndarray, scale: float) -> np.ndarray:
    """Bound on float32 scores ``scale Q @ K.T`` (..., n_q, n_k) from float64 ``Q, K (..., n, d)`` rounded to float32:
    each input rounded (2U), a dot product of d terms (``gamma_d``), the scale (U), all times ``|Q| @ |K|.T``."""
    d = np.shape(Q)[-1]
    magnitude = np.abs(np.asarray(Q, dtype=np.float64)) @ np.swapaxes(np.abs(np.asarray(K, dtype=np.float64)), -1, -2)
    return (3 * U + gamma(d)) * abs(scale) * magnitude


def softmax_weights_bound(score_bound: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Bound on ``|w32 - w|`` for softmax weights ``weights (..., n_k)`` whose scores moved by at most ``score_bound``:
    relative ``e^(ds_j + max ds) - 1`` (softmax), plus the float32 softmax's own rounding; 0 where ``w`` is 0."""
    w = np.asarray(weights, dtype=np.float64)
    ds = np.where(w > 0, score_bound, 0.0)  # a masked entry is exactly 0 in both
    return (np.expm1(ds + ds.max(axis=-1, keepdims=True)) + softmax_rounding(w.shape[-1])) * w


def stored_spread(ceiling: float) -> float:
    """Allowed distance between two float32 evaluations of a number whose float32 error the reference side stored
    as at most ``ceiling`` (one evaluation against float64): :data:`SPREAD` times it."""
    return SPREAD * float(ceiling)


def relative_spread(ceiling: float, expected: np.ndarray) -> np.ndarray:
    """:func:`stored_spread` per entry for numbers whose float32 error is relative (softmax weights: a logit's move
    moves a weight by a share of itself): ``SPREAD * ceiling * |expected|``, 0 where ``expected`` is 0."""
    return SPREAD * float(ceiling) * np.abs(np.asarray(expected, dtype=np.float64))


def _report(what: str, actual: np.ndarray, expected: np.ndarray, diff: np.ndarray, bound: np.ndarray) -> str:
    ratio = diff / np.where(bound > 0, bound, np.finfo(np.float64).tiny)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.ndim else ()
    return (
        f"{what}: {int(np.count_nonzero(diff > bound))} of {diff.size} entries beyond the float32 bound; worst at "
        f"{tuple(int(i) for i in worst)}: {actual[worst]!r} vs {expected[worst]!r}, off by {diff[worst]:.3g} "
        f"against a bound of {bound[worst]:.3g} ({ratio[worst]:.3g} x the bound); largest difference "
        f"{diff.max():.3g}"
    )


def assert_within(actual, expected, bound, what: str) -> None:
    """``|actual - expected| <= bound`` entry by entry (a scalar expected or bound broadcast); the message names
    the worst entry."""
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    expected = np.broadcast_to(expected, actual.shape) if expected.ndim == 0 else expected  # one expected value
    assert actual.shape == expected.shape, f"{what}: shapes {actual.shape} and {expected.shape}"
    with np.errstate(invalid="ignore"):  # inf - inf: compared by value below
        diff = np.abs(actual - expected)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), diff.shape)
    finite = np.isfinite(actual)
    assert np.array_equal(finite, np.isfinite(expected)), f"{what}: not finite in the same places"
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))  # -inf is -inf, nan is nan
    assert np.all(same | finite), f"{what}: {int(np.count_nonzero(~(same | finite)))} non-finite entries differ"
    diff = np.where(finite, diff, 0.0)
    assert np.all(diff <= bound), _report(what, actual, expected, diff, bound)


def assert_logprobs_within(p, q, bound, what: str) -> None:
    """Probabilities compared as log-probabilities: ``|log p - log q| <= bound`` (a relative bound on p)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    assert np.all(p > 0) and np.all(q > 0), f"{what}: a probability is not positive"
    assert_within(np.log(p), np.log(q), bound, f"{what} (log-probabilities)")
