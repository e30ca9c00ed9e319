r"""Pattern exercises: build an attention pattern by hand and score it against a target.

.. math::
    A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right), \qquad
    \mathrm{score}(A, T) = \frac{1}{h\, n_q\, n_k} \sum_{h, i, j} \lvert A_{hij} - T_{hij} \rvert

The student edits either ``Q`` and ``K`` directly or ``W_q`` and ``W_k`` over fixed embeddings
``X`` (then ``Q = X W_q``, ``K = X W_k``); an exercise with ``h`` heads has one such pair per head.
Every exercise uses scale ``1/sqrt(d_k)``, temperature 1 and no mask, so only Q and K decide.
An attempt passes when its score is at most the exercise's threshold. Values play no part in the
weights, so none are edited.

A row of a one-hot target that puts weight ``p`` on its token differs from it by ``2 (1 - p)``
summed over the row; thresholds are set so that passing means ``p`` of about 0.85 or more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from attention_core.attention import scaled_dot_product_attention
from attention_core.catalogue import build
from attention_core.errors import AttentionInputError, as_matrix, float_array

EDIT_QK = "qk"  # the student edits Q and K, one row per token
EDIT_W = "w"  # the student edits W_q and W_k, one row per embedding dimension of the fixed X
# the rule every exercise shares, after its task in its instructions, with its threshold
COMMON = " Weights are softmax(Q Kᵀ / √d_k) with no mask; passing means a mean difference of at most {}."


@dataclass(frozen=True)
class Exercise:
    """One target pattern and everything a page needs to pose it, hint at it and solve it.

    ``tables`` names the editable matrices, a (query, key) pair per head: ``("Q", "K")``,
    ``("W_q", "W_k")`` or ``("W_q1", "W_k1", "W_q2", "W_k2")``. ``start`` and ``solution`` map each
    name to its matrix: ``(n, d_k)`` for Q/K, ``(d_model, d_k)`` for W. ``target (h, n, n)``: one
    map per head. ``X (n, d_model)`` is given only when ``edits == EDIT_W``.
    """

    id: str
    title: str
    task: str  # what to build (``instructions`` is the task and the rule)
    hint: str
    worked: str  # why the solution works, in a few sentences
    tokens: tuple[str, ...]
    edits: str
    tables: tuple[str, ...]
    start: Mapping[str, np.ndarray]
    solution: Mapping[str, np.ndarray]
    target: np.ndarray
    threshold: float
    dim_labels: tuple[str, ...]
    X: np.ndarray | None = None
    x_labels: tuple[str, ...] = ()

    @property
    def instructions(self) -> str:
        """The task, then COMMON with this exercise's threshold: what the page shows."""
        return self.task + COMMON.format(self.threshold)

    @property
    def n_heads(self) -> int:
        return len(self.tables) // 2

    def head_tables(self, h: int) -> tuple[str, str]:
        """The (query, key) table names of head ``h`` (counted from 0)."""
        return self.tables[2 * h], self.tables[2 * h + 1]

    def row_labels(self) -> tuple[str, ...]:
        """Row labels of every editable table: the tokens (Q, K) or the embedding dimensions (W)."""
        return self.tokens if self.edits == EDIT_QK else self.x_labels


@dataclass(frozen=True)
class Grade:
    """An attempt: ``weights (h, n, n)``, its score (mean absolute difference) and whether it passes."""

    weights: np.ndarray
    score: float
    passed: bool


def score(weights: np.ndarray, target: np.ndarray) -> float:
    """Mean absolute difference mean(|weights - target|) over every head and cell; 0 is a perfect match."""
    W, T = float_array(weights, "weights"), float_array(target, "target")
    if W.shape != T.shape:
        raise AttentionInputError(f"weights have shape {W.shape} but the target has {T.shape}; compare one shape")
    if W.size == 0 or not (np.isfinite(W).all() and np.isfinite(T).all()):
        raise AttentionInputError("weights and target must be non-empty and hold finite numbers only")
    return float(np.mean(np.abs(W - T)))


def exercise_weights(ex: Exercise, tables: Mapping[str, object]) -> np.ndarray:
    """softmax(Q K^T / sqrt(d_k)) for every head of the student's tables: (h, n, n)."""
    maps = []
    for h in range(ex.n_heads):
        Q, K = _queries_keys(ex, tables, *ex.head_tables(h))  # (n, d_k), (n, d_k)
        maps.append(scaled_dot_product_attention(Q, K, K).weights)  # (n, n); V plays no part in weights
    return np.stack(maps)  # (h, n, n)


