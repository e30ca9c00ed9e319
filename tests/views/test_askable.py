"""The questions a lecturer can ask (attention_views.pure.askable): their right answers against weights
recomputed here with plain NumPy (softmax written out), ties refused, labels kept as data, and the real model's
next-token question against its own run."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import attention_core as ac
import attention_models as am
from attention_rooms.questions import QuestionKind, check_question
from attention_views.pure import askable
from attention_views.pure.askable import Ask, AskError
from attention_views.pure.lab import ModelView, new_lab
from attention_views.pure.model_input import input_ids, shown_token
from attention_views.pure.single_head import run_single_head
from attention_views.pure.tables import TOKEN, matrix_table
from tests.hostile_text import HOSTILE, LONE_SURROGATE


def _numbers(frame) -> np.ndarray:
    return frame[[c for c in frame.columns if c != TOKEN]].to_numpy(dtype=np.float64)


def numpy_weights(lab) -> np.ndarray:
    """The lab's (n_q, n_k) weights, recomputed: Q K^T, scaled, causal or no mask, softmax as exp / sum."""
    t = lab.tables
    if "Q" in t:
        Q, K = _numbers(t["Q"]), _numbers(t["K"])
    else:
        X = _numbers(t["X"])
        Q, K = X @ t["W_q"].to_numpy(dtype=np.float64), X @ t["W_k"].to_numpy(dtype=np.float64)
    scale = {"sqrt": 1 / np.sqrt(Q.shape[1]), "none": 1.0}[lab.scale_mode]
    S = Q @ K.T * scale / lab.temperature
    if lab.mask == "causal":
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def direct_lab(Q, K, q_tokens, k_tokens, mask: str = "none"):
    lab = new_lab("mammal-query")
    dims = [f"d{j}" for j in range(np.shape(Q)[1])]
    lab.tables = {
        "Q": matrix_table(np.asarray(Q, float), q_tokens, dims, tokens=True),
        "K": matrix_table(np.asarray(K, float), k_tokens, dims, tokens=True),
        "V": matrix_table(np.eye(len(k_tokens)), k_tokens, [f"v{j}" for j in range(len(k_tokens))], tokens=True),
    }
    lab.mask, lab.scale_mode, lab.temperature = mask, "sqrt", 1.0
    return lab


SCENARIOS = [s for s in ac.list_scenarios() if new_lab(s).mask in ("none", "causal")]


def test_the_recomputation_covers_most_scenarios():
    assert len(SCENARIOS) >= 8, SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_top_key_and_a_weight_are_those_numpy_computes(scenario):
    lab = new_lab(scenario)
    head, W = run_single_head(lab), numpy_weights(lab)
    asked = 0
    for i, row in enumerate(W):
        shown = np.round(row, 2)
        for j in range(row.size):
            q = askable.weight_question(head, i, j)
            assert q.kind is QuestionKind.NUMBER and q.correct == float(f"{row[j]:.2f}"), (i, j, row[j])
        if (shown == shown.max()).sum() > 1:
            with pytest.raises(AskError, match="same weight"):
                askable.top_key_question(head, i)
            continue
        q = askable.top_key_question(head, i)
        assert q.correct == int(np.argmax(row)) and q.options == tuple(head.key_tokens)
        check_question(q)  # the store takes it as it is
        asked += 1
    assert asked >= 1


def test_a_tie_as_shown_is_refused_naming_the_tied_keys():
    # keys 0 and 2 identical: query 0's weight is split between them exactly; keys 1 and 3 differ in the 3rd digit
    K = [[2.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 1.0005]]
    head = run_single_head(direct_lab([[1.0, 0.0], [0.0, 1.0]], K, ["a", "b"], ["x", "y", "x", "z"]))
    with pytest.raises(AskError) as err:
        askable.top_key_question(head, 0)
    assert "“x” (position 0)" in str(err.value) and "“x” (position 2)" in str(err.value)
    with pytest.raises(AskError, match="position 1.*position 3"):  # 0.3347 vs 0.3348: both "0.33" on the page
        askable.top_key_question(head, 1)


def test_a_query_that_sees_no_key_is_not_asked_about():
    lab = direct_lab([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], ["a", "b"], ["x", "y"], mask="custom")
    lab.mask_custom = np.array([[False, False], [True, True]])
    head = run_single_head(lab)
    with pytest.raises(AskError, match="attends to no key"):
        askable.top_key_question(head, 0)
    assert askable.top_key_question(head, 1).correct == 1


def test_repeated_labels_are_told_apart_by_position():
    head = run_single_head(
        direct_lab([[0.0, 3.0]], [[3.0, 0.0], [0.0, 1.0], [0.0, 3.0]], ["the"], ["the", "cat", "the"])
    )
    q = askable.top_key_question(head, 0)
    assert q.correct == 2 and q.options == ("the", "cat", "the")
    assert askable.option_names(q) == ["0: the", "1: cat", "2: the"]
    assert askable.answer_text(q, q.correct) == "2: the"


