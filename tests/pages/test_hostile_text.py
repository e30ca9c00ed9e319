"""User text is shown as text on every page: a lab whose every user-controlled text is hostile (token labels,
column headers, head names, the similarity page's vector names, the real model's typed text), opened through a
``?state=`` link and through an uploaded view and CSV files, and every markdown-bearing element AppTest exposes
walked: titles, headers, markdown, captions, alerts, metric labels and values, tab, expander and popover labels,
widget labels, help texts and options; and every plotly figure's text.

The one way user text reaches the screen is ``formats.plain`` (markdown) and ``formats.plot_text`` (plotly):
a display that skips them shows up here as a raw hostile string or as a link, image, tag, formula, colour or
autolink that only a hostile string brings (tests/hostile_text.py).
"""

from __future__ import annotations

import html
import json

import pytest
from apptest_pages import ROOT, assert_clean, plotly_figures
from streamlit.testing.v1 import AppTest

from attention_views import share
from attention_views.editors import table_from_csv, table_to_csv
from attention_views.formats import plot_text
from attention_views.session import MAX_DIMS, MAX_TOKENS, Lab
from tests.hostile_text import (
    HOSTILE,
    MODEL_TEXT,
    hostile_lab,
    hostile_link_state,
    live_markup,
    live_plot_markup,
    markup_problems,
    shown_texts,
    unescape,
)

PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py"))
SCENARIOS = ("emma-friend", "apple-orange")  # Q, K, V given directly; X and the projections (and four heads)


def _open_link(page: str, lab: Lab) -> AppTest:
    """``pages/<page>.py`` opened from a shared link holding ``lab``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params["scenario"] = lab.scenario
    at.query_params["state"] = hostile_link_state(lab, page)
    return at.run()


def uploaded(lab: Lab) -> Lab:
    """``lab`` as the upload path rebuilds it: saved as a view (JSON) and opened, then every table saved as CSV
    and read back (the CSV popover's download and upload)."""
    opened, _ = share.from_json(share.to_json(lab))
    for name, frame in opened.tables.items():
        csv = table_to_csv(frame).encode()
        opened.tables[name] = table_from_csv(csv, frame, name, max_rows=MAX_TOKENS, max_cols=MAX_DIMS)
    return opened


def _open_upload(page: str, lab: Lab) -> AppTest:
    """``pages/<page>.py`` with ``lab`` made the session's lab, as the sidebar's upload does (frame.replace_lab)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params["scenario"] = lab.scenario
    at.run()
    s = at.session_state["session"]
    lab.rev = s.lab.rev + 1
    s.lab = lab
    return at.run()


CASES = [(page, scenario, "link") for page in PAGES for scenario in SCENARIOS] + [
    (page, "apple-orange", "upload") for page in PAGES
]


@pytest.mark.parametrize(("page", "scenario", "how"), CASES)
def test_every_user_text_on_every_page_is_shown_as_text(page, scenario, how):
    lab = hostile_lab(scenario)
    at = _open_link(page, lab) if how == "link" else _open_upload(page, uploaded(lab))
    assert_clean(at)
    assert not at.warning or all("saved view" not in w.value for w in at.warning)  # the link was opened
    texts = shown_texts(at)
    assert len(texts) > 10, texts  # the walk reached the page
    assert markup_problems(at) == []


def _shown_as_typed(at: AppTest) -> set[str]:
    """The texts of every markdown-bearing element, as CommonMark shows them."""
    return {unescape(t) for _, t in shown_texts(at)}


def test_head_names_read_as_typed_in_the_legend_and_the_readout_tabs():
    lab = hostile_lab("apple-orange")
    names = list(lab.heads["head"])
    at = _open_link("multi_head", lab)
    at.session_state["multi_head_details_tab"] = "Readouts per head"  # the details tab with both (a click)
    at.run()
    shown = _shown_as_typed(at)
    legend = next(t for t in shown if t.startswith("h1 = "))
    assert all(f"h{h + 1} = {name}" in legend for h, name in enumerate(names)), legend
    assert set(names) <= shown  # each head's readout tab is labelled with its name
    assert markup_problems(at) == []


def test_token_labels_read_as_typed_in_the_step_by_step_headings():
    lab = hostile_lab("emma-friend")
    lab.selected = (0, 1)
    at = _open_link("step_by_step", lab)
    shown = " ".join(_shown_as_typed(at))
    query, key = lab.tables["Q"]["token"][0], lab.tables["K"]["token"][1]
    assert f"Output of {query}" in shown, shown[:3000]
    assert key in shown
    assert markup_problems(at) == []


def _figure_strings(at: AppTest) -> set[str]:
    from tests.hostile_text import strings

    return {s for fig in plotly_figures(at) for s in strings(fig)}


@pytest.mark.parametrize(("page", "scenario"), [("playground", "emma-friend"), ("similarity", "apple-orange")])
def test_labels_reach_the_charts_escaped_and_read_back_as_typed(page, scenario):
    at = _open_link(page, hostile_lab(scenario))
    texts = _figure_strings(at)
    escaped = [h for h in HOSTILE if "<" in h and any(plot_text(h) in t for t in texts)]
    assert escaped, sorted(texts)[:50]  # the labels are there, as entities plotly decodes to the typed text
    assert all(html.unescape(plot_text(h)) == h for h in escaped)


def test_the_real_models_text_reaches_its_heatmap_as_typed():
    import attention_models as am

    model = am.load("smollm2-135m")
    tokens = [model.token(i) for i in model.tokenize(MODEL_TEXT, control_tokens=False)]
    assert "".join(tokens) == MODEL_TEXT
    at = _open_link("real_model", hostile_lab("emma-friend"))
    assert_clean(at)
    heat = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Layer"))
    axis = heat["layout"]["yaxis"]
    assert [html.unescape(t) for t in axis["ticktext"]] == [tokens[int(v)] for v in axis["tickvals"]]
    assert markup_problems(at) == []


def test_an_unknown_scenario_in_the_link_is_echoed_as_text():
    bad = HOSTILE[1] + HOSTILE[0] + HOSTILE[6]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/playground.py")
    at.query_params["scenario"] = bad
    at.run()
    assert_clean(at)
    assert any(bad in unescape(w.value) for w in at.warning), [w.value for w in at.warning]
    assert markup_problems(at) == []


def test_the_checks_catch_raw_user_text_and_pass_escaped_text():
    fake = json.dumps({"data": [{"x": [HOSTILE[2]]}]})
    assert live_plot_markup(fake) == [HOSTILE[2], "<a "]
    assert live_markup(f"h1 = {HOSTILE[0]}") != []
    assert live_markup("h1 = \\[x\\](http:\u2060//evil.example/a)") == []
