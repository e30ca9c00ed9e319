"""The real model's interpretability tabs and the playground's "Put back into the model", headless (AppTest),
against attention_models run independently."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from apptest_pages import _in_order, assert_clean, link_state, open_page, open_tab, plotly_figures, sent_array
from streamlit.testing.v1 import AppTest

import attention_models as am
from attention_core.head_scores import duplicate_token_score, head_scores, strongest_head_type
from attention_models.interp import Patch, patched_logit_diffs
from attention_views.pure import links
from attention_views.pure.figures.base import LIGHT_TEXT
from attention_views.pure.single_head import run_single_head
from attention_views.ui.sections import interp, model_runs
from attention_views.ui.sections import real_model as rm
from tests.float_bounds import assert_within
from tests.models.conftest import LOGIT_DIFF

PAGE = "real_model"
TAB = "real_model_tab"
SLOW = 900  # s: patching all heads and residual rows on a busy 2-core machine


@pytest.fixture(scope="module")
def model() -> am.Model:
    return am.load("smollm2-135m")


def _figure(at: AppTest, title: str) -> dict:
    return next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith(title))


def _put_back_tables(at: AppTest) -> list:
    """The playground's next-token tables: the model's own head, then with the playground's."""
    return [d.value for d in at.dataframe if "next token" in d.value.columns]


def test_a_head_put_back_with_a_hotter_softmax_changes_the_prediction_and_undo_restores_it(model):
    at = open_page(PAGE)
    at.number_input(key="real_model_layer").set_value(23).run()
    at.number_input(key="real_model_head").set_value(3).run()
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")  # AppTest reruns the page it was given; a browser follows the switch
    assert_clean(at.run())
    at.slider(key="playground_temperature").set_value(5.0).run()
    at.button(key="playground_put_back").click().run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    assert lab.origin.put_back and (lab.origin.layer, lab.origin.head) == (23, 3)
    W = run_single_head(lab).result.weights  # (T, T) the playground's weights at temperature 5
    ids = model.tokenize(am.DEFAULT_SENTENCE)
    own, edited = model.run(ids), model.run(ids, head_weights={(23, 3): W})
    before, after = _put_back_tables(at)
    assert after["next token"][0] == before["next token"][0] == repr(" Mary")
    mary = model.tokenize(" Mary")[0]
    assert after["probability"][0] == pytest.approx(edited.next_token_probs[mary], abs=1e-9)
    assert before["probability"][0] == pytest.approx(own.next_token_probs[mary], abs=1e-9)
    assert own.next_token_probs[mary] - edited.next_token_probs[mary] > 0.02  # the head's focus mattered
    loss = next(m for m in at.metric if m.label.startswith("Loss over the input"))
    assert float(loss.value) == pytest.approx(model.loss(edited), abs=5e-4)
    again = links.from_json(links.to_json(lab), model_runs.head_lab)[
        0
    ]  # the saved view carries the head and that it is put back
    assert again.origin == lab.origin
    at.button(key="playground_put_back_undo").click().run()
    assert_clean(at)
    assert not at.session_state["session"].lab.origin.put_back
    assert not _put_back_tables(at)
    assert not any(m.label.startswith("Loss over the input") for m in at.metric)


def _summary(at: AppTest) -> str:
    """The top-3 line of the summary at the top of the playground."""
    return next(m.value for m in at.markdown if ", next token: " in m.value)


def _expected_line(model: am.Model, run: am.ModelRun, own: am.ModelRun | None) -> list[str]:
    """The summary's cells, computed apart from the page: token and probability, and the change against ``own``."""
    cells = []
    for i in np.argsort(run.next_token_probs)[::-1][:3]:
        p = run.next_token_probs[i]
        change = "" if own is None else f"({p - own.next_token_probs[i]:+.3f})"
        cells.append((f"{model.token(int(i))!r} {p:.3f}", change))
    return cells


