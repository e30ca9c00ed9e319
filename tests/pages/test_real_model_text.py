"""The real-model page's text box with awkward input: empty, blank, 10,000 characters, control characters, emoji
sequences, more than 128 tokens, and the tokenizer's control tokens typed as text. Never a traceback: a message
where the text is refused, else the text's own tokens, shown as typed.

Control tokens typed in the box (``<|im_start|>``, ``<|endoftext|>``) are plain text: the page reads them as the
characters they are spelled with, never as the control token (README, docs/security.md).
"""

from __future__ import annotations

import html
import re

import pytest
from apptest_pages import ROOT, assert_clean, open_page, open_tab, plotly_figures, reopen
from streamlit.testing.v1 import AppTest

import attention_models as am
from attention_views.pure import links
from attention_views.pure.lab import MAX_TEXT_CHARS

PAGE = "real_model"
CONTROL_TYPED = "<|im_start|>user\nhi<|im_end|><|endoftext|>"


@pytest.fixture(scope="module")
def model() -> am.Model:
    return am.load("smollm2-135m")


def _typed(text: str) -> AppTest:
    at = open_page(PAGE)
    at.text_input(key="real_model_text").set_value(text).run()
    assert_clean(at)
    return at


def _ticks(at: AppTest) -> dict[int, str]:
    """The heatmap's token labels as plotly draws them (entities decoded), by token position (past 20 tokens the
    axis labels every n-th)."""
    heat = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Layer"))
    axis = heat["layout"]["yaxis"]
    return {int(v): html.unescape(t) for v, t in zip(axis["tickvals"], axis["ticktext"], strict=True)}


def _tokens(model: am.Model, ids: list[int], at: AppTest) -> dict[int, str]:
    """The tokens of ``ids`` at the positions the heatmap labels."""
    return {k: model.token(ids[k]) for k in _ticks(at)}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "there is no token to run: type some text"),
        ("x" * 10_000, "the text has 500 tokens; this page runs at most 128"),  # the box keeps 2,000 characters
        ("word " * 200, "this page runs at most 128"),
    ],
    ids=["empty", "10000-characters", "200-tokens"],
)
def test_a_refused_text_gets_a_message_that_says_why(text, said):
    at = _typed(text)
    assert len(at.session_state["session"].lab.model.text) <= MAX_TEXT_CHARS
    errors = [e.value for e in at.error]
    assert any(said in e for e in errors), errors
    assert not plotly_figures(at)  # refused: no run is drawn


@pytest.mark.parametrize(
    "text",
    ["   ", "\t\n", "a\x00b\x07c\x1b[31md\x7f", "👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 e\u0301", "\u202eevil"],
    ids=["spaces", "tab-newline", "control-characters", "emoji-sequences", "rtl-override"],
)
def test_an_odd_but_runnable_text_runs_and_shows_its_tokens_as_typed(model, text):
    at = _typed(text)
    assert not at.error, [e.value for e in at.error]
    ids = model.tokenize(text, control_tokens=False)
    assert model.decode(ids) == text  # byte-level BPE: every character survives
    assert _ticks(at) == _tokens(model, ids, at)
    assert at.session_state["session"].lab.model.text == text


def test_typed_control_tokens_are_read_as_text_not_as_control_tokens(model):
    as_control = model.tokenize(CONTROL_TYPED)  # what the library does with them by default
    assert model.token(as_control[0]) == "<|im_start|>" and as_control[-1] == 0
    as_text = model.tokenize(CONTROL_TYPED, control_tokens=False)
    control_ids = {i for i in range(model.vocab_size) if model.token(i).startswith("<|") and len(model.token(i)) > 4}
    assert control_ids >= {0, 1, 2} and not control_ids & set(as_text)
    at = _typed(CONTROL_TYPED)
    assert not at.error, [e.value for e in at.error]
    ticks = _ticks(at)
    assert ticks == _tokens(model, as_text, at) and len(as_text) > 10
    assert "".join(model.token(i) for i in as_text) == CONTROL_TYPED
    assert at.session_state["session"].lab.model.text == CONTROL_TYPED


def test_a_link_with_more_text_than_the_box_takes_is_refused_with_a_message():
    payload = links.lab_payload(links.new_lab("emma-friend"), full=True)
    payload["rm"]["t"] = "x" * 10_000
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{PAGE}.py")
    at.query_params["scenario"], at.query_params["state"] = "emma-friend", links.encode_payload(payload)
    at.run()
    assert_clean(at)
    assert any("real-model field 't'" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.session_state["session"].lab.model.text == am.DEFAULT_SENTENCE  # the scenario's defaults


def test_the_link_of_a_text_with_control_tokens_reopens_the_same_tokens(model):
    at = _typed(CONTROL_TYPED)
    other = reopen(at, PAGE, "emma-friend")
    assert_clean(other)
    assert _ticks(other) == _ticks(at)


def test_a_head_opened_on_hostile_text_names_its_sentence_as_typed_at_the_top_of_the_playground():
    from tests.hostile_text import MODEL_TEXT, markup_problems, unescape

    at = _typed(MODEL_TEXT)
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")  # AppTest reruns the page it was given; a browser follows the switch
    assert_clean(at.run())
    origin = next(m.value for m in at.markdown if "These are the real numbers of" in m.value)
    assert MODEL_TEXT in unescape(origin)
    assert not markup_problems(at)
    at.button(key="playground_put_back").click().run()  # the top-3 line: tokens of the same text, as data
    assert_clean(at)
    assert not markup_problems(at)


def _as_shown(markdown: str) -> str:
    """Markdown source as the page shows it: CommonMark's backslash escapes of punctuation undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


@pytest.mark.parametrize(
    ("answer", "pieces"),
    [
        ("<|im_start|>", "is 7 tokens ('<', '|', 'im', '_', 'start', '|', '>')"),  # its characters, not id 1
        ("\u202e Mary", "is 3 tokens ('\\xe2\\x80', '\\xae', ' Mary')"),  # byte pieces, one backslash each
        (" Mary\n", "is 2 tokens (' Mary', '\\n')"),
    ],
)
def test_a_typed_answer_is_text_and_its_pieces_are_listed_with_whitespace_visible(answer, pieces):
    at = open_tab(open_page(PAGE), "real_model_tab", "Attribution")
    at.text_input(key="real_model_answer").set_value(answer).run()
    assert_clean(at)
    shown = [_as_shown(e.value) for e in at.error]
    assert any(pieces in e for e in shown), shown


def test_typed_control_tokens_in_the_patching_prompts_are_their_characters(model):
    clean, corrupt = "<|im_start|> hi", " hi there"
    n_text, n_corrupt = len(model.tokenize(clean, control_tokens=False)), len(model.tokenize(corrupt))
    assert len(model.tokenize(clean)) == n_corrupt == 2 and n_text == 8  # as control tokens the two would match
    at = open_page(PAGE)
    view = at.session_state["session"].lab.model
    view.clean, view.corrupt = clean, corrupt
    open_tab(at, "real_model_tab", "Patching")
    assert_clean(at)
    said = f"has {n_text} tokens and the corrupted one {n_corrupt}"
    assert any(said in e.value for e in at.error), [e.value for e in at.error]