def test_positions_outside_the_view_are_refused():
    head = run_single_head(new_lab("mammal-query"))
    n_q, n_k = head.result.weights.shape
    with pytest.raises(AskError, match=f"no query at position {n_q}"):
        askable.top_key_question(head, n_q)
    with pytest.raises(AskError, match=f"no key at position {n_k}"):
        askable.weight_question(head, 0, n_k)


@pytest.mark.parametrize("label", [*HOSTILE, LONE_SURROGATE, "x" * 250])
def test_labels_go_into_questions_as_data_within_the_stores_bounds(label):
    head = run_single_head(direct_lab([[0.0, 3.0]], [[3.0, 0.0], [0.0, 3.0]], ["q"], ["a", "b"]))
    head = dataclasses.replace(head, query_tokens=[label], key_tokens=["a", label])  # a link's JSON can hold \ud800
    for q in (askable.top_key_question(head, 0), askable.weight_question(head, 0, 1)):
        stored = check_question(q)  # refused if too long or not storable
        kept = askable.cut(label, askable.PROMPT_LABEL_CHARS)
        assert f"“{kept}” (position 0)" in stored.prompt
    q = askable.top_key_question(head, 0)
    assert q.options[1] == askable.cut(label, 100)
    text = label.replace("\ud800", "?")
    assert q.options[1] == (text if len(text) <= 100 else text[:99] + "…")


def test_offered_questions_by_page():
    assert askable.offered("playground") == (Ask.TOP_KEY, Ask.TAP_KEY, Ask.WEIGHT)  # its heatmap takes taps
    assert askable.offered("step_by_step") == (Ask.TOP_KEY, Ask.WEIGHT)
    assert askable.offered("real_model") == (Ask.NEXT_TOKEN,)
    assert askable.offered("home") == ()


# ---- the real model ----


class FakeModel:
    def token(self, i: int) -> str:
        return f"t{i}"

    def decode(self, ids: list[int]) -> str:
        return " ".join(f"t{i}" for i in ids)


def fake_run(probs, ids=(1, 2, 3)):
    return SimpleNamespace(next_token_probs=np.asarray(probs, dtype=np.float32), token_ids=list(ids))


def test_the_next_token_shuffle_is_fixed_by_the_input_and_moves_the_answer():
    probs = [0.05, 0.4, 0.1, 0.3, 0.15]
    places = set()
    for start in range(20):
        ids = (start, start + 1)
        q = askable.next_token_question(FakeModel(), fake_run(probs, ids))
        assert q == askable.next_token_question(FakeModel(), fake_run(probs, ids))  # same input, same order
        assert sorted(q.options) == ["'t1'", "'t2'", "'t3'", "'t4'"] and q.options[q.correct] == "'t1'"
        places.add(q.correct)
    assert len(places) >= 3  # the right answer is not always in the same place


def test_a_tied_top_token_is_refused():
    with pytest.raises(AskError, match="equally likely"):
        askable.next_token_question(FakeModel(), fake_run([0.1, 0.4, 0.4, 0.1]))


@pytest.fixture(scope="module")
def model() -> am.Model:
    return am.load("smollm2-135m")


def test_the_real_models_next_token_question(model):
    view = ModelView(preset="custom", text="When Mary and John went to the store, John gave a drink to")
    run = model.run(input_ids(model, view))
    q = askable.next_token_question(model, run)
    probs = run.next_token_probs.astype(np.float64)
    ranked = np.argsort(probs)[::-1]  # ids, most likely first
    assert q.options[q.correct] == shown_token(model.token(int(ranked[0]))) == "' Mary'"
    assert sorted(q.options) == sorted(shown_token(model.token(int(i))) for i in ranked[:4])
    assert q.prompt.endswith("John gave a drink to”?")
    check_question(q)


def test_the_lecturers_csv_holds_every_round_and_option_with_its_count_and_right_answers():
    from attention_rooms.questions import tally_of, tap_question
    from attention_views.pure.tables import csv_text

    q = tap_question('=HYPERLINK("http://evil.example")', ["the", "=cat", "sat"], 1, row=0)
    first = tally_of(dataclasses.replace(q, id=1, revealed=True, round=2, shown=frozenset({1})), [0, 1, 1], 1)
    second = tally_of(dataclasses.replace(q, id=1, revealed=True, round=2, shown=frozenset({1})), [1, 1, 1])
    frame = askable.tallies_frame([(dataclasses.replace(q, id=1, revealed=True, round=2), [first, second])])
    assert list(frame["round"]) == [1, 1, 1, 2, 2, 2]
    assert list(frame["answers"]) == [1, 2, 0, 0, 3, 0] and list(frame["of them right"]) == [0, 2, 0, 0, 3, 0]
    assert set(frame["kind"]) == {"tap"} and set(frame["right answer"]) == {"1: =cat"}
    text = csv_text(frame, index=False)
    assert "'=HYPERLINK" in text and ",=" not in text  # no cell a spreadsheet would run
