"""The questions a lecturer can ask about the current view, with their answers computed by the code that draws it.

- A single-head view (the playground, step by step: the lab's tables run by ``single_head.run_single_head``,
  i.e. ``attention_core.scaled_dot_product_attention``): "Which key does query q attend to most?" (a key
  question over the key token labels; right: the argmax of q's row of weights) and "What is the weight of
  query q on key k?" (a number question; right: the weight rounded as the heatmap shows it, two decimals).
- The real model (``attention_models``): "What does it predict next?" (a choice question: the top-1 token and
  the next most likely ones as distractors, in a shuffled order fixed by the input's token ids).

**Ties.** A key question has one right answer, so a query whose largest weight is shared, as the page shows
weights (two decimals), by two or more keys is not asked about: :class:`AskError` names the tied keys (a
uniform row, identical keys, a row that is all masked). The same for a next token whose probability equals
the runner-up's. Labels are user text: they go into prompts and options as data (cut to fit the store's
bounds, lone surrogates replaced); repeated labels are told apart by position, as answers are indices.
"""

from __future__ import annotations

import enum

import numpy as np
import pandas as pd

import attention_models as am
from attention_rooms.limits import MAX_OPTION_CHARS, NUMBER_BINS
from attention_rooms.questions import (
    BIN_EDGES,
    Question,
    QuestionKind,
    Tally,
    Value,
    choice_question,
    key_question,
    number_question,
    tap_question,
)
from attention_views.pure.formats import cell
from attention_views.pure.lab import MODEL_TITLE, SingleHead
from attention_views.pure.model_input import shown_token
from attention_views.pure.tables import printable

PROMPT_LABEL_CHARS = 40  # a label quoted in a prompt (two fit the store's MAX_PROMPT_CHARS with room to spare)
NEXT_TOKEN_OPTIONS = 4  # the model's top-1 and the three next most likely tokens


class Ask(enum.StrEnum):
    """What the lecturer can ask about (the panel's choice; internal values, never display labels)."""

    TOP_KEY = "top_key"
    TAP_KEY = "tap_key"
    WEIGHT = "weight"
    NEXT_TOKEN = "next_token"


ASK_LABELS = {
    Ask.TOP_KEY: "Which key does a query attend to most?",
    Ask.TAP_KEY: "Tap the key a query attends to most (on the heatmap)",
    Ask.WEIGHT: "What is the weight of one cell?",
    Ask.NEXT_TOKEN: "What does the model predict next?",
}
SINGLE_HEAD_PAGES = ("playground", "step_by_step")
TAP_PAGE = "playground"  # its heatmap takes a student's tap
MODEL_PAGES = ("real_model",)


class AskError(ValueError):
    """The view does not allow this question (a tie, a position out of range); the message says why."""


def offered(page: str) -> tuple[Ask, ...]:
    """The questions the page ``page`` (a navigation name) can ask about, in the panel's order."""
    if page == TAP_PAGE:
        return (Ask.TOP_KEY, Ask.TAP_KEY, Ask.WEIGHT)
    if page in SINGLE_HEAD_PAGES:
        return (Ask.TOP_KEY, Ask.WEIGHT)
    if page in MODEL_PAGES:
        return (Ask.NEXT_TOKEN,)
    return ()


def cut(label: str, n: int) -> str:
    """``label`` as storable text of at most ``n`` characters (an ellipsis where it was cut)."""
    text = printable(str(label))
    return text if len(text) <= n else text[: n - 1] + "…"


def token_name(labels: list[str], i: int) -> str:
    """How a prompt names token ``i``: its label in quotes and its position (labels may repeat)."""
    return f"“{cut(labels[i], PROMPT_LABEL_CHARS)}” (position {i})"


def _position(i: int, n: int, what: str) -> int:
    if not 0 <= i < n:
        raise AskError(f"there is no {what} at position {i}: positions are 0 to {n - 1}")
    return int(i)