def test_the_summary_beside_the_edits_shows_the_full_sections_top_three_and_their_change_and_undo_restores_them(
    model,
):
    at = open_page(PAGE)
    at.number_input(key="real_model_layer").set_value(23).run()
    at.number_input(key="real_model_head").set_value(3).run()
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")
    ids = model.tokenize(am.DEFAULT_SENTENCE)
    own = model.run(ids)
    line = _summary(at.run())
    assert_clean(at)
    assert line.startswith("**The model's own head**")
    for cell, _ in _expected_line(model, own, None):
        assert cell in line, (cell, line)
    assert not _put_back_tables(at)  # the top 10 and the loss only while the head is put back
    at.slider(key="playground_temperature").set_value(5.0).run()
    at.button(key="playground_put_back").click().run()
    assert_clean(at)
    edited = model.run(ids, head_weights={(23, 3): run_single_head(at.session_state["session"].lab).result.weights})
    line = _summary(at)
    assert line.startswith("**With your head**")
    for cell, change in _expected_line(model, edited, own):
        assert cell in line and change in line, (cell, change, line)
    before, after = _put_back_tables(at)  # the full section below says the same
    for k in range(3):
        assert f"{after['next token'][k]} {after['probability'][k]:.3f}" in line
    assert f"({after['probability'][0] - before['probability'][0]:+.3f})" in line  # ' Mary', first in both
    order = [n for n in _in_order(at.main) if n.type in ("markdown", "slider", "dataframe")]
    where = {
        "summary": next(k for k, n in enumerate(order) if n.type == "markdown" and n.value == line),
        "temperature": next(k for k, n in enumerate(order) if n.type == "slider"),
        "tables": next(k for k, n in enumerate(order) if n.type == "dataframe" and "next token" in n.value),
    }
    assert where["summary"] < where["temperature"] < where["tables"], where  # the summary sits above the edits
    at.button(key="playground_put_back_undo").click().run()
    assert_clean(at)
    line = _summary(at)
    assert line.startswith("**The model's own head**") and "(" not in line
    for cell, _ in _expected_line(model, own, None):
        assert cell in line


def test_attribution_shows_the_logit_difference_and_its_parts_sum_to_it(model):
    at = open_tab(open_page(PAGE), TAB, "Attribution")
    assert_clean(at)
    run = model.run(am.DEFAULT_SENTENCE)
    mary, john = model.tokenize(" Mary")[0], model.tokenize(" John")[0]
    shown = float(next(m for m in at.metric if "at the last token" in m.label).value)
    assert shown == pytest.approx(am.logit_diff(run, mary, john), abs=0.005)
    heads = sent_array(_figure(at, "Each head's part")["data"][0]["marker"]["color"]).reshape(30, 9)
    np.testing.assert_allclose(heads, am.direct_logit_attribution(run, mary, john)["heads"], atol=1e-6)
    bars = sent_array(_figure(at, "The embeddings' and each MLP's part")["data"][0]["y"])
    assert bars.shape == (31,)
    assert heads.sum() + bars.sum() == pytest.approx(am.logit_diff(run, mary, john), abs=1e-3)
    assert any("The parts add up to it" in m.value for m in at.markdown)


def test_an_answer_that_is_not_one_token_is_refused_with_its_pieces():
    at = open_tab(open_page(PAGE), TAB, "Attribution")
    at.text_input(key="real_model_answer").set_value("Mary Poppins").run()
    assert_clean(at)
    pieces = "is 4 tokens ('Mary', ' Pop', 'p', 'ins'); type exactly one token"
    assert any(pieces in e.value for e in at.error), [e.value for e in at.error]
    assert not any("at the last token" in m.label for m in at.metric)


def test_patching_the_defaults_shows_each_heads_share_and_the_residual_rows(model):
    at = open_page(PAGE)
    at.session_state[TAB] = "Patching"
    at.run(timeout=SLOW)
    assert_clean(at)
    shares = sent_array(_figure(at, "Share restored by each head")["data"][0]["marker"]["color"]).reshape(30, 9)
    mary, john = model.tokenize(" Mary")[0], model.tokenize(" John")[0]
    clean, corrupt = model.run(am.IOI.clean), model.run(am.IOI.corrupt)
    ld_clean, ld_corrupt = am.logit_diff(clean, mary, john), am.logit_diff(corrupt, mary, john)
    # two float32 evaluations of a logit difference after 30 layers are at most ``spread`` apart (Hugging Face's own
    # float32 error, stored with the reference: tests/models/conftest.py); a share (p - c) / (l - c) then moves by at
    # most spread * (2 + 2 |share|) / |l - c|
    spread = LOGIT_DIFF
    for layer, head in ((23, 3), (5, 0)):  # one head patched on its own, independently of the page
        patched = patched_logit_diffs(clean, corrupt, [Patch(layer, head=head)], mary, john)[0]
        share = (patched - ld_corrupt) / (ld_clean - ld_corrupt)
        bound = spread * (2 + 2 * abs(share)) / abs(ld_clean - ld_corrupt)
        assert_within(shares[layer, head], share, bound, f"head {layer}.{head}'s share")
    rows = _figure(at, "Share restored by each residual row")
    z = sent_array(rows["data"][0]["z"])
    assert z.shape == (31, len(clean.token_ids))
    bound = spread * 4 / abs(ld_clean - ld_corrupt)  # shares of 1 and 0: the formula above
    assert_within(z[-1, -1], 1.0, bound, "the last output at the last token: all of it")
    assert_within(z[-1, :-1], np.zeros(z.shape[1] - 1), bound, "the last output elsewhere: nothing reaches the answer")
    assert rows["layout"]["xaxis"]["ticktext"][3] == " John"  # the clean prompt's tokens on the x axis


