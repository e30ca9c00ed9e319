r"""A head that learns a job: one attention layer trained by hand-written Adam on random token sequences.

The model, on a sequence of ``n`` token ids (causal mask, ``c = 1/sqrt(d_k)``):

.. math::
    X = E[\text{ids}] + PE, \quad Q = X W_q,\ K = X W_k,\ V = X W_v, \quad
    O = \mathrm{softmax}(c\, Q K^\top + M)\, V, \quad \text{logits} = O\, W_{out}

``E (vocab, d)`` is a fixed random token embedding and ``PE`` the sinusoidal encoding of "Attention Is
All You Need"; ``W_q, W_k (d_model, d_k)``, ``W_v (d_model, d_v)`` and ``W_out (d_v, vocab)`` learn.
The loss is the cross-entropy of the logits against each row's answer, averaged over the rows that have
one. Its gradient is ``dlogits = (softmax(logits) - onehot) / rows``, then ``dW_out = O^T dlogits``,
``dO = dlogits W_out^T`` and attention's backward pass (:mod:`attention_core.backward`) to the projections.
Every step draws a fresh batch of random sequences (so the head cannot memorise them) and takes one Adam step;
all randomness comes from one seeded Generator, so a run replays exactly.

Two jobs:

- ``JOB_PREVIOUS``: say the previous token. Row ``t >= 1`` answers ``ids[t-1]``; the head should attend to
  ``t - 1``, found through the positional encoding alone.
- ``JOB_INDUCTION``: find the earlier copy of the current token and say the token after it (``A B ... A -> B``).
  A sequence is ``n/2`` distinct tokens, then the same tokens shuffled; row ``t`` of the second half
  answers the token after its copy in the first half. Matching a token with "the token before me" takes
  two heads in a real model (a previous-token head, then an induction head); here the previous token's
  embedding is given as extra columns, ``X = [E[ids] + PE, E[previous ids]]``, as if the head of the first
  job had already written it, so one head can learn the second step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attention_core.attention import AttentionResult, attention_stages
from attention_core.backward import stages_backward
from attention_core.errors import AttentionInputError
from attention_core.masks import additive_mask, causal_mask
from attention_core.positions import sinusoidal_encoding
from attention_core.softmax import softmax

JOB_PREVIOUS = "previous-token"
JOB_INDUCTION = "induction"
JOBS = (JOB_PREVIOUS, JOB_INDUCTION)
PACK = 8  # sequences packed into one attention call: the packed (8 n, 8 n) scores stay small
NO_ANSWER = -1  # a row without an answer (the first token; the first half of an induction sequence)


@dataclass(frozen=True)
class HeadTask:
    """A job's fixed parts: the token embedding ``E (vocab, d)``, ``PE (n, d)`` and an example sequence ``(n,)``."""

    job: str
    E: np.ndarray  # (vocab, d) fixed random token embedding
    PE: np.ndarray  # (n, d) sinusoidal positional encoding
    example_ids: np.ndarray  # (n,) the sequence whose weights the snapshots show (never trained on)

    @property
    def n(self) -> int:
        return self.PE.shape[0]


@dataclass(frozen=True)
class TrainingSnapshot:
    """The state every ``every`` steps: the loss on a fixed held-out batch and the example's weights ``(n, n)``."""

    step: int
    loss: float
    weights: np.ndarray


@dataclass(frozen=True)
class HeadTraining:
    """A whole training run: the task, the snapshots (step 0 first, the last step last), the final weights."""

    task: HeadTask
    snapshots: tuple[TrainingSnapshot, ...]
    params: Mapping[str, np.ndarray]


