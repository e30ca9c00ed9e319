"""User text is shown as text on every page: a lab whose every user-controlled text is hostile (token labels,
column headers, head names, the similarity page's vector names, the real model's typed text), opened through a
``?state=`` link and through an uploaded view and CSV files, and every markdown-bearing element AppTest exposes
walked: titles, headers, markdown, captions, alerts, metric labels and values, tab, expander and popover labels,
widget labels, help texts and options; and every plotly figure's text.

Two checks on each page. No markup: a string of tests/hostile_text.py's fixed MARKUP list raw in the page's
markdown or plotly text, or a link, image, tag, formula, colour or autolink that only a hostile string brings.
Literally shown: each label the page shows (CHART_LABELS, READ_LABELS, written here per page and scenario) reads
as typed once CommonMark's escapes and plotly's entities are undone by the test's own unescapers, and a page
said to show none shows none. The one way user text reaches the screen is ``formats.plain`` (markdown) and
``formats.plot_text`` (plotly): a display that skips them, or escapes twice, fails here.
"""

from __future__ import annotations

import html
import json
from types import SimpleNamespace

import pytest
from apptest_pages import ROOT, assert_clean, plotly_figures
from streamlit.testing.v1 import AppTest

from attention_views.pure import links
from attention_views.pure.formats import plot_text
from attention_views.pure.lab import MAX_DIMS, MAX_TOKENS, Lab
from attention_views.pure.tables import TOKEN, table_from_csv, table_to_csv
from tests.hostile_text import (
    HOSTILE,
    MODEL_TEXT,
    chart_texts,
    hostile_lab,
    hostile_link_state,
    live_markup,
    live_plot_markup,
    markup_problems,
    read_texts,
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
    opened, _ = links.from_json(links.to_json(lab))
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


SHOWN_SURROGATE = "lone ? half"  # LONE_SURROGATE as the app shows it


def _labels(lab: Lab, how: str) -> SimpleNamespace:
    """The labels of ``lab`` as opened ``how``: queries ``q``, keys ``k`` (a link's first token table ends in the
    surrogate), ``heads`` and the similarity page's ``vectors``."""
    tables = {name: list(frame[TOKEN]) for name, frame in lab.tables.items() if TOKEN in frame.columns}
    if how == "link":
        tables[next(iter(tables))][-1] = SHOWN_SURROGATE  # hostile_link_state's edit
    q, k = tables.get("Q", tables.get("X")), tables.get("K", tables.get("X"))
    return SimpleNamespace(q=q, k=k, heads=list(lab.heads["head"]), vectors=list(lab.vectors.tables["vectors"].index))


def _both(t: SimpleNamespace) -> list[str]:
    return t.q + t.k


# The lab's labels each page's charts draw, each a whole tick, name or title of its own as typed:
# {page: {scenario: labels (_labels) -> the ones drawn}}. The pages and scenarios not here show none of the lab's
# token labels: home and scaling have no tokens, the exercises and the learning page their own, the real model
# its typed text; cross-attention draws its own sentences for a scenario without Q, K and V given, the KV cache
# its own tokens for one without X.
CHART_LABELS = {
    "cross_attention": {"emma-friend": _both},
    "kv_cache": {"apple-orange": lambda t: t.q},
    "multi_head": {"emma-friend": _both, "apple-orange": lambda t: _both(t) + t.heads},  # emma-friend: no heads table
    "online_softmax": dict.fromkeys(SCENARIOS, lambda t: t.q + t.k[:3]),  # the first block read: three keys
    "playground": dict.fromkeys(SCENARIOS, _both),
    "positions": dict.fromkeys(SCENARIOS, _both),
    "similarity": dict.fromkeys(SCENARIOS, lambda t: t.k + t.vectors),  # the keys' vectors, and its own two
    "sinks": dict.fromkeys(SCENARIOS, _both),
    "step_by_step": dict.fromkeys(SCENARIOS, _both),
}
# The sentences of each page's text that hold a token label: {page: {scenario: labels (_labels) -> [choices]}},
# each choice met when one of its sentences is part of a text as read (which token depends on the scenario's
# selection).
READ_LABELS = {
    "kv_cache": {"apple-orange": lambda t: [{f"the query {x}" for x in t.q}]},
    "online_softmax": dict.fromkeys(SCENARIOS, lambda t: [{f"Block 1 holds keys {t.k[0]} … {t.k[2]}."}]),
    "sinks": dict.fromkeys(SCENARIOS, lambda t: [{f"most of it to {x}." for x in t.k}]),
    "step_by_step": dict.fromkeys(
        SCENARIOS,
        lambda t: [
            {f"Softmax over the row of {x}" for x in t.q},
            {f"Output of {x}: the weights" for x in t.q},
            {f"marks the key {x}." for x in t.k},
        ],
    ),
}


@pytest.mark.parametrize(("page", "scenario", "how"), CASES)
def test_every_user_text_on_every_page_is_shown_as_text(page, scenario, how):
    lab = hostile_lab(scenario)
    at = _open_link(page, lab) if how == "link" else _open_upload(page, uploaded(lab))
    assert_clean(at)
    assert not at.warning or all("saved view" not in w.value for w in at.warning)  # the link was opened
    assert markup_problems(at) == []
    labels = _labels(lab, how)
    charts, read = chart_texts(at), read_texts(at)
    assert len(read) > 10, read  # the walk reached the page
    drawn = CHART_LABELS.get(page, {}).get(scenario)
    if drawn is None:  # the page shows none of the lab's token labels, anywhere
        assert [t for t in charts + read for label in _both(labels) if label in t] == []
    else:  # each label the page draws is a whole text of its chart, as typed
        assert [label for label in drawn(labels) if label not in charts] == [], sorted(set(charts))[:80]
    sentences = READ_LABELS.get(page, {}).get(scenario, lambda t: [])(labels)
    unmet = [choice for choice in sentences if not any(s in t for s in choice for t in read)]
    assert unmet == [], read


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