def test_a_patching_job_runs_each_prompt_once_and_gives_what_patching_the_prompts_gives(model, monkeypatch):
    clean_text, corrupt_text = "Mary met John, and John thanked", "John met Mary, and Mary thanked"
    mary, john = model.tokenize(" Mary")[0], model.tokenize(" John")[0]
    clean, corrupt = model.tokenize(clean_text), model.tokenize(corrupt_text)
    expected_heads = am.patch_heads(model, clean_text, corrupt_text, mary, john)  # the prompts as text, unpatched
    expected_rows = am.patch_residual(model, clean_text, corrupt_text, mary, john)
    forwards: list[list[int]] = []
    run = model.run

    def counted_run(text, *args, **kwargs):
        forwards.append(list(text))
        return run(text, *args, **kwargs)

    monkeypatch.setattr(model, "run", counted_run)
    job = interp.PatchingJob()
    interp._patch(model, job, (tuple(clean), tuple(corrupt), mary, john), (clean_text, corrupt_text, " Mary", " John"))
    assert job.done.is_set() and job.error is None, job.error
    assert sorted(forwards) == sorted([clean, corrupt])  # one forward pass of each prompt for the whole job
    np.testing.assert_array_equal(job.result.heads, expected_heads)  # the same float32 runs: the same numbers
    np.testing.assert_array_equal(job.result.residual, expected_rows)
    assert job.result.tokens == tuple(model.run(clean).tokens)


@pytest.fixture
def fresh_patching_jobs():
    """This process's patching jobs and its default job forgotten before and after the test (the next test that
    opens the page starts the real job again)."""
    interp.start_default_patching.clear()
    interp.patching_jobs.clear()
    yield
    interp.start_default_patching.clear()
    interp.patching_jobs.clear()


def test_every_session_shares_the_processs_one_default_patching_job(model, monkeypatch, fresh_patching_jobs):
    pairs = []

    def recorded(model, job, key, names):  # stands for the 10 s of patching: records the pair, finishes at once
        pairs.append(key)
        job.done.set()

    monkeypatch.setattr(interp, "_patch", recorded)
    for _ in range(3):  # three students open the page, one after another
        assert_clean(open_page(PAGE))
    assert pairs == [interp.default_pair(model)[0]]
    assert interp.patching_jobs().get(pairs[0]) is interp.start_default_patching()


def test_patching_prompts_of_different_lengths_get_a_message():
    at = open_page(PAGE)
    at.session_state["session"].lab.model.corrupt = "When John and Mary went to the big store, Mary gave a drink to"
    open_tab(at, TAB, "Patching")
    assert_clean(at)
    assert any("has 14 tokens and the corrupted one 15" in e.value for e in at.error), [e.value for e in at.error]
    assert not any(b.key == "real_model_patch" for b in at.button)


def test_the_logit_lens_last_row_is_the_models_prediction(model):
    at = open_tab(open_page(PAGE), TAB, "Logit lens")
    assert_clean(at)
    run = model.run(am.DEFAULT_SENTENCE)
    lens = _figure(at, "Logit lens")["data"][0]
    z, text = sent_array(lens["z"]), [[_shown(t) for t in row] for row in _written(_figure(at, "Logit lens"))]
    T, shown = len(run.token_ids), interp.LENS_COLUMNS  # the last 8 positions of 14 at first
    assert z.shape == (31, shown) and len(text) == 31
    assert _figure(at, "Logit lens")["layout"]["xaxis"]["ticktext"] == [t for t in run.tokens[T - shown :]]
    best = int(np.argmax(run.next_token_probs))
    assert text[-1][-1] == "' Mary'" and model.token(best) == " Mary"  # in quotes: its space is seen
    assert z[-1, -1] == pytest.approx(float(run.next_token_probs[best]), abs=1e-6)
    first = model.token(int(am.logit_lens(run, T - shown)[13].argmax()))  # the first shown, after layer 12
    assert text[13][0] == _cell(first)
    at.slider(key="real_model_lens_first").set_value(0).run()
    assert _shown(_written(_figure(at, "Logit lens"))[13][0]) == _cell(
        model.token(int(am.logit_lens(run, 0)[13].argmax()))
    )
    assert any("' Mary'" in c.value for c in at.caption)