def grade(ex: Exercise, tables: Mapping[str, object]) -> Grade:
    """Weights, score and pass (score <= threshold) of the student's tables; AttentionInputError if unusable."""
    weights = exercise_weights(ex, tables)
    s = score(weights, ex.target)
    return Grade(weights, s, s <= ex.threshold)


def _queries_keys(ex: Exercise, tables: Mapping[str, object], q_name: str, k_name: str) -> tuple:
    """Q and K of one head from the student's tables (projected through X for W exercises)."""
    mats = {}
    for name in (q_name, k_name):
        if name not in tables:
            raise AttentionInputError(f"the table {name} is missing; this exercise edits {', '.join(ex.tables)}")
        mats[name] = M = as_matrix(tables[name], name)
        rows = ex.row_labels()
        if M.shape[0] != len(rows):
            what = "token" if ex.edits == EDIT_QK else "embedding dimension of X"
            raise AttentionInputError(f"{name} has {M.shape[0]} rows but needs {len(rows)}: one per {what}")
    if mats[q_name].shape[1] != mats[k_name].shape[1]:
        raise AttentionInputError(
            f"{q_name} has {mats[q_name].shape[1]} columns but {k_name} has {mats[k_name].shape[1]}; "
            "queries and keys must have the same width d_k"
        )
    if ex.edits == EDIT_QK:
        return mats[q_name], mats[k_name]
    return ex.X @ mats[q_name], ex.X @ mats[k_name]  # (n, d_model) @ (d_model, d_k) -> (n, d_k)


# ---------------------------------------------------------------- the exercises

SENTENCE = ("the", "cat", "sat", "on", "mats")
POSITIONS = ("p0", "p1", "p2", "p3", "p4", "one")  # X's columns: a one-hot position, then a constant 1
KEY_DIMS = ("k0", "k1", "k2", "k3", "k4")


def _positions() -> np.ndarray:
    """X (5, 6): token i is the one-hot position p_i plus a constant 1 shared by every token."""
    return np.hstack([np.eye(5), np.ones((5, 1))])  # (n, d_model)


def _position_keys(c: float = 1.0) -> np.ndarray:
    """W (6, 5) that sends position p_i to c times direction k_i and ignores the constant."""
    return np.vstack([c * np.eye(5), np.zeros((1, 5))])  # (d_model, d_k)


def _previous_queries(c: float) -> np.ndarray:
    """W_q (6, 5): position p_i asks, with strength c, for key direction k_(i-1); p_0 asks for itself."""
    W = np.zeros((6, 5))  # (d_model, d_k)
    W[0, 0] = c
    W[np.arange(1, 5), np.arange(0, 4)] = c
    return W


def _on_positions(**fields) -> Exercise:
    """An exercise on SENTENCE whose X is fixed (one-hot positions and a constant 1): the projections are edited."""
    return Exercise(
        tokens=SENTENCE, edits=EDIT_W, X=_positions(), x_labels=POSITIONS, dim_labels=KEY_DIMS, threshold=0.05, **fields
    )


def _on_queries(**fields) -> Exercise:
    """An exercise whose Q and K are edited directly."""
    return Exercise(edits=EDIT_QK, tables=("Q", "K"), **fields)


def _one_hot_rows(columns: list[int]) -> np.ndarray:
    """(n, n) target whose row i puts all its weight on column columns[i]."""
    T = np.zeros((len(columns), len(columns)))
    T[np.arange(len(columns)), columns] = 1.0
    return T


def _self() -> Exercise:
    K = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0]])  # five directions, one per token
    return _on_queries(
        id="self",
        title="1. Attend to yourself",
        tokens=SENTENCE,
        task="Make every token put (almost) all its attention on itself: a bright diagonal.",
        hint="A query scores highest on the key that points the same way. Each key here already has its own "
        "direction; what should each token's query be? Longer vectors make the softmax sharper.",
        worked="Copy each key into its own query and stretch it: Q = 10·K. Then q_i·k_i = 10 while every other "
        "key scores 0 or −10, and after dividing by √3 the softmax gives each token about 0.99 of its "
        "attention.",
        start={"Q": np.zeros((5, 3)), "K": K},
        solution={"Q": 10 * K, "K": K.copy()},
        target=np.eye(5)[None],
        threshold=0.05,
        dim_labels=("d0", "d1", "d2"),
    )