def top_key_question(head: SingleHead, query: int, tap: bool = False) -> Question:
    """Which key does ``query`` attend to most? Right: the argmax of its row of ``head.result.weights``. ``tap``:
    answered by a tap on that key's column in the query's row of the heatmap (or as a key question)."""
    W = head.result.weights  # (n_q, n_k), rows sum to 1 (or 0 where every key is masked)
    i = _position(query, W.shape[0], "query")
    row = W[i]  # (n_k,)
    best = int(np.argmax(row))
    shown = [cell(w) for w in row]
    tied = [j for j in range(row.size) if shown[j] == shown[best]]
    who = token_name(head.query_tokens, i)
    if float(row[best]) == 0.0:
        raise AskError(f"query {who} attends to no key (every key is masked): ask about another query")
    if len(tied) > 1:
        keys = ", ".join(token_name(head.key_tokens, j) for j in tied)
        raise AskError(
            f"query {who} gives the same weight, as shown ({shown[best]}), to keys {keys}: ask about another query"
        )
    options = [cut(label, MAX_OPTION_CHARS) for label in head.key_tokens]
    if tap:
        return tap_question(
            f"Tap the key that query {who} attends to most, in its row of the heatmap.", options, best, i
        )
    return key_question(f"Which key does query {who} attend to most?", options, best)


def weight_question(head: SingleHead, query: int, key: int) -> Question:
    """What is the weight of ``query`` on ``key``? Right: the weight as the heatmap shows it (two decimals)."""
    W = head.result.weights  # (n_q, n_k)
    i, j = _position(query, W.shape[0], "query"), _position(key, W.shape[1], "key")
    prompt = f"What is the weight of query {token_name(head.query_tokens, i)} on key {token_name(head.key_tokens, j)}?"
    return number_question(prompt, float(cell(W[i, j])))


def next_token_question(model: am.Model, run: am.ModelRun, n_options: int = NEXT_TOKEN_OPTIONS) -> Question:
    """What does the model predict after ``run``'s tokens? The top-1 and the next ``n_options - 1`` most likely
    tokens, shuffled by a generator seeded with the token ids (the same input, the same order)."""
    probs = run.next_token_probs  # (vocab,)
    top = np.argsort(-probs, kind="stable")[:n_options]  # (n_options,) ids, most likely first
    if probs[top[0]] == probs[top[1]]:
        raise AskError(f"the two most likely next tokens are equally likely ({probs[top[0]]:.3g}): no single answer")
    order = np.random.default_rng(list(run.token_ids)).permutation(top.size)  # (n_options,) a fixed shuffle
    options = [cut(shown_token(model.token(int(top[k]))), MAX_OPTION_CHARS) for k in order]
    tail = cut(model.decode(list(run.token_ids[-8:])), 2 * PROMPT_LABEL_CHARS)
    prompt = f"What does {MODEL_TITLE} predict next after “…{tail}”?"
    return choice_question(prompt, options, int(np.flatnonzero(order == 0)[0]))


def option_names(q: Question) -> list[str]:
    """The name of each option as widgets and the spread show it: "position: label" for a key (labels repeat),
    the option for a choice, the bin ("0.3–0.4") for a number."""
    if q.kind is QuestionKind.KEY:
        return [f"{i}: {label}" for i, label in enumerate(q.options)]
    if q.kind is QuestionKind.CHOICE:
        return list(q.options)
    return [f"{BIN_EDGES[b]:.1f}–{BIN_EDGES[b + 1]:.1f}" for b in range(NUMBER_BINS)]


def answer_text(q: Question, value: Value) -> str:
    """An answer (or the right one) as text: the option's name, or the number with two decimals."""
    if q.kind is QuestionKind.NUMBER:
        return f"{value:.2f}"
    return option_names(q)[int(value)]


def tallies_frame(asked: list[tuple[Question, list[Tally]]]) -> pd.DataFrame:
    """A class's questions and their answers, one row per question, round and option (or bin): what the lecturer
    downloads. ``asked``: each question (with its correct answer) and its tallies, one per round."""
    rows = [
        {
            "question": q.id,
            "prompt": q.prompt,
            "kind": "tap" if q.row is not None else str(q.kind),
            "right answer": answer_text(q, q.correct),
            "revealed": q.revealed,
            "round": tally.round,
            "shown to the class": q.readable(tally.round),
            "answer": name,
            "answers": count,
            "of them right": right,
        }
        for q, tallies in asked
        for tally in tallies
        for name, count, right in zip(option_names(q), tally.counts, tally.right_counts, strict=True)
    ]
    return pd.DataFrame(rows, columns=TALLY_COLUMNS)


TALLY_COLUMNS = (
    "question", "prompt", "kind", "right answer", "revealed", "round", "shown to the class", "answer", "answers",
    "of them right",
)  # fmt: skip