def _written(fig: dict) -> list[list[str]]:
    """The first heatmap's cell text as drawn: its own, or on its dark cells its light-text layer's (a blank: not
    written by that trace)."""
    own = fig["data"][0]["text"]
    layer = next((t["text"] for t in fig["data"] if t.get("name") == LIGHT_TEXT and t.get("meta") == 0), None)
    if layer is None:
        return own
    return [[a if a.strip() else b for a, b in zip(r, q, strict=True)] for r, q in zip(own, layer, strict=True)]


def _shown(text: str) -> str:
    """A cell's text as shown: without the span that gives a cell on a dark colour its white text."""
    return re.sub(r'^<span style="color:#[0-9a-f]{6}">(.*)</span>$', r"\1", text)


def _cell(token: str) -> str:
    """A token as a lens cell writes it: in quotes with whitespace escaped (Python's repr, for a token without quotes
    or backslashes), cut after 7 characters when longer than 8."""
    assert "'" not in token and "\\" not in token, token
    shown = repr(token)
    return shown if len(shown) <= 8 else shown[:7] + "…"


def test_a_long_input_is_not_read_by_the_lens_and_says_why(model):
    at = open_page(PAGE)
    at.text_input(key="real_model_text").set_value("one two three four five " * 14).run()
    open_tab(at, TAB, "Logit lens")
    assert_clean(at)
    assert any("up to 64 tokens" in i.value for i in at.info)


def test_heads_are_labelled_by_their_strongest_type_and_duplicate_tokens_can_colour_the_overview(model):
    at = open_page(PAGE)
    at.selectbox(key="real_model_preset").set_value("sink").run()
    run = model.run(rm.SINK_SENTENCE)
    scores = head_scores(run.attention, np.array(run.token_ids))
    types = strongest_head_type(scores, floor=rm.TYPE_FLOOR)
    layer, head = (int(v) for v in np.argwhere(types == "previous")[0])
    at.number_input(key="real_model_layer").set_value(layer).run()
    at.number_input(key="real_model_head").set_value(head).run()
    assert_clean(at)
    assert any(f"Layer {layer}, head {head} is **a previous-token head**" in m.value for m in at.markdown)
    at.selectbox(key="real_model_score").set_value("duplicate").run()
    overview = _figure(at, "Heads by duplicate")
    colours = sent_array(overview["data"][0]["marker"]["color"]).reshape(30, 9)
    np.testing.assert_allclose(colours, duplicate_token_score(run.attention, np.array(run.token_ids)), atol=1e-6)
    hover = overview["data"][0]["hovertext"][layer * 9 + head]
    assert hover.endswith("a previous-token head")
    counts = next(m.value for m in at.markdown if "× a sink head" in m.value)
    assert f"{(types == 'duplicate').sum()} × a duplicate-token head" in counts


def test_the_link_carries_the_answers_and_prompts_and_refuses_a_bad_head():
    at = open_tab(open_page(PAGE), TAB, "Attribution")
    at.text_input(key="real_model_other").set_value(" Tom").run()
    again = links.decode(link_state(at))[0].model
    assert (again.answer, again.other, again.clean) == (" Mary", " Tom", am.IOI.clean)
    payload = links.lab_payload(links.new_lab("random-causal"), full=True)
    payload["og"] = {"l": 3, "h": 9, "i": [1, 2], "x": "x", "pb": True}  # there is no head 9
    with pytest.raises(links.ShareError, match="model-head field 'h'"):
        links.from_json(json.dumps(payload), model_runs.head_lab)
    payload["og"] = {"l": 3, "h": 1, "i": [1] * 65, "x": "x", "pb": True}  # more tokens than the playground's
    with pytest.raises(links.ShareError, match="model-head field 'i'"):
        links.from_json(json.dumps(payload), model_runs.head_lab)
    payload["rm"]["a"] = "x" * 101
    payload.pop("og")
    with pytest.raises(links.ShareError, match="real-model field 'a'"):
        links.from_json(json.dumps(payload))