def _previous() -> Exercise:
    return _on_positions(
        id="previous",
        title="2. Attend to the previous token",
        tables=("W_q", "W_k"),
        task="Each token attends to the token just before it; the first token, having none, attends "
        "to itself. X is fixed: token i is the one-hot position p_i plus a constant 1. "
        "Edit W_q and W_k (Q = X·W_q, K = X·W_k).",
        hint="With W_k as it is, key i points along k_i. Row p_i of W_q is the query of token i: which "
        "direction should it point to find token i − 1, and how strongly?",
        worked="Keep W_k (position p_i -> direction k_i) and shift W_q by one: row p_i gets 10 in column "
        "k_(i−1), row p0 gets 10 in column k0. Token i's query is then 10·k_(i−1), which scores 10 on "
        "the previous key and 0 on the others: about 0.96 of the weight after dividing by √5.",
        start={"W_q": _position_keys(), "W_k": _position_keys()},
        solution={"W_q": _previous_queries(10.0), "W_k": _position_keys()},
        target=_one_hot_rows([0, 0, 1, 2, 3])[None],
    )


def _first() -> Exercise:
    W_q = np.zeros((6, 5))
    W_q[5, 0] = 10.0  # the constant 1 of every token asks for direction k0
    return _on_positions(
        id="first",
        title="3. Attend to the first token",
        tables=("W_q", "W_k"),
        task="Every token attends to the first token, 'the' (a common pattern in trained models, a "
        "'resting place' for attention). X is fixed as in exercise 2; edit W_q and W_k.",
        hint="The column 'one' of X is 1 for every token, so row 'one' of W_q is added to every query. "
        "Which key direction belongs to the first token alone?",
        worked="Empty W_q except row 'one', which gets 10 in column k0: every query becomes 10·k0. W_k sends "
        "p_i to k_i, so only the first token's key points along k0; it scores 10, the others 0, and "
        "every row gives it about 0.96.",
        start={"W_q": _position_keys(3.0), "W_k": _position_keys(3.0)},
        solution={"W_q": W_q, "W_k": _position_keys()},
        target=_one_hot_rows([0] * 5)[None],
    )


def _uniform() -> Exercise:
    K = 3 * np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1], [0.7, 0.7]])
    return _on_queries(
        id="uniform",
        title="4. Spread attention evenly",
        tokens=SENTENCE,
        task="Every token gives every token the same weight, 1/5: a flat, uniform map. Right now the "
        "tokens attend sharply.",
        hint="softmax of equal numbers is uniform. What query gives the same dot product with every key?",
        worked="Set every query to zero: q·k = 0 for every key, every score is equal and the softmax gives 1/5 "
        "everywhere. (Making all keys equal works too.)",
        start={"Q": K.copy(), "K": K},
        solution={"Q": np.zeros((5, 2)), "K": K.copy()},
        target=np.full((1, 5, 5), 0.2),
        threshold=0.05,
        dim_labels=("d0", "d1"),
    )


EMMA_TOKENS = ("Emma", "hates", "games", "but", "she", "is", "a", "great", "friend")
EMMA_KEYS = (
    (1.2, 0.8, 1.0, 0),
    (0, 0, -0.5, 0),
    (0, 0, 1.0, -1),
    (0, 0, -1, 0),
    (1.0, 0.0, 0, -1),
    (0, 0, -0.5, 0),
    (0, 0, -1, 0),
    (0, 0, -1, 1.2),
    (0, 0, 1.0, 0),
)  # seed 003's keys
FRIEND_QUERY = (1.0, 0.9, 0.5, 1.0)  # seed 003's query of "friend": Person, Animal, Noun, Adjective


def _friend_emma() -> Exercise:
    K = np.array(EMMA_KEYS)
    start = np.zeros((9, 4))
    start[8] = FRIEND_QUERY
    target = np.full((9, 9), 1 / 9)
    target[8] = _one_hot_rows([0] * 9)[8]
    return _on_queries(
        id="friend-emma",
        title="5. friend -> Emma",
        tokens=EMMA_TOKENS,
        task="The lecture's 'Emma hates games but she is a great friend', with its readable dimensions "
        "(Person, Animal, Noun, Adjective). Make the row of **friend** put its weight on **Emma**; "
        "the other tokens ask nothing (zero queries), so they spread evenly. With 1/√d_k scaling "
        "the lecture's query of friend gives Emma only 0.30.",
        hint="friend's query already scores Emma highest (2.42), just not by enough. What happens to the "
        "softmax when you multiply one row of scores by a number larger than 1?",
        worked="Multiply friend's query by 4: (4, 3.6, 2, 4). Its dot product with Emma's key grows to 9.68 "
        "while the runner-up, great, reaches only 2.8; the same preference, four times as decisive, "
        "gives Emma about 0.93.",
        start={"Q": start, "K": K},
        solution={"Q": 4 * start, "K": K.copy()},
        target=target[None],
        threshold=0.004,
        dim_labels=("Pers", "Anim", "Noun", "Adj"),
    )


