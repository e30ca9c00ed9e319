"""A head that learns a job: its data, its gradients (against finite differences), and two seeded runs."""

from __future__ import annotations

import numpy as np
import pytest

import attention_core as ac
from attention_core.head_training import (
    JOB_INDUCTION,
    JOB_PREVIOUS,
    JOBS,
    NO_ANSWER,
    PACK,
    _answers,
    init_params,
    loss_and_gradients,
    make_batch,
    make_task,
    packed_mask,
)

H = 1e-5


@pytest.fixture(scope="module")
def runs() -> dict[str, ac.HeadTraining]:
    """The default seeded run of each job (seed 0, 300 steps), trained once for every test below."""
    return {job: ac.train_head(job, seed=0) for job in JOBS}


def test_answers_are_the_previous_token_or_the_token_after_the_earlier_copy():
    np.testing.assert_array_equal(_answers(JOB_PREVIOUS, np.array([4, 7, 7, 1])), [NO_ANSWER, 4, 7, 7])
    # A B C D | C A D B: C's copy is at 2, followed by D; A's at 0 -> B; D's at 3 -> C (the second C); B's at 1 -> C
    ids = np.array([0, 1, 2, 3, 2, 0, 3, 1])
    np.testing.assert_array_equal(_answers(JOB_INDUCTION, ids), [NO_ANSWER] * 4 + [3, 1, 2, 2])


def test_induction_batches_hold_each_token_twice_and_shuffled():
    task = make_task(JOB_INDUCTION, np.random.default_rng(0))
    ids, answers = make_batch(task, np.random.default_rng(1), 20)
    half = task.n // 2
    for row in ids:
        assert len(set(row[:half])) == half and sorted(row[:half]) == sorted(row[half:])
    assert not all(np.array_equal(r[:half], r[half:]) for r in ids)  # not a fixed offset to copy by position
    assert np.all(answers[:, :half] == NO_ANSWER) and np.all(answers[:, half:] >= 0)


def test_packed_mask_is_causal_inside_each_sequence_and_blind_across():
    m = packed_mask(3, 4)
    assert m.shape == (12, 12)
    np.testing.assert_array_equal(m[4:8, 4:8], ac.causal_mask(4))
    assert not m[4:8, :4].any() and not m[:4, 4:].any()


@pytest.mark.parametrize("job", JOBS)
def test_packing_gives_the_mean_of_the_sequences_one_by_one(job):
    rng = np.random.default_rng(2)
    task = make_task(job, rng)
    params = init_params(task, rng)
    ids, answers = make_batch(task, rng, PACK + 3)  # two packs, the second partly filled
    loss, grads = loss_and_gradients(params, task, ids, answers)
    rows = (answers != NO_ANSWER).sum(axis=1)
    singles = [loss_and_gradients(params, task, ids[i : i + 1], answers[i : i + 1]) for i in range(len(ids))]
    assert loss == pytest.approx(sum(r * s[0] for r, s in zip(rows, singles, strict=True)) / rows.sum(), rel=1e-12)
    for name, g in grads.items():
        expected = sum(r * s[1][name] for r, s in zip(rows, singles, strict=True)) / rows.sum()
        np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("job", JOBS)
def test_gradients_match_finite_differences(job):
    rng = np.random.default_rng(3)
    task = make_task(job, rng, vocab=5, n=6, d=4)
    params = init_params(task, rng, d_head=3)
    batch = make_batch(task, rng, PACK + 2)
    _, grads = loss_and_gradients(params, task, *batch)
    for name, W in params.items():
        numeric = np.zeros_like(W)
        for idx in np.ndindex(W.shape):
            up, down = W.copy(), W.copy()
            up[idx] += H
            down[idx] -= H
            numeric[idx] = (
                loss_and_gradients({**params, name: up}, task, *batch)[0]
                - loss_and_gradients({**params, name: down}, task, *batch)[0]
            ) / (2 * H)
        err = np.abs(grads[name] - numeric).max() / max(np.abs(numeric).max(), 1e-3)
        assert err <= 1e-6, f"{job} d{name}: relative error {err:.2e}"


def test_the_snapshots_cover_the_run(runs):
    for run in runs.values():
        steps = [s.step for s in run.snapshots]
        assert steps == list(range(0, 301, 10))
        for s in run.snapshots:
            n = run.task.n
            assert s.weights.shape == (n, n)
            np.testing.assert_allclose(s.weights.sum(axis=1), 1.0, rtol=1e-12)
            assert np.all(np.triu(s.weights, 1) == 0)  # causal: no weight on later tokens


def test_previous_token_head_learns_to_look_one_back(runs):
    run = runs[JOB_PREVIOUS]
    first, last = run.snapshots[0], run.snapshots[-1]
    assert first.loss > 2.0 and last.loss < 0.1 * first.loss  # observed (seed 0): 2.83 -> 0.08
    w = last.weights
    assert ac.previous_token_score(w) > 0.7  # observed: 0.79
    assert ac.previous_token_score(first.weights) < 0.4  # and it was not so at the start
    np.testing.assert_array_equal(w[1:].argmax(axis=1), np.arange(run.task.n - 1))  # every row's top key is t - 1


def test_induction_head_learns_to_look_after_the_earlier_copy(runs):
    run = runs[JOB_INDUCTION]
    first, last = run.snapshots[0], run.snapshots[-1]
    assert first.loss > 2.0 and last.loss < 0.05 * first.loss  # observed (seed 0): 2.60 -> 0.006
    ids = run.task.example_ids
    assert ac.induction_score(last.weights, ids) > 0.9  # observed: 1.00
    assert ac.induction_score(first.weights, ids) < 0.4
    target = ac.induction_targets(ids)
    rows = np.flatnonzero(target.any(axis=1))
    np.testing.assert_array_equal(last.weights[rows].argmax(axis=1), target[rows].argmax(axis=1))


def test_the_same_seed_replays_the_same_run():
    a, b = (ac.train_head(JOB_INDUCTION, seed=4, steps=15, every=5) for _ in range(2))
    c = ac.train_head(JOB_INDUCTION, seed=5, steps=15, every=5)
    assert [s.loss for s in a.snapshots] == [s.loss for s in b.snapshots]
    for x, y in zip(a.snapshots, b.snapshots, strict=True):
        np.testing.assert_array_equal(x.weights, y.weights)
    assert [s.loss for s in a.snapshots] != [s.loss for s in c.snapshots]
    assert [s.step for s in a.snapshots] == [0, 5, 10, 15]


def test_bad_settings_are_named():
    with pytest.raises(ac.AttentionInputError, match="unknown job 'copy'"):
        ac.train_head("copy")
    with pytest.raises(ac.AttentionInputError, match="steps must be a whole number"):
        ac.train_head(JOB_PREVIOUS, steps=0)
    with pytest.raises(ac.AttentionInputError, match="even n"):
        make_task(JOB_INDUCTION, np.random.default_rng(0), n=9)
