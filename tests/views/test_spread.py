"""The spread of answers (figures.answer_spread): a bar per option with its count, the right bar marked only after
the reveal, the count and share right in the title, option labels shown literally."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import plotly.io as pio
import pytest

from attention_rooms.questions import choice_question, key_question, number_question, tally_of
from attention_views.pure import askable, figures
from attention_views.pure.figures.spread import OTHER_COLOR, RIGHT_COLOR, RIGHT_NOTE
from tests.hostile_text import HOSTILE, live_plot_markup


def _revealed(q, values, revealed=True):
    return tally_of(dataclasses.replace(q, id=1, revealed=revealed), values)


def _bars(fig) -> tuple[list[int], list[str]]:
    """Each bar's count and colour: the right colour where right answers are in it, else the other."""
    right, other = (np.asarray(t.y, dtype=int) for t in fig.data[:2])
    assert fig.data[0].marker.color == RIGHT_COLOR and fig.data[1].marker.color == OTHER_COLOR
    assert fig.layout.barmode == "stack"
    assert [int(v) for v in fig.data[2].y] == list(right + other) == [int(t) for t in fig.data[2].text]  # above
    return [int(v) for v in right + other], [RIGHT_COLOR if r else OTHER_COLOR for r in right]


def test_counts_per_option_and_the_right_bar_after_the_reveal():
    q = key_question("Which key?", ["the", "cat", "the"], 2)
    tally = _revealed(q, [0, 2, 2, 1, 2])
    fig = figures.answer_spread(tally, askable.option_names(q))
    counts, colors = _bars(fig)
    assert counts == [1, 1, 3]
    assert colors == [OTHER_COLOR, OTHER_COLOR, RIGHT_COLOR]
    assert fig.layout.title.text == "5 answers · 3 right (60%)"
    (note,) = fig.layout.annotations
    assert note.text == RIGHT_NOTE and note.x == 2
    assert list(fig.layout.xaxis.ticktext) == ["0: the", "1: cat", "2: the"]


def test_nothing_marks_the_right_answer_before_the_reveal():
    q = choice_question("Next?", ["a", "b", "c", "d"], 1)
    fig = figures.answer_spread(_revealed(q, [1, 1, 0], revealed=False), askable.option_names(q))
    assert set(_bars(fig)[1]) == {OTHER_COLOR}
    assert not fig.layout.annotations
    assert fig.layout.title.text == "3 answers"  # no share right: it would tell the answer


@pytest.mark.parametrize(
    ("correct", "bar"),
    [(0.0, 0), (0.05, 0), (0.1, 1), (0.24, 2), (0.3, 3), (0.35, 3), (0.99, 9), (1.0, 9)],
)
def test_a_numbers_right_bar_is_the_bin_its_answer_falls_in(correct, bar):
    q = number_question("Weight?", correct)
    tally = _revealed(q, [correct])
    fig = figures.answer_spread(tally, askable.option_names(q))
    counts, colors = _bars(fig)
    assert colors.index(RIGHT_COLOR) == bar == int(np.argmax(counts))  # where tally_of counted that very answer
    assert fig.layout.title.text == "1 answer · 1 right (100%)"


def test_a_numbers_right_answers_are_marked_in_every_bin_they_fall_in():
    q = number_question("Weight?", 0.6)  # within 0.05: 0.55 .. 0.65, across the bins [0.5, 0.6) and [0.6, 0.7)
    tally = _revealed(q, [0.58, 0.51, 0.6, 0.66, 0.62])
    fig = figures.answer_spread(tally, askable.option_names(q))
    assert [int(v) for v in fig.data[0].y] == [0, 0, 0, 0, 0, 1, 2, 0, 0, 0]  # 0.58; 0.6 and 0.62
    assert [int(v) for v in fig.data[1].y] == [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]  # 0.51; 0.66
    assert fig.layout.title.text == "5 answers · 3 right (60%)"


def test_two_rounds_are_named_in_the_title():
    q = key_question("Which key?", ["a", "b"], 0)
    second = dataclasses.replace(tally_of(dataclasses.replace(q, id=1, revealed=True, round=2), [0, 0, 1]), round=2)
    assert (
        figures.answer_spread(second, ["a", "b"], rounds=2).layout.title.text == "Round 2 · 3 answers · 2 right (67%)"
    )


def test_bin_names_and_counts_of_a_number_question():
    q = number_question("Weight?", 0.24)
    fig = figures.answer_spread(_revealed(q, [0.19, 0.2, 0.24, 0.29, 0.3, 1.0]), askable.option_names(q))
    assert _bars(fig)[0] == [0, 1, 3, 1, 0, 0, 0, 0, 0, 1]
    assert fig.layout.xaxis.ticktext[2] == "0.2–0.3"
    assert fig.layout.title.text == "6 answers · 4 right (67%)"  # 0.19, 0.2, 0.24, 0.29 are within 0.05


def test_no_answers_yet():
    q = key_question("Which key?", ["a", "b"], 0)
    fig = figures.answer_spread(_revealed(q, []), ["0: a", "1: b"])
    assert fig.layout.title.text == "No answers yet"
    assert _bars(fig)[0] == [0, 0]


def test_option_labels_are_shown_literally():
    q = key_question("Which key?", list(HOSTILE), 4)
    tally = _revealed(q, list(range(len(HOSTILE))))
    fig = figures.answer_spread(tally, askable.option_names(q), projector=True)
    assert live_plot_markup(pio.to_json(fig)) == []
    assert "4: &lt;b&gt;bold&lt;/b&gt;" in fig.layout.xaxis.ticktext  # plotly decodes the entities: "<b>bold</b>"


def test_the_projector_draws_larger_text():
    q = key_question("Which key?", ["a", "b"], 0)
    tally = _revealed(q, [0])
    small, big = (figures.answer_spread(tally, ["a", "b"], projector=p) for p in (False, True))
    assert big.layout.font.size > small.layout.font.size and big.layout.height > small.layout.height
    assert json.loads(pio.to_json(big))["data"][2]["textfont"]["size"] > small.data[2].textfont.size  # the counts


def test_one_name_per_bar():
    q = key_question("Which key?", ["a", "b"], 0)
    with pytest.raises(ValueError, match="3 labels but there are 2 bars"):
        figures.answer_spread(_revealed(q, [0]), ["a", "b", "c"])
