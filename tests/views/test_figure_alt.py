"""A figure as text (figures/alt.py): its accessible name states what it shows and its headline, and a grid's
numbers come out as a table with a header for every row and column, written as the cells are; the expected text
is computed here from the arrays the figure was built from, never from the figure."""

from __future__ import annotations

import numpy as np
import pytest

import attention_core as ac
from attention_views.pure import figures as fg
from attention_views.pure import theme
from attention_views.pure.figures import alt
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head


def _emma():
    head = run_single_head(new_lab("emma-friend"))
    return head.result.weights, list(head.query_tokens), list(head.key_tokens)


def test_the_weights_are_named_by_size_and_their_strongest_cell():
    W, queries, keys = _emma()  # (9, 9), seed notebook emma-friend
    i, j = np.unravel_index(np.argmax(W), W.shape)
    fig = fg.attention_heatmap(W, queries, keys, title="Weights")
    name = f"Weights, 9 queries by 9 keys; strongest: {queries[i]} to {keys[j]}, {W[i, j]:.2f}"
    assert alt.headline(fig) == name


def test_a_grids_table_has_every_row_and_column_and_the_cells_as_drawn():
    W, queries, keys = _emma()
    masked = np.where(np.tril(np.ones_like(W)) > 0, W, -np.inf)
    (table,) = alt.grid_tables(fg.attention_heatmap(masked, queries, keys))
    assert table.rows == queries and table.columns == keys and table.corner == "query \\ key"
    expected = [[f"{v:.2f}" if np.isfinite(v) else theme.MINUS_INF for v in row] for row in masked]
    assert table.cells == expected
    assert table.name == "Attention weights"  # the title without its note on rows and columns


def test_a_big_grid_without_cell_text_still_has_every_number_and_every_name():
    rng = np.random.default_rng(0)
    W = rng.random((30, 25))
    rows, cols = [f"q{i}" for i in range(30)], [f"k{j}" for j in range(25)]
    fig = fg.attention_heatmap(W, rows, cols)
    (table,) = alt.grid_tables(fig)
    assert fig.data[0].text is None  # past the cell-text limit: the axes thin their ticks
    assert table.rows == rows and table.columns == cols  # every name, from the ticks and their aliases
    np.testing.assert_allclose(np.array(table.cells, dtype=float), W, atol=0.005 + 1e-12)


def test_text_is_plain_text_markup_and_all():
    W = np.array([[0.25, 0.75]])
    fig = fg.attention_heatmap(W, ["<b>bold</b>"], ["a & b", ""], title="<i>t</i>")
    (table,) = alt.grid_tables(fig)
    assert table.rows == ["<b>bold</b>"] and table.columns == ["a & b", "(blank #1)"]
    assert table.cells == [["0.25", "0.75"]]  # a light cell's white-text span taken out
    assert alt.headline(fig) == "<i>t</i>, 1 query by 2 keys; strongest: <b>bold</b> to (blank #1), 0.75"


def test_no_accessible_number_has_more_digits_than_the_cell():
    tiny = np.array([[-1.2689903643825624e-17, 1.0]])
    fig = fg.matrix_heatmap(tiny, ["r"], ["c0", "c1"], title="M")
    assert alt.grid_tables(fig)[0].cells == [["0.00", "1.00"]]
    assert "e-" not in alt.headline(fig)


def test_the_mask_says_how_many_cells_are_blocked():
    additive = np.where(np.tril(np.ones((4, 4))) > 0, 0.0, -np.inf)
    fig = fg.mask_heatmap(additive, list("abcd"), list("abcd"))
    assert alt.headline(fig) == "Additive mask, 4 queries by 4 keys; 6 of 16 blocked"
    big = np.where(np.tril(np.ones((25, 25))) > 0, 0.0, -np.inf)  # no cell text: the cells from the colours
    cells = alt.grid_tables(fg.mask_heatmap(big, list(range(25)), list(range(25))))[0].cells
    assert cells[0][:2] == ["0", theme.MINUS_INF] and sum(c == theme.MINUS_INF for r in cells for c in r) == 300


def test_a_grid_of_heads_has_one_table_per_head_named_by_its_head():
    W, queries, keys = _emma()
    fig = fg.head_grid([W, W.T], ["h1: first", "h2"], queries, keys)
    tables = alt.grid_tables(fig)
    assert [t.name for t in tables] == ["h1: first", "h2"]
    assert all(t.rows == queries and t.columns == keys for t in tables)
    assert tables[1].cells[0][1] == f"{W.T[0, 1]:.2f}"
    assert alt.headline(fig).startswith("Attention weights per head, 2 panels of 9 queries by 9 keys")


def test_bars_are_named_by_their_largest_value():
    norms = ac.activation_norms(np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 6.0]]))  # 5, 1, 6
    fig = fg.activation_bars(["x", "y", "z"], norms)
    assert alt.headline(fig) == "Activation strength, 3 values; largest: z, 6.0"  # formats.short


@pytest.mark.parametrize("projector", [False, True])
def test_the_chart_toolbar_holds_only_the_download(projector):
    config = theme.export_config("f", "svg" if projector else "png")
    assert config["modeBarButtons"] == [["toImage"]]
