"""The playground's weights heatmap drawn in place (ui/components/figure.py), headless: the figure it is sent each
run, and the figure the vector plane passes on to it while a handle is dragged (its ``follow``), both with
attention_core's numbers. AppTest runs no JavaScript: the plane's drag is set through session_state."""

import json

import numpy as np
from apptest_pages import assert_clean, heatmap_z, nodes, open_page, open_tab, plotly_figures

KEY = "playground_plane"


def component_data(at, name: str, key: str = KEY) -> dict:
    """What the page sent the component ``name`` with key ``key`` on its last run (its ``data``)."""
    found = [
        n.proto
        for n in nodes(at._tree)
        if n.type == "bidi_component" and n.proto.component_name == name and n.proto.id.endswith(f"-{key}")
    ]
    assert len(found) == 1, f"{len(found)} {name} components {key} on the page"
    return json.loads(found[0].json)


def drag(at, kind: str, row: int, x, y, *, done: bool):
    at.session_state[KEY] = {"drag": {"kind": kind, "row": row, "x": x, "y": y, "id": "g1", "done": done}}
    return at.run()


def softmax(S: np.ndarray) -> np.ndarray:
    """Gold weights written out: each row of scores through softmax."""
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def table(at, name: str) -> np.ndarray:
    return at.session_state["session"].lab.tables[name].iloc[:, 1:].to_numpy(float, copy=True)


def test_the_heatmap_is_sent_in_place_with_the_heads_weights_and_the_apps_chart_config():
    at = open_page("playground", "mammal-query")
    assert_clean(at)
    data = component_data(at, "attention_lab.figure", "playground_heatmap")
    assert data["key"] == "playground_heatmap" and data["stretch"] is False
    assert data["plotly"].startswith("app/static/vendor/plotly-") and data["plotly"].endswith(".min.js")
    assert data["config"]["toImageButtonOptions"]["format"] == "png"
    Q, K = table(at, "Q"), table(at, "K")
    gold = softmax(Q @ K.T / np.sqrt(3))
    np.testing.assert_allclose(heatmap_z(json.loads(data["spec"])), gold, rtol=1e-12)
    assert plotly_figures(at)[0]["layout"]["title"]["text"] == "Weights"  # shown above it


def test_no_follow_until_a_handle_is_dragged():
    at = open_tab(open_page("playground", "mammal-query"), "playground_tables_tab", "Vector plane")
    assert "follow" not in component_data(at, "attention_lab.plane")


def test_while_a_query_is_dragged_the_plane_sends_the_heatmap_its_moved_row():
    at = open_tab(open_page("playground", "mammal-query"), "playground_tables_tab", "Vector plane")
    before = heatmap_z(plotly_figures(at)[0])
    drag(at, "Q", 0, 0.5, 7.0, done=False)
    assert_clean(at)
    follow = component_data(at, "attention_lab.plane")["follow"]
    assert follow["key"] == "playground_heatmap"
    fig = json.loads(follow["spec"])
    Q = table(at, "Q")
    Q[0, :2] = [0.5, 7.0]  # d2 held at the table's 4.1
    gold = softmax(Q @ table(at, "K").T / np.sqrt(3))
    np.testing.assert_allclose(heatmap_z(fig), gold, rtol=1e-12)
    np.testing.assert_array_equal(heatmap_z(fig)[1:], before[1:])
    assert not fig["layout"].get("title", {}).get("text")  # the page shows the title above the chart


def test_a_dragged_key_moves_a_column_of_the_followed_scores():
    at = open_tab(open_page("playground", "mammal-query"), "playground_tables_tab", "Vector plane")
    at.radio(key="playground_stage").set_value("scores").run()
    drag(at, "K", 1, -3.0, 2.0, done=False)
    assert_clean(at)
    fig = json.loads(component_data(at, "attention_lab.plane")["follow"]["spec"])
    K = table(at, "K")
    K[1, :2] = [-3.0, 2.0]
    np.testing.assert_allclose(heatmap_z(fig), table(at, "Q") @ K.T, rtol=1e-12)  # the stage the page shows


def test_a_drag_the_plane_cannot_take_sends_no_new_heatmap():
    at = open_tab(open_page("playground", "mammal-query"), "playground_tables_tab", "Vector plane")
    drag(at, "Q", 0, 1e9, 0.0, done=False)
    assert at.error, "a drag beyond the plane's reach should be named"
    assert "follow" not in component_data(at, "attention_lab.plane")


def test_each_component_sends_a_loader_of_its_module_served_from_the_static_folder_not_its_code():
    """A component's inline JS is sent with its element on every run (a following phone's every edit): each of the
    app's components sends loader.js's few lines naming its module, which the static folder holds byte for byte."""
    from attention_views.ui import static
    from attention_views.ui.components.served import MODULES

    at = open_tab(open_page("playground", "mammal-query"), "playground_tables_tab", "Vector plane")
    sent = {n.proto.component_name: n.proto.js_content for n in nodes(at._tree) if n.type == "bidi_component"}
    for name in ("attention_lab.commits", "attention_lab.figure", "attention_lab.plane"):
        url = sent[name].split('new URL("', 1)[1].split('"', 1)[0]
        module = next(m for m in MODULES if name.endswith("." + m.stem))
        assert url.startswith(f"{static.URL}/components/{module.stem}.") and url.endswith(".js"), url
        assert (static.FOLDER / url.removeprefix(static.URL + "/")).read_bytes() == module.read_bytes(), url
    assert all(len(js.encode()) < 1000 for js in sent.values()), {name: len(js) for name, js in sent.items()}