def make_task(job: str, rng: np.random.Generator, *, vocab: int = 10, n: int = 10, d: int = 16) -> HeadTask:
    """The fixed embedding ``E ~ N(0, 1)`` and an example sequence for ``job``, drawn from ``rng``."""
    if job not in JOBS:
        raise AttentionInputError(f"unknown job {job!r}; choose one of {', '.join(JOBS)}")
    if job == JOB_INDUCTION and (n % 2 or n // 2 > vocab):
        raise AttentionInputError(f"the induction job needs an even n with n/2 <= vocab, but n = {n}, vocab = {vocab}")
    E = rng.normal(size=(vocab, d))  # (vocab, d)
    distinct = rng.choice(vocab, size=n, replace=vocab < n)  # (n,) no repeats: which token it looked at is visible
    example = _sequence(job, rng, vocab, n) if job == JOB_INDUCTION else distinct
    return HeadTask(job, E, sinusoidal_encoding(n, d), example)


def make_batch(task: HeadTask, rng: np.random.Generator, B: int) -> tuple[np.ndarray, np.ndarray]:
    """``B`` fresh random sequences for the task's job and their answers, both ``(B, n)`` ids."""
    ids = np.stack([_sequence(task.job, rng, task.E.shape[0], task.n) for _ in range(B)])  # (B, n)
    return ids, np.stack([_answers(task.job, row) for row in ids])  # (B, n), (B, n)


def _sequence(job: str, rng: np.random.Generator, vocab: int, n: int) -> np.ndarray:
    """(n,) ids: uniform at random (previous token), or n/2 distinct ids then the same ids shuffled (induction)."""
    if job == JOB_PREVIOUS:
        return rng.integers(0, vocab, size=n)
    first = rng.choice(vocab, size=n // 2, replace=False)  # (n/2,) distinct
    return np.concatenate([first, rng.permutation(first)])  # (n,)


def _answers(job: str, ids: np.ndarray) -> np.ndarray:
    """(n,) what each row should say: ids[t-1], or the id after the earlier copy of ids[t]; NO_ANSWER if none."""
    n = ids.shape[0]
    answers = np.full(n, NO_ANSWER)
    if job == JOB_PREVIOUS:
        answers[1:] = ids[:-1]
        return answers
    for t in range(n // 2, n):
        j = int(np.flatnonzero(ids[:t] == ids[t])[0])  # the earlier copy, in the first half
        answers[t] = ids[j + 1]
    return answers


def embed(task: HeadTask, ids: np.ndarray) -> np.ndarray:
    """X of sequences ``ids (..., n)``: ``E[ids] + PE (..., n, d)``; induction: ``[.., E[previous]] (..., n, 2d)``."""
    X = task.E[ids] + task.PE  # (..., n, d)
    if task.job == JOB_PREVIOUS:
        return X
    previous = np.zeros_like(X)  # (..., n, d): row t holds E[ids[t-1]], row 0 nothing
    previous[..., 1:, :] = task.E[ids[..., :-1]]
    return np.concatenate([X, previous], axis=-1)  # (..., n, 2d)


def head_forward(
    params: Mapping[str, np.ndarray], X: np.ndarray, mask: np.ndarray
) -> tuple[AttentionResult, np.ndarray]:
    """The head's attention stages and its logits ``O W_out``: ``X (N, d_model), mask (N, N)`` -> ``(N, vocab)``."""
    d_k = params["W_q"].shape[1]
    Q, K, V = X @ params["W_q"], X @ params["W_k"], X @ params["W_v"]  # (N, d_k), (N, d_k), (N, d_v)
    r = attention_stages(Q, K, V, additive_mask(mask), 1.0 / np.sqrt(d_k), 1.0)
    return r, r.output @ params["W_out"]  # (N, d_v) @ (d_v, vocab) -> (N, vocab)


def packed_mask(B: int, n: int) -> np.ndarray:
    """Boolean ``(B n, B n)``: causal inside each of the ``B`` sequences, nothing across them (block-diagonal)."""
    return np.kron(np.eye(B, dtype=bool), causal_mask(n))  # (B n, B n)


def loss_and_gradients(
    params: Mapping[str, np.ndarray], task: HeadTask, ids: np.ndarray, answers: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean cross-entropy over every answered row of a batch ``ids, answers (B, n)``, and its gradient per weight.

    ``PACK`` sequences at a time are packed into one sequence with a block-diagonal causal mask, so each
    sequence sees only its own earlier tokens and one attention call (and one backward) does them all.
    """
    n_rows = int(np.sum(answers != NO_ANSWER))
    loss, grads = 0.0, {name: np.zeros_like(W) for name, W in params.items()}
    for start in range(0, ids.shape[0], PACK):
        chunk_loss, chunk_grads = _packed_loss(params, task, ids[start : start + PACK], answers[start : start + PACK])
        loss += chunk_loss / n_rows
        for name, g in chunk_grads.items():
            grads[name] += g / n_rows
    return loss, grads


def _packed_loss(params: Mapping, task: HeadTask, ids: np.ndarray, answers: np.ndarray) -> tuple[float, dict]:
    """Summed cross-entropy of a few sequences ``(B, n)`` packed into one, and its summed gradients."""
    B, n = ids.shape
    X = embed(task, ids).reshape(B * n, -1)  # (B, n, d_model) -> (B n, d_model)
    r, logits = head_forward(params, X, packed_mask(B, n))  # (B n, vocab)
    rows = np.flatnonzero(answers.reshape(-1) != NO_ANSWER)  # the rows that count
    targets = answers.reshape(-1)[rows]
    p = softmax(logits)  # (B n, vocab)
    dlogits = np.zeros_like(p)  # (B n, vocab), 0 on rows without an answer
    dlogits[rows] = p[rows]
    dlogits[rows, targets] -= 1.0  # softmax minus one-hot
    return -float(np.sum(np.log(p[rows, targets]))), _gradients(params, X, r, dlogits)


def _gradients(params: Mapping, X: np.ndarray, r: AttentionResult, dlogits: np.ndarray) -> dict[str, np.ndarray]:
    """dW_out = O^T dlogits, then dO = dlogits W_out^T through attention's backward to dW_q, dW_k, dW_v."""
    dQ, dK, dV = stages_backward(r, dlogits @ params["W_out"].T)  # dO: (N, vocab) @ (vocab, d_v) -> (N, d_v)
    return {
        "W_q": X.T @ dQ,  # (d_model, N) @ (N, d_k) -> (d_model, d_k)
        "W_k": X.T @ dK,
        "W_v": X.T @ dV,  # (d_model, N) @ (N, d_v) -> (d_model, d_v)
        "W_out": r.output.T @ dlogits,  # (d_v, N) @ (N, vocab) -> (d_v, vocab)
    }


def adam_step(params: Mapping, grads: Mapping, moments: Mapping, t: int, lr: float) -> tuple[dict, dict]:
    r"""One Adam step (Kingma & Ba 2015, algorithm 1) for every weight; new params and moments, the old ones kept.

    .. math::
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        W \leftarrow W - \mathrm{lr}\, \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}

    with the paper's ``beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-8``; ``t`` counts steps from 1.
    ``moments`` maps each name to its ``(m, v)``.
    """
    b1, b2, eps = 0.9, 0.999, 1e-8
    new_params, new_moments = {}, {}
    for name, W in params.items():
        m, v = moments[name]
        m = b1 * m + (1 - b1) * grads[name]
        v = b2 * v + (1 - b2) * grads[name] ** 2
        new_params[name] = W - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        new_moments[name] = (m, v)
    return new_params, new_moments


def init_params(task: HeadTask, rng: np.random.Generator, d_head: int = 16) -> dict[str, np.ndarray]:
    """Small random weights, N(0, 1/fan_in): W_q, W_k, W_v ``(d_model, d_head)``, W_out ``(d_head, vocab)``."""
    d_model, vocab = embed(task, task.example_ids).shape[1], task.E.shape[0]
    shapes = {"W_q": (d_model, d_head), "W_k": (d_model, d_head), "W_v": (d_model, d_head), "W_out": (d_head, vocab)}
    return {name: rng.normal(size=shape) / np.sqrt(shape[0]) for name, shape in shapes.items()}


def example_weights(params: Mapping[str, np.ndarray], task: HeadTask) -> np.ndarray:
    """The head's attention weights on the task's example sequence, ``(n, n)``."""
    return head_forward(params, embed(task, task.example_ids), causal_mask(task.n))[0].weights


def train_head(
    job: str, *, seed: int = 0, steps: int = 300, every: int = 10, lr: float = 0.03, batch: int = 16
) -> HeadTraining:
    """Train one head on ``job`` with Adam, a fresh random batch each step; a TrainingSnapshot every ``every`` steps.

    Everything comes from ``numpy.random.default_rng(seed)``, so the same seed replays the same run:
    embedding, example, start, batches and every snapshot. A snapshot's loss is measured on one fixed
    batch of 32 held-out sequences (drawn once, never trained on), so the curve is not the noise of the batches.
    """
    for value, name in ((steps, "steps"), (every, "every"), (batch, "batch")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise AttentionInputError(f"{name} must be a whole number of at least 1, but it is {value!r}")
    rng = np.random.default_rng(seed)
    task = make_task(job, rng)
    params = init_params(task, rng)
    held_out = make_batch(task, rng, 32)  # (32, n) ids and answers for the snapshots' loss
    moments = {name: (np.zeros_like(W), np.zeros_like(W)) for name, W in params.items()}
    snapshots = []
    for t in range(steps + 1):
        if t % every == 0 or t == steps:
            snapshots.append(
                TrainingSnapshot(t, loss_and_gradients(params, task, *held_out)[0], example_weights(params, task))
            )
        if t < steps:
            _, grads = loss_and_gradients(params, task, *make_batch(task, rng, batch))
            params, moments = adam_step(params, grads, moments, t + 1, lr)
    return HeadTraining(task, tuple(snapshots), params)
