"""Pattern exercises: every solution passes, every start fails, scores equal a plain-Python computation."""

import math

import numpy as np
import pytest

import attention_core as ac
from attention_core.exercises import EDIT_QK, EDIT_W

IDS = ac.list_exercises()
SEED_003 = "003_772d8909e260d638.txt"  # the emma-friend notebook: its keys and friend's query


def reference_weights(ex: ac.Exercise, tables: dict) -> list:
    """softmax(q.k / sqrt(d_k)) per head in plain Python loops, the projection X @ W spelled out."""
    heads = []
    for h in range(ex.n_heads):
        q_name, k_name = ex.head_tables(h)
        Q, K = (np.asarray(tables[q_name], dtype=float).tolist(), np.asarray(tables[k_name], dtype=float).tolist())
        if ex.edits == EDIT_W:
            X = ex.X.tolist()
            Q, K = ([[sum(x[a] * W[a][c] for a in range(len(x))) for c in range(len(W[0]))] for x in X] for W in (Q, K))
        d_k = len(Q[0])
        rows = []
        for q in Q:
            s = [sum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(d_k) for k in K]
            e = [math.exp(v - max(s)) for v in s]
            rows.append([v / sum(e) for v in e])
        heads.append(rows)
    return heads


def reference_score(weights: list, target: np.ndarray) -> float:
    cells = [
        abs(w - t)
        for W, T in zip(weights, target.tolist(), strict=True)
        for wr, tr in zip(W, T, strict=True)
        for w, t in zip(wr, tr, strict=True)
    ]
    return sum(cells) / len(cells)


@pytest.fixture(params=IDS)
def ex(request) -> ac.Exercise:
    return ac.load_exercise(request.param)


def test_at_least_six_exercises_with_the_required_targets():
    assert len(IDS) >= 6
    assert {"self", "previous", "first", "uniform", "friend-emma", "pronouns", "two-heads"} <= set(IDS)


def test_solution_passes(ex):
    g = ac.grade(ex, ex.solution)
    assert g.passed, f"{ex.id}: worked solution scores {g.score:.5f} > threshold {ex.threshold}"


def test_start_fails(ex):
    g = ac.grade(ex, ex.start)
    assert not g.passed, f"{ex.id}: starting state already passes ({g.score:.5f} <= {ex.threshold})"


@pytest.mark.parametrize("which", ["start", "solution"])
def test_score_matches_a_direct_computation(ex, which):
    tables = getattr(ex, which)
    expected_w = reference_weights(ex, tables)
    g = ac.grade(ex, tables)
    np.testing.assert_allclose(g.weights, expected_w, atol=1e-12, err_msg=f"{ex.id} {which}: weights")
    assert g.score == pytest.approx(reference_score(expected_w, ex.target), abs=1e-12)
    assert g.passed == (g.score <= ex.threshold)


def test_exercise_is_well_formed(ex):
    n = len(ex.tokens)
    assert ex.target.shape == (ex.n_heads, n, n)
    np.testing.assert_allclose(ex.target.sum(axis=-1), 1.0, err_msg="every target row is a distribution")
    assert set(ex.start) == set(ex.solution) == set(ex.tables)
    assert len(ex.tables) == 2 * ex.n_heads
    for name in ex.tables:
        assert ex.start[name].shape == ex.solution[name].shape
        assert ex.start[name].shape == (len(ex.row_labels()), len(ex.dim_labels))
    assert ex.edits in (EDIT_QK, EDIT_W)
    assert (ex.X is not None) == (ex.edits == EDIT_W)
    if ex.X is not None:
        assert ex.X.shape == (n, len(ex.x_labels))
    assert ex.instructions and ex.hint and ex.worked and 0 < ex.threshold < 0.1


@pytest.mark.parametrize(
    ("exercise_id", "threshold"), [("self", "0.05"), ("friend-emma", "0.004"), ("pronouns", "0.006")]
)
def test_the_instructions_end_with_the_rule_and_the_exercises_own_threshold(exercise_id, threshold):
    ex = ac.load_exercise(exercise_id)
    assert ex.instructions.startswith(ex.task) and len(ex.task) > 40
    assert ex.instructions.endswith(f"with no mask; passing means a mean difference of at most {threshold}.")


def test_both_edit_kinds_are_exercised():
    kinds = {ac.load_exercise(i).edits for i in IDS}
    assert kinds == {EDIT_QK, EDIT_W}


def test_targets_are_the_named_patterns():
    eye, prev = np.eye(5), np.eye(5)[[0, 0, 1, 2, 3]]
    np.testing.assert_array_equal(ac.load_exercise("self").target[0], eye)
    np.testing.assert_array_equal(ac.load_exercise("previous").target[0], prev)
    np.testing.assert_array_equal(ac.load_exercise("first").target[0][:, 0], 1.0)
    np.testing.assert_array_equal(ac.load_exercise("uniform").target[0], 0.2)
    two = ac.load_exercise("two-heads").target
    np.testing.assert_array_equal(two[0], eye)
    np.testing.assert_array_equal(two[1], prev)