PRONOUN_TOKENS = ("Maria", "fed", "the", "dog", "because", "it", "barked", "and", "she", "smiled")
PRONOUN_KEYS = (
    (1.0, 0, 0, 0),  # Maria: a person
    (0, 0, 1, 0),
    (0, 0, 0, 0),
    (0, 1, 0, 0),  # dog: an animal
    (0, 0, 0, 0),
    (0, 0, 0, 1),  # it: a pronoun
    (0, 0, 1, 0),
    (0, 0, 0, 0),
    (1, 0, 0, 1),  # she: a pronoun that is also a person word
    (0, 0, 1, 0),
)


def _pronouns() -> Exercise:
    it, she = PRONOUN_TOKENS.index("it"), PRONOUN_TOKENS.index("she")
    start = np.zeros((10, 4))
    start[it], start[she] = (0, 1, 0, 0), (1, 0, 0, 0)  # each asks the right question, weakly
    solution = np.zeros((10, 4))
    solution[it], solution[she] = (0, 10, 0, 0), (10, 0, 0, -10)
    target = np.full((10, 10), 1 / 10)
    target[it], target[she] = np.eye(10)[PRONOUN_TOKENS.index("dog")], np.eye(10)[PRONOUN_TOKENS.index("Maria")]
    return _on_queries(
        id="pronouns",
        title="6. it -> dog, she -> Maria",
        tokens=PRONOUN_TOKENS,
        task="'Maria fed the dog because it barked and she smiled': make **it** attend to **dog** and "
        "**she** to **Maria**. The other tokens ask nothing (zero queries) and spread evenly.",
        hint="The columns are Person, Animal, Verb and Pronoun, and each pronoun already asks the right question, "
        "weakly. Making it's query longer works; making she's query longer does not: look at she's own key. "
        "Which dimension tells Maria apart from she, and what sign should the query give it?",
        worked="it asks for an animal: Q(it) = (0, 10, 0, 0) scores dog 10 and every other key 0, which gives dog "
        "0.94. she asks for a person, but her own key (1, 0, 0, 1) is a person word too: a longer (10, 0, 0, 0) "
        "ties Maria with she at 0.49 each. Ask for a person who is not a pronoun: Q(she) = (10, 0, 0, −10) "
        "scores Maria 10, she 0 and it −10, which gives Maria 0.95.",
        start={"Q": start, "K": np.array(PRONOUN_KEYS)},
        solution={"Q": solution, "K": np.array(PRONOUN_KEYS)},
        target=target[None],
        threshold=0.006,
        dim_labels=("Pers", "Anim", "Verb", "Pron"),
    )


def _two_heads() -> Exercise:
    return _on_positions(
        id="two-heads",
        title="7. Two heads, two duties",
        tables=("W_q1", "W_k1", "W_q2", "W_k2"),
        task="Two heads read the same X (as in exercise 2). Head 1 attends to the token itself; head 2 "
        "attends to the previous token (the first token to itself). The score averages both heads.",
        hint="Solve each head on its own: head 1 like exercise 1 (a query that points where its own key "
        "points, made long), head 2 like exercise 2 (a query shifted by one position).",
        worked="Head 1: W_q1 = 10·W_k1 (each position asks for its own key direction). Head 2: keep W_k2 and "
        "shift W_q2 by one, 10 in column k_(i−1) of row p_i (row p0 asks for k0). Splitting duties "
        "across heads is how real models attend to several things at once.",
        start={"W_q1": _position_keys(), "W_k1": _position_keys(), "W_q2": _position_keys(), "W_k2": _position_keys()},
        solution={
            "W_q1": _position_keys(10.0),
            "W_k1": _position_keys(),
            "W_q2": _previous_queries(10.0),
            "W_k2": _position_keys(),
        },
        target=np.stack([np.eye(5), _one_hot_rows([0, 0, 1, 2, 3])]),
    )


_BUILDERS: dict[str, Callable[[], Exercise]] = {
    "self": _self,
    "previous": _previous,
    "first": _first,
    "uniform": _uniform,
    "friend-emma": _friend_emma,
    "pronouns": _pronouns,
    "two-heads": _two_heads,
}


def list_exercises() -> list[str]:
    """The exercise ids, easiest first."""
    return list(_BUILDERS)


def load_exercise(exercise_id: str) -> Exercise:
    """A fresh Exercise for ``exercise_id`` (its arrays are new copies on every call)."""
    return build(_BUILDERS, "exercise", exercise_id)
