"""Gold numbers: every number the five seed notebooks print, reproduced to its printed precision.

The printed text is copied verbatim from ``/work/shared/seeds/<file>`` (cell named in each test)
and parsed here; a printed number ``x`` shown with ``p`` digits stands for any value within half a
unit of its last digit, so that is the tolerance (plus a relative 1e-12 for the order in which our
floating-point sums run). Each number is checked twice: from ``attention_core``'s public API and
from ``reference_attention`` below, a deliberately plain pure-Python implementation.

Only seed 001 prints rounded *inputs* (Q, K to 8-9 digits); its tolerances add the first-order
error those input roundings can cause, computed from the printed digits (see ``_propagated``).

Every matrix a notebook types (000's animals and values, 002's X and its heads' dimensions, 003's keys and
queries) is read from the notebook file itself (``SEEDS``: shared/seeds beside the repository, :func:`notebook`),
parsed as typed (:func:`typed`) and compared with the scenario exactly; the references are built from that text,
never from the scenario.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import attention_core as ac

SEED_000 = "000_68f6a7729c6e08bd.txt"
SEED_001 = "001_02856d891cb48197.txt"
SEED_002 = "002_02560aa648078fb2.txt"
SEED_003 = "003_772d8909e260d638.txt"
SEED_004 = "004_ab895bb7ebeb8173.txt"

SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"

_NUMBER = re.compile(r"[-+]?inf|nan|[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")


# --- helpers: printed text -> numbers and their precision --------------------------------------


def printed(text: str, decimals: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Numbers in NumPy-printed ``text`` and half a unit of their last printed digit, same shape.

    NumPy prints at most ``decimals`` fractional digits (8 by default) and drops trailing zeros,
    so ``1.`` in an 8-digit array means "1 to 8 decimals". In scientific notation the mantissa has
    ``decimals`` fractional digits: ``1.10228985e-13`` is good to 0.5e-21.
    """
    rows = [line for line in re.split(r"\]\s*,?\s*\n", text.strip()) if line.strip()]
    values, halves = [], []
    for row in rows:
        tokens = _NUMBER.findall(row.replace("array(", ""))
        values.append([float(t) for t in tokens])
        halves.append([_half_unit(t, decimals) for t in tokens])
    if len(values) == 1:
        return np.array(values[0]), np.array(halves[0])
    return np.array(values), np.array(halves)


def _half_unit(token: str, decimals: int) -> float:
    if "inf" in token or "nan" in token:
        return 0.0
    exponent = int(token.split("e")[1]) if "e" in token else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def assert_printed(actual: np.ndarray, text: str, where: str, decimals: int = 8, extra: object = 0.0) -> None:
    """``actual`` matches every number printed in ``text`` to its printed precision (+ ``extra``)."""
    shown, half = printed(text, decimals)
    actual = np.asarray(actual, dtype=float)
    assert actual.shape == shown.shape, f"{where}: shape {actual.shape}, the notebook printed {shown.shape}"
    infinite = np.isinf(shown)
    assert np.array_equal(actual[infinite], shown[infinite]), f"{where}: -inf entries differ"
    tol = half + np.asarray(extra) + 1e-12 * np.abs(shown)
    error = np.where(infinite, 0.0, np.abs(actual - np.where(infinite, 0.0, shown)))
    worst = np.unravel_index(np.argmax(error - tol), error.shape)
    assert np.all(error <= tol), (
        f"{where}: entry {tuple(int(i) for i in worst)} is {actual[worst]!r}, the notebook printed "
        f"{shown[worst]!r} (off by {error[worst]:.3g}, allowed {tol[worst]:.3g})"
    )


def notebook(seed: str, first: str, last: str | None = None) -> str:
    """The lines of notebook ``seed`` from the one reading ``first`` to the next one reading ``last`` (``first``'s
    own line when ``last`` is None), indentation aside."""
    path = SEEDS / seed
    assert path.is_file(), f"the seed notebook {path} is missing (shared/seeds beside the repository)"
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    assert first in lines, f"{seed}: no line reads {first!r}"
    start = lines.index(first)
    end = start if last is None else lines.index(last, start)
    return "\n".join(lines[start : end + 1])


