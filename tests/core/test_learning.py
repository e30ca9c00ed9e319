"""Learning an exercise's tables by gradient descent: the loss, its gradient, the step and the run."""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_core as ac
from attention_core.learning import STOP_MAX_STEPS, STOP_SOLVED, STOP_STALLED

IDS = ac.list_exercises()
H = 1e-5
SEEDS = range(5)  # seeded random starts per exercise


@pytest.fixture(params=IDS)
def ex(request) -> ac.Exercise:
    return ac.load_exercise(request.param)


def direct_loss(ex: ac.Exercise, tables) -> float:
    """-mean over heads and rows of sum_j T_ij log A_ij, from the exercise's own weights."""
    A = ac.grade(ex, tables).weights  # (h, n, n)
    T = ex.target / ex.target.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        terms = np.where(T > 0, T * np.log(A), 0.0)
    return float(-terms.sum() / (A.shape[0] * A.shape[1]))


def numeric_table_gradient(ex: ac.Exercise, tables: dict, name: str) -> np.ndarray:
    grad = np.zeros_like(tables[name])
    for idx in np.ndindex(grad.shape):
        up, down = dict(tables), dict(tables)
        up[name], down[name] = tables[name].copy(), tables[name].copy()
        up[name][idx] += H
        down[name][idx] -= H
        grad[idx] = (ac.pattern_loss(ex, up)[0] - ac.pattern_loss(ex, down)[0]) / (2 * H)
    return grad


@pytest.mark.parametrize("which", ["start", "solution", "random"])
def test_loss_gradient_matches_finite_differences(ex, which):
    tables = ac.random_start(ex, np.random.default_rng(3)) if which == "random" else getattr(ex, which)
    tables = {k: np.asarray(v, dtype=float) for k, v in tables.items()}
    loss, grads, weights = ac.pattern_loss(ex, tables)
    assert loss == pytest.approx(direct_loss(ex, tables), rel=1e-12)
    np.testing.assert_allclose(weights, ac.grade(ex, tables).weights, rtol=1e-12, atol=1e-15)
    for name in ex.tables:
        numeric = numeric_table_gradient(ex, tables, name)
        scale = max(np.abs(numeric).max(), np.abs(grads[name]).max(), 1e-3)
        err = np.abs(grads[name] - numeric).max() / scale
        assert err <= 1e-6, f"{ex.id} {which} d{name}: relative error {err:.2e}"


def test_loss_of_a_perfect_uniform_pattern_is_log_n():
    ex = ac.load_exercise("uniform")
    loss, grads, _ = ac.pattern_loss(ex, ex.solution)  # zero queries: exactly uniform weights
    assert loss == pytest.approx(math.log(5), rel=1e-12)  # the floor: the target's own entropy
    assert all(np.abs(g).max() < 1e-15 for g in grads.values())  # and nothing left to learn


@pytest.mark.parametrize("seed", SEEDS)
def test_every_exercise_is_solved_from_a_seeded_random_start(ex, seed):
    tables = ac.random_start(ex, np.random.default_rng(seed))
    run = ac.learn_until_solved(ac.start_learning(ex, tables))
    g = ac.grade(ex, run.final.tables)  # the exercise's own check
    assert run.stopped == STOP_SOLVED and g.passed, f"{ex.id} seed {seed}: {run.stopped}, score {g.score:.4f}"
    assert g.score == pytest.approx(run.scores[-1], rel=1e-12)


def test_seeded_random_starts_are_real_work():
    """Random tables pass by chance rarely (uniform, seed 1: small random queries are nearly uniform)."""
    starts = [(ex, ac.random_start(ex, np.random.default_rng(s))) for ex in map(ac.load_exercise, IDS) for s in SEEDS]
    grades = [ac.grade(ex, tables) for ex, tables in starts]
    assert sum(g.passed for g in grades) <= 1
    assert np.mean([g.score / ex.threshold for g, (ex, _) in zip(grades, starts, strict=True)]) > 3


