r"""Where do W_q and W_k come from? Learning them by gradient descent, to reach an exercise's pattern.

The loss says how far the weights ``A = softmax(S)``, ``S = c Q K^T`` (``c = 1/sqrt(d_k)``) are from the
target ``T``: the cross-entropy of each query row, averaged over the ``h`` heads and ``n`` rows,

.. math::
    L = -\frac{1}{h\,n} \sum_{h, i, j} T_{hij} \log A_{hij}, \qquad
    \frac{\partial L}{\partial S_{hij}} = \frac{A_{hij} - T_{hij}}{h\,n}

(each target row is normalised to sum to 1 first). The gradient with respect to the scores is just
"weights minus target", and it flows on as in :mod:`attention_core.backward`:
``dQ = c dS K``, ``dK = c dS^T Q``, and through the fixed embeddings ``dW_q = X^T dQ``, ``dW_k = X^T dK``.
L is smallest when ``A = T``; that smallest value is the targets' own entropy (0 for one-hot rows,
reached only in the limit; ``log n`` for a uniform row). A step moves every table downhill:
``W <- W - lr * dL/dW``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attention_core.attention import attention_stages
from attention_core.backward import scores_backward
from attention_core.errors import AttentionInputError, check_positive
from attention_core.exercises import EDIT_W, Exercise, grade, score
from attention_core.softmax import softmax_terms

STOP_SOLVED = "solved"  # the exercise's score reached its threshold
STOP_STALLED = "stalled"  # the loss stopped falling
STOP_MAX_STEPS = "max-steps"  # the step budget ran out first


@dataclass(frozen=True)
class LearningState:
    """Tables after ``step`` steps, with their loss, its gradient (one per table) and weights ``(h, n, n)``."""

    exercise: Exercise
    tables: Mapping[str, np.ndarray]
    loss: float
    gradients: Mapping[str, np.ndarray]
    weights: np.ndarray
    step: int = 0


@dataclass(frozen=True)
class LearningRun:
    """A run of learn_step until solved or stalled: the loss and score after every step (the start first)."""

    final: LearningState
    losses: tuple[float, ...]
    scores: tuple[float, ...]
    stopped: str  # STOP_SOLVED, STOP_STALLED or STOP_MAX_STEPS

    @property
    def solved(self) -> bool:
        return self.stopped == STOP_SOLVED


def pattern_loss(ex: Exercise, tables: Mapping[str, np.ndarray]) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    """Cross-entropy L of the tables' weights against ``ex.target``, dL/d(table) for each table, and the weights.

    ``L = -mean over heads and rows of sum_j T_ij log A_ij``; tables as in the exercise (checked already).
    """
    n_rows = ex.n_heads * ex.target.shape[1]
    loss, grads, maps = 0.0, {}, []
    for h in range(ex.n_heads):
        q_name, k_name = ex.head_tables(h)
        head_loss, dA, dB, A = _head_loss(ex, tables[q_name], tables[k_name], ex.target[h])
        loss += head_loss / n_rows
        grads[q_name], grads[k_name] = dA / n_rows, dB / n_rows
        maps.append(A)
    return loss, grads, np.stack(maps)  # float, {name: table's shape}, (h, n, n)


def _head_loss(ex: Exercise, A: np.ndarray, B: np.ndarray, target: np.ndarray) -> tuple:
    """One head's summed row cross-entropy, the gradients of its two tables (A: query's, B: key's), its weights."""
    X = ex.X if ex.edits == EDIT_W else None
    Q, K = (A, B) if X is None else (X @ A, X @ B)  # (n, d_k) each; X (n, d_model) @ W (d_model, d_k)
    c = 1.0 / np.sqrt(Q.shape[1])
    r = attention_stages(Q, K, K, None, c, 1.0)  # V plays no part in the weights
    m, _, total = softmax_terms(r.masked)  # (n, 1), (n, 1)
    log_weights = r.masked - m - np.log(total)  # (n, n) log A, finite even where A underflows to 0
    T = target / target.sum(axis=-1, keepdims=True)  # (n, n) rows sum to 1
    dS = r.weights - T  # (n, n) dL/dS of the summed cross-entropy
    dQ, dK = scores_backward(dS, Q, K, c)  # (n, d_k), (n, d_k)
    if X is not None:
        dQ, dK = X.T @ dQ, X.T @ dK  # (d_model, n) @ (n, d_k) -> (d_model, d_k)
    return float(-np.sum(T * log_weights)), dQ, dK, r.weights


def random_start(ex: Exercise, rng: np.random.Generator, spread: float = 1.0) -> dict[str, np.ndarray]:
    """Every editable table of ``ex`` filled with ``spread * N(0, 1)`` draws from ``rng``, in ``ex.tables`` order."""
    if not isinstance(rng, np.random.Generator):
        raise AttentionInputError("rng must be a numpy Generator, e.g. numpy.random.default_rng(0)")
    spread = check_positive(spread, "spread")
    return {name: spread * rng.normal(size=ex.start[name].shape) for name in ex.tables}


def start_learning(ex: Exercise, tables: Mapping[str, object]) -> LearningState:
    """The state at step 0 from the student's tables (or random_start's); AttentionInputError if they are unusable."""
    grade(ex, tables)  # validates every table, with the exercise's own messages
    own = {name: np.array(tables[name], dtype=np.float64) for name in ex.tables}  # copies: learning never edits them
    loss, grads, weights = pattern_loss(ex, own)
    return LearningState(ex, own, loss, grads, weights)


def learn_step(state: LearningState, lr: float) -> LearningState:
    """One step of gradient descent, ``W <- W - lr * dL/dW`` for every table; a new state, the old one untouched."""
    lr = check_positive(lr, "lr")
    tables = {name: W - lr * state.gradients[name] for name, W in state.tables.items()}
    loss, grads, weights = pattern_loss(state.exercise, tables)
    return LearningState(state.exercise, tables, loss, grads, weights, state.step + 1)


def learn_until_solved(state: LearningState, lr: float = 1.0, max_steps: int = 5000) -> LearningRun:
    """learn_step until the exercise's score passes its threshold, the loss stops falling, or ``max_steps``.

    "Stops falling": a step would lower the loss by less than a millionth of its value (or raise it);
    that step is not taken. ``lr = 1`` solves every exercise in tens of steps; a much larger one overshoots.
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 0:
        raise AttentionInputError(f"max_steps must be a whole number of at least 0, but it is {max_steps!r}")
    ex = state.exercise
    losses, scores = [state.loss], [score(state.weights, ex.target)]
    stopped = STOP_MAX_STEPS
    for _ in range(max_steps):
        if scores[-1] <= ex.threshold:
            stopped = STOP_SOLVED
            break
        new = learn_step(state, lr)
        if not new.loss < state.loss - 1e-6 * abs(state.loss):
            stopped = STOP_STALLED
            break
        state = new
        losses.append(state.loss)
        scores.append(score(state.weights, ex.target))
    else:
        stopped = STOP_SOLVED if scores[-1] <= ex.threshold else STOP_MAX_STEPS
    return LearningRun(state, tuple(losses), tuple(scores), stopped)