def typed(source: str) -> dict[str, object]:
    """Each ``name = literal`` of notebook source text: ``np.array(x)`` read as ``x``, lists as float arrays, dicts
    kept as dicts (of arrays)."""

    class ArrayAsLiteral(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            assert ast.unparse(node.func) == "np.array" and len(node.args) == 1, ast.unparse(node)
            return self.visit(node.args[0])

    def arrays(value: object) -> object:
        if isinstance(value, dict):
            return {k: arrays(v) for k, v in value.items()}
        return np.array(value, dtype=float) if isinstance(value, list) else value

    out = {}
    for statement in ast.parse(textwrap.dedent(source)).body:
        (target,) = statement.targets
        out[target.id] = arrays(ast.literal_eval(ArrayAsLiteral().visit(statement.value)))
    return out


# --- the independent reference: plain Python, no NumPy arithmetic -------------------------------


def reference_attention(Q, K, V, scale: float, causal: bool = False) -> tuple[list, list, list]:
    """scores, weights, output of softmax(scale * Q K^T [+ causal mask]) V, one number at a time."""
    Q, K, V = (np.asarray(M, dtype=float).tolist() for M in (Q, K, V))
    all_scores, all_weights, outputs = [], [], []
    for i, q in enumerate(Q):
        scores = [math.fsum(a * b for a, b in zip(q, k, strict=True)) for k in K]
        allowed = [not causal or j <= i for j in range(len(K))]
        top = max(scale * s for s, ok in zip(scores, allowed, strict=True) if ok)
        exps = [math.exp(scale * s - top) if ok else 0.0 for s, ok in zip(scores, allowed, strict=True)]
        total = math.fsum(exps)
        weights = [e / total for e in exps]
        all_scores.append(scores)
        all_weights.append(weights)
        outputs.append([math.fsum(w * v[c] for w, v in zip(weights, V, strict=True)) for c in range(len(V[0]))])
    return all_scores, all_weights, outputs


def reference_multi_head(X, dims_per_head: list[list[int]]) -> list[tuple[list, list, list]]:
    """The apple/orange notebook's loop: each head projects onto its dims, then attends (1/sqrt(d))."""
    X = np.asarray(X, dtype=float).tolist()
    results = []
    for dims in dims_per_head:
        P = [[row[d] for d in dims] for row in X]  # X @ make_projection(dims), written out
        results.append(reference_attention(P, P, P, 1.0 / math.sqrt(len(dims))))
    return results


# --- 000: mammal and reptile query five animal keys ----------------------------------------------

TYPED_000 = [  # In [2]-[7], [14], [16]: (first line, last line)
    *(
        (f"{name} = np.array([{values}])", None)
        for name, values in [
            ("mammal", "8.7, 3.2, 4.1"),
            ("kitten", "9.1, 1.0, 2.1"),
            ("lizard", "0.1, 7.5, 4.3"),
            ("salmon", "1.3, 5.5, 8.2"),
            ("whale", "7.6, 2.4, 4.0"),
            ("wolf", "8.5, 2.7, 2.7"),
            ("reptile", "2.1, 9.9, 1.6"),
        ]
    ),
    ("values = np.array([[3.4,1.3,0.4,9.8], # furry", "[2.2,9.4,8.7,1.1]]) # ferocious"),
]
_000 = typed("\n".join(notebook(SEED_000, first, last) for first, last in TYPED_000))
MAMMAL, REPTILE = _000["mammal"].tolist(), _000["reptile"].tolist()
ANIMALS = [_000[name].tolist() for name in ("kitten", "lizard", "salmon", "whale", "wolf")]  # In [9]: stacked
ANIMAL_VALUES = _000["values"].tolist()


@pytest.fixture(scope="module")
def mammal() -> ac.AttentionResult:
    result = ac.run_scenario(ac.load_scenario("mammal-query"))
    assert len(result.heads) == 1
    return result.heads[0]


def test_000_cells_2_to_19_scenario_holds_the_notebook_inputs():
    """000, In [2]-[7], [10], [14], [16], [19]: query, keys (printed in [10]) and values."""
    s = ac.load_scenario("mammal-query")
    assert s.seed == SEED_000
    assert s.query_tokens == ("mammal", "reptile")
    assert s.key_tokens == ("kitten", "lizard", "salmon", "whale", "wolf")
    assert_printed(
        s.K,
        """[[9.1, 1. , 2.1],
       [0.1, 7.5, 4.3],
       [1.3, 5.5, 8.2],
       [7.6, 2.4, 4. ],
       [8.5, 2.7, 2.7]]""",
        "000 In [10] animals",
    )
    assert_printed(
        s.Q,
        """[[8.7 3.2 4.1]
 [2.1 9.9 1.6]]""",
        "000 In [19] query",
    )
    np.testing.assert_array_equal(s.Q, [MAMMAL, REPTILE])
    np.testing.assert_array_equal(s.K, ANIMALS)
    np.testing.assert_array_equal(s.V, ANIMAL_VALUES)


def test_000_cell_8_scaling_is_sqrt_3(mammal):
    """000, In [8]: print(np.sqrt(len(mammal))) -> 1.7320508075688772 (full repr)."""
    assert mammal.scale == 1.0 / 1.7320508075688772
    assert math.isclose(1.0 / mammal.scale, 1.7320508075688772, rel_tol=1e-15)


def test_000_cell_11_raw_dot_products(mammal):
    """000, In [11]: mammal @ animals.T."""
    text = "[90.98, 42.5 , 62.53, 90.2 , 93.66]"
    assert_printed(mammal.scores[0], text, "000 In [11] (API)")
    assert_printed(reference_attention([MAMMAL], ANIMALS, ANIMAL_VALUES, 1.0)[0][0], text, "000 In [11] (reference)")


def test_000_cell_12_scaled_dot_products(mammal):
    """000, In [12]: mammal @ animals.T / np.sqrt(len(mammal))."""
    text = "[52.52732749, 24.53738644, 36.10171233, 52.07699428, 54.07462621]"
    assert_printed(mammal.scaled[0], text, "000 In [12] (API)")
    ref_scores = reference_attention([MAMMAL], ANIMALS, ANIMAL_VALUES, 1.0)[0][0]
    assert_printed([s / math.sqrt(3) for s in ref_scores], text, "000 In [12] (reference)")


MAMMAL_WEIGHTS = """[1.57823895e-01 1.10228985e-13 1.16042942e-08 1.00599432e-01
 7.41576662e-01]"""
REPTILE_WEIGHTS = """[5.25436708e-13 9.98297480e-01 1.70251120e-03 1.47297680e-09
 7.33251915e-09]"""
MAMMAL_OUTPUT = "[2.32902909 8.02102694 7.51078092 2.70444657]"
REPTILE_OUTPUT = "[7.50136196 3.89812728 4.09693552 0.19982976]"


def test_000_cells_13_and_17_weights_of_each_query(mammal):
    """000, In [13] (mammal) and In [17] (reptile): softmax(query @ animals.T / scaling)."""
    assert_printed(mammal.weights[0], MAMMAL_WEIGHTS, "000 In [13] (API)")
    assert_printed(mammal.weights[1], REPTILE_WEIGHTS, "000 In [17] (API)")
    _, ref_weights, _ = reference_attention([MAMMAL, REPTILE], ANIMALS, ANIMAL_VALUES, 1 / math.sqrt(3))
    assert_printed(ref_weights[0], MAMMAL_WEIGHTS, "000 In [13] (reference)")
    assert_printed(ref_weights[1], REPTILE_WEIGHTS, "000 In [17] (reference)")


def test_000_cells_15_and_18_outputs_of_each_query(mammal):
    """000, In [15] (mammal) and In [18] (reptile): weights @ values."""
    assert_printed(mammal.output[0], MAMMAL_OUTPUT, "000 In [15] (API)")
    assert_printed(mammal.output[1], REPTILE_OUTPUT, "000 In [18] (API)")
    _, _, ref_output = reference_attention([MAMMAL, REPTILE], ANIMALS, ANIMAL_VALUES, 1 / math.sqrt(3))
    assert_printed(ref_output[0], MAMMAL_OUTPUT, "000 In [15] (reference)")
    assert_printed(ref_output[1], REPTILE_OUTPUT, "000 In [18] (reference)")


def test_000_cells_20_and_21_query_matrix(mammal):
    """000, In [20] and In [21]: both queries at once, softmax over each row."""
    weights = """[[1.57823895e-01 1.10228985e-13 1.16042942e-08 1.00599432e-01
  7.41576662e-01]
 [5.25436708e-13 9.98297480e-01 1.70251120e-03 1.47297680e-09
  7.33251915e-09]]"""
    output = """[[2.32902909 8.02102694 7.51078092 2.70444657]
 [7.50136196 3.89812728 4.09693552 0.19982976]]"""
    assert_printed(mammal.weights, weights, "000 In [20]")
    assert_printed(mammal.output, output, "000 In [21]")
    direct = ac.scaled_dot_product_attention([MAMMAL, REPTILE], ANIMALS, ANIMAL_VALUES)
    assert_printed(direct.weights, weights, "000 In [20] via scaled_dot_product_attention")
    assert_printed(direct.output, output, "000 In [21] via scaled_dot_product_attention")


# --- 001: random Q, K, V with a causal mask ------------------------------------------------------

Q_001 = """[[ 1.81007476e+00  5.79714443e-01  1.76340488e+00 -1.36508567e+00
  -6.16563287e-01  2.25550782e-01  6.97932570e-01  4.53068254e-01]
 [ 4.40413862e-01  1.41182465e+00  1.12179795e+00  2.55940040e+00
  -6.11930195e-01 -1.29197911e+00  4.35326619e-01  5.87760655e-01]
 [ 1.37479398e-01  4.75943855e-01  1.70270553e-01 -2.99509648e-01
  -9.17416007e-01  3.41058826e-02  1.35763200e-01  7.02759309e-04]
 [-1.02789839e+00 -1.25648099e+00 -2.10596641e+00  8.53510939e-03
  -1.08815736e+00  2.73482192e-01 -2.95768431e-01 -1.63643952e+00]]"""
K_001 = """[[ 0.23806166  0.81478651  0.1867359  -0.23954279 -0.43809154  0.71938587
   0.32942035 -0.7737555 ]
 [ 1.30796644  0.28949965  0.46690281 -0.79771644 -0.23239687  1.46718916
   0.96671762  1.31305307]
 [-1.02961989  0.32733656  1.25499661 -1.8275007   0.46145633  0.21470431
   1.32039387  0.97140891]
 [ 0.02289806  0.28978226  0.05236321  0.60885248  0.7258343   1.19419763
  -0.34371495 -1.39029048]]"""
SCORES_001 = """array([[ 1.8712587 ,  6.19145356,  4.15940504, -1.57731701],
       [-0.12115231, -1.09390409, -2.67478445, -0.91758004],
       [ 0.99468909,  1.03143942,  0.53920418, -0.70517691],
       [ 0.17845267, -4.47881966, -4.43512822,  1.42083484]])"""
SCALED_001 = """array([[ 0.66158986,  2.1890094 ,  1.47057175, -0.55766578],
       [-0.04283381, -0.3867535 , -0.94567911, -0.32441353],
       [ 0.3516757 ,  0.3646689 ,  0.19063747, -0.24931769],
       [ 0.06309255, -1.58350188, -1.56805462,  0.50234097]])"""
MASKED_001 = """array([[ 0.66158986,        -inf,        -inf,        -inf],
       [-0.04283381, -0.3867535 ,        -inf,        -inf],
       [ 0.3516757 ,  0.3646689 ,  0.19063747,        -inf],
       [ 0.06309255, -1.58350188, -1.56805462,  0.50234097]])"""
ATTENTION_001 = """array([[1.        , 0.        , 0.        , 0.        ],
       [0.58514235, 0.41485765, 0.        , 0.        ],
       [0.34912087, 0.35368667, 0.29719247, 0.        ],
       [0.34014176, 0.06554704, 0.06656742, 0.52774378]])"""
NEW_V_001 = """array([[ 1.37933415, -0.10749346, -1.57829697,  1.22250701, -1.18933662,
        -0.12370067, -0.05942792,  0.01060972],
       [ 1.0330743 , -0.28357112, -0.41087137,  1.02617547, -0.22353044,
        -0.47738086,  0.29065512, -0.22642169],
       [ 1.09051302, -0.51897789, -0.59980993,  0.60701144,  0.63950322,
        -0.53760485, -0.12560718, -0.02638372],
       [ 0.42173924, -1.45392657, -0.18455794, -0.23598787, -0.85649913,
        -0.09220333, -0.85970381,  0.12538971]])"""


def _rows(text: str) -> str:
    """Join NumPy's wrapped print lines so each printed matrix row is one line."""
    return re.sub(r"\n(?!\s*\[)", " ", text)


def _propagated() -> dict[str, np.ndarray]:
    """Worst-case effect of Q, K being printed to 8 digits, to first order, entry by entry.

    |delta(Q K^T)| <= |Q| |dK|^T + |dQ| |K|^T + |dQ| |dK|^T exactly; softmax moves weight p_i by at
    most 2 p_i max_j |delta x_j| <= 2 max_j |delta x_j| (first order, doubled for safety below).
    """
    Q, dQ = printed(_rows(Q_001))
    K, dK = printed(_rows(K_001))
    d_scores = np.abs(Q) @ dK.T + dQ @ np.abs(K).T + dQ @ dK.T  # (4, 4)
    d_scaled = d_scores / math.sqrt(8)
    d_weights = 2 * 2 * d_scaled.max(axis=1, keepdims=True) * np.ones((4, 4))
    return {"Q": Q, "K": K, "dQ": dQ, "dK": dK, "scores": d_scores, "scaled": d_scaled, "weights": d_weights}


@pytest.fixture(scope="module")
def causal() -> ac.AttentionResult:
    s = ac.load_scenario("random-causal")
    assert s.seed == SEED_001 and s.default_mask == "causal"
    return ac.run_scenario(s).heads[0]


def test_001_cell_3_scenario_holds_the_printed_q_and_k(causal):
    """001, In [3]: the printed Q and K are the scenario's, digit for digit."""
    assert_printed(causal.Q, _rows(Q_001), "001 In [3] Q")
    assert_printed(causal.K, _rows(K_001), "001 In [3] K")


def test_001_cell_3_first_row_of_v(causal):
    """001, In [3]: V's print stops after '[[ 1.37933415 -0.10749346 -1.57829697  1.22250701 -1.189'."""
    assert_printed(causal.V[0, :4], "[ 1.37933415 -0.10749346 -1.57829697  1.22250701]", "001 In [3] V[0]")
    assert -1.18999999 <= causal.V[0, 4] <= -1.189  # the cut-off fifth number began "-1.189"


def test_001_cell_5_raw_scores(causal):
    """001, In [5]: np.matmul(q, k.T)."""
    err = _propagated()
    assert_printed(causal.scores, SCORES_001, "001 In [5] (API)", extra=err["scores"])
    ref_scores = reference_attention(err["Q"], err["K"], np.zeros((4, 1)), 1.0)[0]
    assert_printed(ref_scores, SCORES_001, "001 In [5] (reference)", extra=err["scores"])
    assert err["scores"].max() < 1e-7  # the inputs' rounding is small next to what is being checked


def test_001_cell_6_variances(causal):
    """001, In [6]: q.var(), k.var(), np.matmul(q, k.T).var() = (1.0807309759803259, 0.6559745871143683,
    7.21530915931742). Tolerance: |d var(x)| <= 2/N sum |x - mean| |dx| (first order), doubled."""
    err = _propagated()
    for got, printed_var, x, dx, name in (
        (causal.Q.var(), 1.0807309759803259, causal.Q, err["dQ"], "q.var()"),
        (causal.K.var(), 0.6559745871143683, causal.K, err["dK"], "k.var()"),
        (causal.scores.var(), 7.21530915931742, causal.scores, err["scores"], "matmul(q, k.T).var()"),
    ):
        tol = 2 * 2 * np.mean(np.abs(x - x.mean()) * dx) + 1e-15
        assert abs(got - printed_var) <= tol, f"001 In [6] {name}: {got!r} vs {printed_var!r}, allowed {tol:.2g}"
    assert causal.scores.var() > 6 * causal.Q.var() * causal.K.var()  # the notebook's point: ~ d_k var q var k


def test_001_cell_9_scaled_scores(causal):
    """001, In [9]: np.matmul(q, k.T) / np.sqrt(d_k)."""
    err = _propagated()
    assert causal.scale == pytest.approx(1 / math.sqrt(8), rel=1e-15)
    assert_printed(causal.scaled, SCALED_001, "001 In [9]", extra=err["scaled"])


def test_001_cell_10_mask_and_cell_11_masked_scores(causal):
    """001, In [10]: tril(ones) and its 0/-inf form; In [11]: scaled + mask."""
    err = _propagated()
    assert_printed(
        causal.mask.astype(float),
        """[[1. 0. 0. 0.]
 [1. 1. 0. 0.]
 [1. 1. 1. 0.]
 [1. 1. 1. 1.]]""",
        "001 In [10] tril",
    )
    assert_printed(
        causal.additive_mask,
        """[[  0. -inf -inf -inf]
 [  0.   0. -inf -inf]
 [  0.   0.   0. -inf]
 [  0.   0.   0.   0.]]""",
        "001 In [10] additive mask",
    )
    assert_printed(causal.masked, MASKED_001, "001 In [11]", extra=np.where(np.isinf(causal.masked), 0, err["scaled"]))


def test_001_cell_20_attention(causal):
    """001, In [20] (and again in In [26]): softmax(scaled + mask)."""
    err = _propagated()
    assert_printed(causal.weights, ATTENTION_001, "001 In [20] (API)", extra=err["weights"])
    _, ref_weights, _ = reference_attention(err["Q"], err["K"], np.zeros((4, 1)), 1 / math.sqrt(8), causal=True)
    assert_printed(ref_weights, ATTENTION_001, "001 In [20] (reference)", extra=err["weights"])
    assert np.all(causal.weights[np.triu_indices(4, 1)] == 0.0)  # exactly zero above the diagonal


def test_001_cell_21_new_v_to_1e_6(causal):
    """001, In [21]: new_v = attention @ v reproduces to 1e-6 (the scenario's promise), and in fact
    to the printed 8 decimals plus what the weights' input rounding can move: |dA| |V|."""
    err = _propagated()
    assert np.max(np.abs(causal.output - printed(_rows(NEW_V_001))[0])) < 1e-6
    assert_printed(causal.output, _rows(NEW_V_001), "001 In [21] (API)", extra=err["weights"] @ np.abs(causal.V))
    _, _, ref_output = reference_attention(causal.Q, causal.K, causal.V, 1 / math.sqrt(8), causal=True)
    assert_printed(ref_output, _rows(NEW_V_001), "001 In [21] (reference)", extra=err["weights"] @ np.abs(causal.V))


def test_001_stored_v_is_the_solution_of_attention_v_equals_new_v(causal):
    """001, In [20] + In [21]: V is cut off in the printout, but A (lower-triangular, non-zero diagonal)
    and new_v = A @ V are printed, so V = solve(A, new_v). Recompute it from the printed Q, K and
    new_v and compare with the stored V. Bound: dV = A^-1 (d new_v - dA V), so
    |dV| <= |A^-1| (half-unit of new_v + |dA| |V|)."""
    err = _propagated()
    scaled = err["Q"] @ err["K"].T / math.sqrt(8)
    _, A, _ = reference_attention(err["Q"], err["K"], np.zeros((4, 1)), 1 / math.sqrt(8), causal=True)
    A = np.array(A)
    assert np.allclose(A, ac.softmax(np.where(np.tri(4, dtype=bool), scaled, -np.inf)), atol=1e-15)
    new_v, half = printed(_rows(NEW_V_001))
    V = np.linalg.solve(A, new_v)
    bound = np.abs(np.linalg.inv(A)) @ (half + err["weights"] @ np.abs(V)) * 2
    error = np.abs(V - causal.V)
    assert np.all(error <= bound), f"V differs by {error.max():.3g}, allowed {bound.min():.3g}"
    assert error.max() < 1e-6
    np.testing.assert_allclose(A @ causal.V, new_v, atol=1e-6)


# --- 002: cosine similarity and the apple/orange heads --------------------------------------------

_4D_002 = typed(notebook(SEED_002, "X = np.array([1.0, 2.0, 3.0, 4.0])", "Y = np.array([1.2, 2.1, 2.9, 3.7])"))
X_002, Y_002 = _4D_002["X"], _4D_002["Y"]
X_APPLE = typed(notebook(SEED_002, "X = np.array([", "])"))["X"]  # (10, 8), one commented row a token
HEADS_002 = {
    name: [int(d) for d in head["dims"]] for name, head in typed(notebook(SEED_002, "heads = {", "}"))["heads"].items()
}


def test_002_4d_example_dot_norms_cosine_angle():
    """002, '4d example': dot(X, Y): 28.90, ||X||: 5.48, ||Y||: 5.29, cosine: 0.9980, angle degrees: 3.59."""
    dot = ac.scaled_dot_product_attention([X_002], [Y_002], [[1.0]], scale=1.0).scores[0, 0]
    norms = ac.activation_norms([X_002, Y_002])
    assert f"{dot:.2f}" == "28.90"
    assert f"{norms[0]:.2f}" == "5.48"
    assert f"{norms[1]:.2f}" == "5.29"
    assert f"{ac.cosine_similarity(X_002, Y_002):.4f}" == "0.9980"
    assert f"{ac.pairwise_cosine([X_002], [Y_002])[0, 0]:.4f}" == "0.9980"
    assert f"{ac.angle_degrees(X_002, Y_002):.2f}" == "3.59"
    # the reference: the notebook's own formulas, by hand
    ref_dot = math.fsum(a * b for a, b in zip(X_002, Y_002, strict=True))
    ref_cos = ref_dot / (math.sqrt(math.fsum(X_002**2)) * math.sqrt(math.fsum(Y_002**2)))
    assert math.isclose(dot, ref_dot, rel_tol=1e-14)
    assert math.isclose(ac.cosine_similarity(X_002, Y_002), ref_cos, rel_tol=1e-14)
    assert math.isclose(ac.angle_degrees(X_002, Y_002), math.degrees(math.acos(ref_cos)), rel_tol=1e-9)


def test_002_post_normalization_unit_vectors():
    """002, 'Post normalization': X_unit: [0.183 0.365 0.548 0.73 ], Y_unit: [0.227 0.397 0.549 0.7  ],
    dot(X_unit, Y_unit): 0.9980, cosine(X_unit, Y_unit): 0.9980 (np.round(., 3) and {:.4f})."""
    norms = ac.activation_norms([X_002, Y_002])
    X_unit, Y_unit = X_002 / norms[0], Y_002 / norms[1]
    np.testing.assert_array_equal(np.round(X_unit, 3), [0.183, 0.365, 0.548, 0.73])
    np.testing.assert_array_equal(np.round(Y_unit, 3), [0.227, 0.397, 0.549, 0.7])
    np.testing.assert_allclose(ac.activation_norms([X_unit, Y_unit]), [1.0, 1.0], rtol=1e-15)
    unit_dot = ac.scaled_dot_product_attention([X_unit], [Y_unit], [[1.0]], scale=1.0).scores[0, 0]
    assert f"{unit_dot:.4f}" == "0.9980"
    assert f"{ac.cosine_similarity(X_unit, Y_unit):.4f}" == "0.9980"


@pytest.fixture(scope="module")
def apple() -> ac.Scenario:
    s = ac.load_scenario("apple-orange")
    assert s.seed == SEED_002
    return s


def test_002_token_embedding_shape(apple):
    """002: print("Token embedding shape:", X.shape) -> (10, 8); the tokens of the sentence; X as typed."""
    assert apple.X.shape == (10, 8)
    np.testing.assert_array_equal(apple.X, X_APPLE)
    assert " ".join(apple.query_tokens) == "I prefer apple over orange because it is less acidic"
    assert apple.key_tokens == apple.query_tokens


def test_002_single_head_shapes_and_values(apple):
    """002: identity single head: 'Input X shape: (10, 8)', 'Q shape: (10, 8)', 'K shape: (10, 8)',
    'V shape: (10, 8)', 'Single-head output shape: (10, 8)'; values as the reference computes them."""
    single = ac.multi_head_attention(apple.X, heads=[apple.single_head])
    r = single.heads[0]
    assert r.Q.shape == r.K.shape == r.V.shape == r.output.shape == single.output.shape == (10, 8)
    np.testing.assert_array_equal(r.Q, apple.X)
    ((ref_scores, ref_weights, ref_output),) = reference_multi_head(X_APPLE, [list(range(8))])
    np.testing.assert_allclose(r.weights, ref_weights, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(r.output, ref_output, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ac.activation_norms(r.output), np.linalg.norm(np.array(ref_output), axis=1), rtol=1e-13)


def test_002_four_heads_shapes_names_and_concat(apple):
    """002: 'Head 1: fruit/category Q/K/V shape: (10, 1)', Head 2 (10, 2), Head 3 (10, 3), Head 4 (10, 2),
    each 'Output shape' the same; 'Number of heads: 4'; 'Multi-head concatenated output shape: (10, 8)'."""
    result = ac.run_scenario(apple)
    assert (
        result.names
        == tuple(HEADS_002)
        == (
            "Head 1: fruit/category",
            "Head 2: preference/comparison",
            "Head 3: explanation/acidity",
            "Head 4: pronoun/coreference",
        )
    )
    assert len(result.heads) == 4
    for r, width in zip(result.heads, (1, 2, 3, 2), strict=True):
        assert r.Q.shape == r.K.shape == r.V.shape == r.output.shape == (10, width)
    assert result.concat.shape == result.output.shape == (10, 8)


def test_002_four_heads_values_match_the_notebook_loop(apple):
    """002, the multi-head loop: make_projection(dims) heads [2], [1, 3], [4, 6, 7], [2, 5] in that order, on X as
    typed; each head's W_q, W_k, W_v is make_projection(dims) (a 1 in row d of column i for the i-th dim d)."""
    for head, dims in zip(apple.heads, HEADS_002.values(), strict=True):
        projection = np.zeros((8, len(dims)))
        projection[dims, np.arange(len(dims))] = 1.0
        for W in (head.W_q, head.W_k, head.W_v):
            np.testing.assert_array_equal(W, projection)
    result = ac.run_scenario(apple)
    reference = reference_multi_head(X_APPLE, list(HEADS_002.values()))
    for r, (ref_scores, ref_weights, ref_output) in zip(result.heads, reference, strict=True):
        np.testing.assert_allclose(r.scores, ref_scores, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(r.weights, ref_weights, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(r.output, ref_output, rtol=1e-13, atol=1e-15)
    ref_concat = np.concatenate([np.array(out) for _, _, out in reference], axis=1)
    np.testing.assert_allclose(result.concat, ref_concat, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ac.activation_norms(result.output), np.linalg.norm(ref_concat, axis=1), rtol=1e-13)


# --- 003: Emma ... friend ---------------------------------------------------------------------------

RAW_003 = """[[ 2.78 -0.45  0.9  -0.9   1.1  -0.45 -0.9  -0.9   0.9 ]
 [ 1.   -0.5   1.   -1.    0.   -0.5  -1.   -1.    1.  ]
 [ 1.   -0.5   1.   -1.    0.   -0.5  -1.   -1.    1.  ]
 [ 0.    0.    0.    0.    0.    0.    0.    0.    0.  ]
 [ 1.32  0.    1.    0.    2.1   0.    0.   -1.2   0.  ]
 [ 0.    0.    0.    0.    0.    0.    0.    0.    0.  ]
 [ 1.24 -0.5   0.5  -1.   -0.3  -0.5  -1.   -0.4   1.  ]
 [ 1.6  -0.5   1.   -1.    0.5  -0.5  -1.   -1.    1.  ]
 [ 2.42 -0.25 -0.5  -0.5   0.   -0.25 -0.5   0.7   0.5 ]]"""

WEIGHTS_003 = """\
Emma,0.61,0.02,0.09,0.02,0.11,0.02,0.02,0.02,0.09
hates,0.24,0.05,0.24,0.03,0.09,0.05,0.03,0.03,0.24
games,0.24,0.05,0.24,0.03,0.09,0.05,0.03,0.03,0.24
but,0.11,0.11,0.11,0.11,0.11,0.11,0.11,0.11,0.11
she,0.19,0.05,0.14,0.05,0.41,0.05,0.05,0.02,0.05
is,0.11,0.11,0.11,0.11,0.11,0.11,0.11,0.11,0.11
a,0.31,0.05,0.15,0.03,0.07,0.05,0.03,0.06,0.24
great,0.35,0.04,0.19,0.03,0.11,0.04,0.03,0.03,0.19
friend,0.58,0.04,0.03,0.03,0.05,0.04,0.03,0.1,0.09"""

CAUSAL_003 = """\
Emma,1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0
hates,0.68,0.32,0.0,0.0,0.0,0.0,0.0,0.0,0.0
games,0.4,0.19,0.4,0.0,0.0,0.0,0.0,0.0,0.0
but,0.25,0.25,0.25,0.25,0.0,0.0,0.0,0.0,0.0
she,0.23,0.12,0.2,0.12,0.34,0.0,0.0,0.0,0.0
is,0.17,0.17,0.17,0.17,0.17,0.17,0.0,0.0,0.0
a,0.27,0.11,0.19,0.09,0.13,0.11,0.09,0.0,0.0
great,0.26,0.09,0.19,0.07,0.15,0.09,0.07,0.07,0.0
friend,0.3,0.08,0.07,0.07,0.09,0.08,0.07,0.13,0.12"""

TOKENS_003 = ("Emma", "hates", "games", "but", "she", "is", "a", "great", "friend")


def _table(csv: str) -> np.ndarray:
    """A pandas-printed table of np.round(w, 2): the token label, then the row's numbers."""
    lines = [line.split(",") for line in csv.splitlines()]
    assert tuple(line[0] for line in lines) == TOKENS_003
    return np.array([[float(x) for x in line[1:]] for line in lines])


@pytest.fixture(scope="module")
def emma() -> ac.Scenario:
    s = ac.load_scenario("emma-friend")
    assert s.seed == SEED_003
    assert s.query_tokens == s.key_tokens == TOKENS_003
    assert s.dim_labels == ("Pers", "Anim", "Noun", "Adj")
    return s


def test_003_cell_67_keys_and_queries_are_the_typed_ones(emma):
    """003, In [67]: the keys and queries dictionaries, one row per token in the notebook's order."""
    source = typed(notebook(SEED_003, "keys = {", "}") + "\n" + notebook(SEED_003, "queries = {", "}"))
    for name, matrix in (("keys", emma.K), ("queries", emma.Q)):
        assert tuple(source[name]) == TOKENS_003
        np.testing.assert_array_equal(matrix, np.stack(list(source[name].values())), err_msg=name)


def test_003_cell_46_friend_to_emma_is_2_42(emma):
    """003, In [46]: K[:,0] @ Q[:,8] -> 2.42 (1.2*1.0 + 0.8*0.9 + 1.0*0.5 + 0*1)."""
    r = ac.run_scenario(emma).heads[0]
    assert f"{r.scores[8, 0]:.2f}" == "2.42"
    assert abs(r.scores[8, 0] - 2.42) < 1e-12
    assert reference_attention(emma.Q[8:], emma.K[:1], [[0.0]], 1.0)[0][0][0] == pytest.approx(2.42, abs=1e-12)
    assert np.argmax(r.scores[8]) == 0  # Emma is friend's strongest key


def test_003_cells_64_and_65_full_raw_score_table(emma):
    """003, In [64]: print(Q.T @ K) at NumPy's 8 decimals; In [65]: np.round(wtilde, 2), the same table."""
    r = ac.run_scenario(emma).heads[0]
    assert_printed(r.scores, RAW_003, "003 In [64] (API)")
    np.testing.assert_array_equal(np.round(r.scores, 2), printed(RAW_003)[0], err_msg="003 In [65]")
    ref_scores, _, _ = reference_attention(emma.Q, emma.K, emma.V, 1.0)
    assert_printed(ref_scores, RAW_003, "003 In [64] (reference)")


def test_003_cell_57_weights_unscaled_no_mask(emma):
    """003, In [57]: softmax(wtilde), no scaling, no mask, shown as np.round(w, 2) (the scenario default)."""
    assert emma.default_scale == 1.0 and emma.default_mask == "none"
    r = ac.run_scenario(emma).heads[0]
    np.testing.assert_array_equal(np.round(r.weights, 2), _table(WEIGHTS_003), err_msg="003 In [57] (API)")
    _, ref_weights, _ = reference_attention(emma.Q, emma.K, emma.V, 1.0)
    np.testing.assert_array_equal(np.round(ref_weights, 2), _table(WEIGHTS_003), err_msg="003 In [57] (reference)")


def test_003_cell_58_weights_causal_scaled_by_one_over_sqrt_4(emma):
    """003, In [58]: -inf above the diagonal, softmax(wtilde / np.sqrt(4)), shown as np.round(w, 2)."""
    for scale in (0.5, None):  # explicitly 1/sqrt(4), and the 1/sqrt(d_k) default with d_k = 4
        r = ac.run_scenario(emma, mask="causal", scale=scale).heads[0]
        assert r.scale == 0.5
        np.testing.assert_array_equal(np.round(r.weights, 2), _table(CAUSAL_003), err_msg=f"003 In [58] {scale=}")
    _, ref_weights, _ = reference_attention(emma.Q, emma.K, emma.V, 0.5, causal=True)
    np.testing.assert_array_equal(np.round(ref_weights, 2), _table(CAUSAL_003), err_msg="003 In [58] (reference)")


def test_003_scenario_values_are_the_keys_as_its_text_says(emma):
    """003 defines no values; the scenario says V = K and must do what it says."""
    np.testing.assert_array_equal(emma.V, emma.K)
    assert "V = K" in emma.explanation
    r = ac.run_scenario(emma).heads[0]
    np.testing.assert_allclose(r.output, r.weights @ emma.K, rtol=1e-14)


# --- 004: np.random.seed(42) ------------------------------------------------------------------------

X_004 = """[[0.37454012 0.95071431 0.73199394 0.59865848]
 [0.15601864 0.15599452 0.05808361 0.86617615]
 [0.60111501 0.70807258 0.02058449 0.96990985]]"""
WEIGHTS_004 = """[[0.52735889 0.11510842 0.35753269]
 [0.43524369 0.19971446 0.36504185]
 [0.5060941  0.12923692 0.36466898]]"""
OUTPUT_004 = """[[0.9770141  0.93531103 1.15681926 1.43938704]
 [0.87857753 0.86060494 1.04849229 1.32790919]
 [0.9564023  0.92013827 1.13535784 1.41721063]]"""


def test_004_cell_3_x_weights_and_output():
    """004, In [3]: 'Input embeddings (X)', 'Attention Weights', 'Attention Output'."""
    s = ac.load_scenario("random-seed42")
    assert s.seed == SEED_004
    result = ac.run_scenario(s)
    r = result.heads[0]
    assert_printed(s.X, X_004, "004 In [3] X")
    assert_printed(r.weights, WEIGHTS_004, "004 In [3] weights (API)")
    assert_printed(result.output, OUTPUT_004, "004 In [3] output (API)")
    # the reference draws exactly as the notebook does: np.random.seed(42), then rand(3, 4), rand(4, 4) x 3
    legacy = np.random.RandomState(42)
    X, W_Q, W_K, W_V = legacy.rand(3, 4), legacy.rand(4, 4), legacy.rand(4, 4), legacy.rand(4, 4)
    np.testing.assert_array_equal(s.X, X)
    np.testing.assert_array_equal(s.heads[0].W_q, W_Q)
    _, ref_weights, ref_output = reference_attention(X @ W_Q, X @ W_K, X @ W_V, 1 / math.sqrt(4))
    assert_printed(ref_weights, WEIGHTS_004, "004 In [3] weights (reference)")
    assert_printed(ref_output, OUTPUT_004, "004 In [3] output (reference)")


# --- the helpers themselves must be able to fail -------------------------------------------------


def test_assert_printed_rejects_a_number_off_by_more_than_half_a_unit():
    assert_printed([0.123456785], "[0.12345678]", "exactly half a unit away")
    with pytest.raises(AssertionError, match="off by"):
        assert_printed([0.12345679], "[0.12345678]", "one unit away")
    with pytest.raises(AssertionError, match="off by"):
        assert_printed([1.1022899e-13], "[1.10228985e-13]", "scientific, 5 units away")
    with pytest.raises(AssertionError, match="-inf"):
        assert_printed([0.0, 1.0], "[0. -inf]", "a finite value where -inf was printed")


def test_notebook_reads_the_lines_from_first_to_last_and_refuses_a_line_it_lacks():
    assert notebook(SEED_002, "heads = {", "}").splitlines()[:2] == ["heads = {", '"Head 1: fruit/category": {']
    assert notebook(SEED_000, "In [2]:") == "In [2]:"
    with pytest.raises(AssertionError, match="no line reads"):
        notebook(SEED_000, "mammal = np.array([8.7, 3.2, 4.2])")


def test_typed_reads_arrays_dicts_and_nothing_else():
    assert typed("a = np.array([[1, 2], [3, 4.5]]) # c")["a"].tolist() == [[1.0, 2.0], [3.0, 4.5]]
    assert typed("d = {'x': np.array([1, 0])}")["d"]["x"].tolist() == [1.0, 0.0]
    with pytest.raises(AssertionError, match="np.zeros"):
        typed("z = np.zeros(3)")


def test_every_scenario_is_covered_here():
    seeds = ["mammal-query", "random-causal", "apple-orange", "emma-friend", "random-seed42"]
    assert ac.list_scenarios()[:5] == seeds and list(ac.scenarios.SEED_SCENARIOS) == seeds
    assert [ac.load_scenario(i).seed for i in seeds] == [SEED_000, SEED_001, SEED_002, SEED_003, SEED_004]
    assert all(ac.load_scenario(i).seed == "" for i in ac.list_scenarios()[5:])  # the lessons have no notebook