def test_friend_row_targets_emma_and_starts_from_the_lectures_query():
    ex = ac.load_exercise("friend-emma")
    friend, emma = ex.tokens.index("friend"), ex.tokens.index("Emma")
    assert ex.target[0, friend, emma] == 1.0
    sc = ac.load_scenario("emma-friend")
    assert sc.seed == SEED_003
    assert ex.tokens == sc.query_tokens
    np.testing.assert_array_equal(ex.start["K"], sc.K)
    np.testing.assert_array_equal(ex.start["Q"][friend], sc.Q[friend])
    # seed 003, In [65]: friend's unscaled scores; halved (1/sqrt(4)) they give Emma 0.30, as the page says
    scores = np.array([2.42, -0.25, -0.5, -0.5, 0.0, -0.25, -0.5, 0.7, 0.5])
    w = ac.grade(ex, ex.start).weights[0, friend]
    assert w[emma] == pytest.approx(math.exp(1.21) / np.exp(scores / 2).sum(), abs=1e-12)
    assert round(w[emma], 2) == 0.30


def test_friend_worked_solution_numbers_are_the_texts():
    ex = ac.load_exercise("friend-emma")
    q = ex.solution["Q"][8]
    np.testing.assert_allclose(q, [4, 3.6, 2, 4])
    dots = ex.solution["K"] @ q
    assert dots[0] == pytest.approx(9.68) and dots[7] == pytest.approx(2.8)
    assert round(ac.grade(ex, ex.solution).weights[0, 8, 0], 2) == 0.93
    assert "9.68" in ex.worked and "2.8" in ex.worked and "0.93" in ex.worked


def test_pronoun_worked_numbers_are_the_texts_and_a_longer_query_alone_fails_she():
    ex = ac.load_exercise("pronouns")
    assert len(ex.tokens) == 10
    tok = ex.tokens.index
    w = ac.grade(ex, ex.solution).weights[0]
    assert round(w[tok("it"), tok("dog")], 2) == 0.94 and round(w[tok("she"), tok("Maria")], 2) == 0.95
    assert ex.solution["K"][tok("she")] @ ex.solution["Q"][tok("she")] == 0.0  # she's score on her own key
    assert all(f"{p:.2f}" in ex.worked for p in (0.94, 0.95, 0.49))
    longer = ex.start["Q"].copy() * 10  # the friend -> Emma remedy: each pronoun's query ten times longer
    g = ac.grade(ex, {"Q": longer, "K": ex.start["K"]})
    assert round(g.weights[0, tok("she"), tok("Maria")], 2) == round(g.weights[0, tok("she"), tok("she")], 2) == 0.49
    assert round(g.weights[0, tok("it"), tok("dog")], 2) >= 0.94
    assert not g.passed, f"a longer query alone scores {g.score:.4f}"


@pytest.mark.parametrize(
    ("eid", "row", "col", "weight"),
    [
        ("self", 0, 0, 0.99),
        ("previous", 3, 2, 0.96),
        ("first", 4, 0, 0.96),
    ],
)
def test_worked_weights_are_the_texts(eid, row, col, weight):
    ex = ac.load_exercise(eid)
    assert round(ac.grade(ex, ex.solution).weights[0, row, col], 2) == weight
    assert f"{weight:.2f}" in ex.worked


def test_half_a_two_head_solution_does_not_pass():
    ex = ac.load_exercise("two-heads")
    half = {**ex.start, "W_q1": ex.solution["W_q1"]}
    g = ac.grade(ex, half)
    assert not g.passed
    assert g.score < ac.grade(ex, ex.start).score  # but it is closer


def test_score_values():
    T = np.eye(2)[None]
    assert ac.score(T, T) == 0.0
    W = np.array([[[0.5, 0.5], [0.0, 1.0]]])
    assert ac.score(W, T) == pytest.approx((0.5 + 0.5 + 0 + 0) / 4)
    assert ac.score(W, T) == ac.score(T, W)


def test_score_refuses_mismatched_shapes_and_non_numbers():
    with pytest.raises(ac.AttentionInputError, match="shape"):
        ac.score(np.eye(2), np.eye(3))
    with pytest.raises(ac.AttentionInputError, match="finite"):
        ac.score(np.array([[np.nan]]), np.array([[1.0]]))


def test_bad_tables_are_named():
    ex = ac.load_exercise("self")
    with pytest.raises(ac.AttentionInputError, match="table K is missing"):
        ac.grade(ex, {"Q": ex.start["Q"]})
    with pytest.raises(ac.AttentionInputError, match="Q has 4 rows but needs 5"):
        ac.grade(ex, {**ex.start, "Q": ex.start["Q"][:4]})
    with pytest.raises(ac.AttentionInputError, match="same width d_k"):
        ac.grade(ex, {**ex.start, "Q": np.zeros((5, 2))})
    bad = ex.start["Q"].astype(object)
    bad[2, 1] = "x"
    with pytest.raises(ac.AttentionInputError, match="Q row 2, column 1"):
        ac.grade(ex, {**ex.start, "Q": bad})
    w = ac.load_exercise("previous")
    with pytest.raises(ac.AttentionInputError, match="embedding dimension"):
        ac.grade(w, {**w.start, "W_k": np.zeros((5, 5))})


def test_unknown_exercise_and_fresh_copies():
    with pytest.raises(ac.AttentionInputError, match="unknown exercise"):
        ac.load_exercise("nope")
    a = ac.load_exercise("self")
    a.solution["Q"][0, 0] = 123.0
    a.target[0, 0, 0] = 0.5
    b = ac.load_exercise("self")
    assert b.solution["Q"][0, 0] == 10.0 and b.target[0, 0, 0] == 1.0


def test_grading_never_modifies_the_tables(ex):
    before = {k: v.copy() for k, v in ex.solution.items()}
    ac.grade(ex, ex.solution)
    for name, M in before.items():
        np.testing.assert_array_equal(ex.solution[name], M)