def test_every_exercise_is_solved_from_the_students_tables(ex):
    run = ac.learn_until_solved(ac.start_learning(ex, ex.start))
    g = ac.grade(ex, run.final.tables)
    assert g.passed and run.solved, f"{ex.id}: {run.stopped}, score {g.score:.4f} > {ex.threshold}"
    assert run.final.step == len(run.losses) - 1 >= 1
    assert all(b < a for a, b in zip(run.losses, run.losses[1:], strict=False)), "the loss falls on every step"


def test_learning_continues_from_half_edited_tables():
    ex = ac.load_exercise("two-heads")
    half = {**ex.start, "W_q1": ex.solution["W_q1"]}  # head 1 done by the student, head 2 not
    run = ac.learn_until_solved(ac.start_learning(ex, half))
    assert ac.grade(ex, run.final.tables).passed
    assert run.scores[0] < ac.grade(ex, ex.start).score  # it started closer than the exercise's start


def test_the_same_seed_gives_the_same_start_and_the_same_run():
    ex = ac.load_exercise("previous")
    a, b = ac.random_start(ex, np.random.default_rng(11)), ac.random_start(ex, np.random.default_rng(11))
    c = ac.random_start(ex, np.random.default_rng(12))
    for name in ex.tables:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["W_q"], c["W_q"])
    run_a, run_b = (ac.learn_until_solved(ac.start_learning(ex, t)) for t in (a, b))
    assert run_a.losses == run_b.losses


def test_a_step_is_pure_and_goes_downhill():
    ex = ac.load_exercise("self")
    tables = {k: v.copy() for k, v in ex.start.items()}
    s0 = ac.start_learning(ex, tables)
    before = {k: v.copy() for k, v in s0.tables.items()}
    s1 = ac.learn_step(s0, 0.5)
    for name in ex.tables:
        np.testing.assert_array_equal(s0.tables[name], before[name])  # the old state is untouched
        np.testing.assert_array_equal(tables[name], ex.start[name])  # and so are the student's tables
        np.testing.assert_allclose(s1.tables[name], before[name] - 0.5 * s0.gradients[name], rtol=1e-15)
    assert s1.step == 1 and s1.loss < s0.loss
    s0.tables["Q"][0, 0] = 99.0  # the state owns copies: the student's table does not change
    assert tables["Q"][0, 0] == 0.0


def test_too_large_a_learning_rate_stalls_and_the_run_says_so():
    ex = ac.load_exercise("previous")
    run = ac.learn_until_solved(ac.start_learning(ex, ex.start), lr=50.0)
    assert run.stopped == STOP_STALLED and not run.solved
    assert not ac.grade(ex, run.final.tables).passed


def test_the_step_budget_ends_a_run():
    ex = ac.load_exercise("friend-emma")
    run = ac.learn_until_solved(ac.start_learning(ex, ex.start), lr=0.01, max_steps=3)
    assert run.stopped == STOP_MAX_STEPS and run.final.step == 3 and len(run.losses) == len(run.scores) == 4
    done = ac.learn_until_solved(ac.start_learning(ex, ex.solution), max_steps=0)
    assert done.stopped == STOP_SOLVED and done.final.step == 0


def test_bad_input_is_named():
    ex = ac.load_exercise("self")
    with pytest.raises(ac.AttentionInputError, match="table K is missing"):
        ac.start_learning(ex, {"Q": ex.start["Q"]})
    with pytest.raises(ac.AttentionInputError, match="lr must be greater than 0"):
        ac.learn_step(ac.start_learning(ex, ex.start), 0.0)
    with pytest.raises(ac.AttentionInputError, match="numpy Generator"):
        ac.random_start(ex, 0)
    with pytest.raises(ac.AttentionInputError, match="max_steps"):
        ac.learn_until_solved(ac.start_learning(ex, ex.start), max_steps=-1)
