"""Streamlit widget helpers shared by the pages: bound controls, the table editors, charts.

Every widget has an explicit key prefixed by its page; the canonical values live in the session's
lab (session.py), so that an edit made on one page is there on every other page, and nothing is
shared between browser sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attention_core as ac
from attention_views.pure import theme
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import MASK_KINDS, MASK_PARAMS, MAX_DIMS, MAX_HEADS, MAX_TOKENS, SCALE_MODES, Lab, Vectors
from attention_views.pure.single_head import (
    PRESETS,
    apply_preset,
    custom_mask,
    lab_tokens,
    resize_head_width,
    resize_model_dims,
    table_errors,
)
from attention_views.pure.tables import (
    SHOWN_DECIMALS,
    TOKEN,
    Delta,
    TableError,
    apply_delta,
    csv_text,
    display_table,
    table_from_csv,
    table_to_csv,
    value_columns,
)
from attention_views.ui import session


def bound(widget: Callable, label: str, key: str, field: str, *, owner: object = None, **kwargs: object) -> object:
    """Draw ``widget`` with its value kept in the lab's ``field`` (so every page shares it), or in ``owner``'s
    (a part of the lab, such as ``lab.learning``)."""
    owner = session.current().lab if owner is None else owner
    if key not in st.session_state:
        st.session_state[key] = getattr(owner, field)
    value = widget(label, key=key, **kwargs)
    setattr(owner, field, value)
    return value


def bump_rev(lab: Lab | Vectors) -> None:
    """Re-create every editor from the canonical tables (after a change of shape or a preset)."""
    lab.rev += 1


def editor_key(lab: Lab, prefix: str, name: str) -> str:
    return f"{prefix}_editor_{name}_{lab.rev}"


def folded(frame: pd.DataFrame, key: str, apply: Callable = apply_delta) -> tuple[pd.DataFrame, bool]:
    """``frame`` with the edits the data editor ``key`` reports folded in, and whether rows moved.

    The one way an edit reaches a table: the editor's output is never written back into its own input.
    When rows were added or deleted the editor must restart from the table (bump the revision in its key).
    """
    delta = Delta.from_state(st.session_state.get(key))
    if delta is None:
        return frame, False
    return apply(frame, delta), delta.reshapes


def apply_pending_edits(lab: Lab, prefix: str, name: str) -> None:
    """Fold the editor's reported edits into the lab's table; restart the editors when rows moved."""
    lab.tables[name], moved = folded(lab.tables[name], editor_key(lab, prefix, name))
    if moved:
        bump_rev(lab)


def matrix_editor(lab: Lab | Vectors, prefix: str, name: str, *, dynamic_rows: bool = False) -> None:
    """An editor for one of the lab's tables, with its error (matrix, row, column) right below it."""
    apply_pending_edits(lab, prefix, name)
    frame = lab.tables[name]
    # two decimals on a projector, as in the heatmaps (Streamlit sizes the columns to their text); otherwise the
    # float columns need no configuration (a NumberColumn each cost a 64-column editor a few ms of every rerun)
    number, big = st.column_config.NumberColumn, projector()
    config = {c: number(c, format="%.2f") for c in value_columns(frame)} if big else {}
    if TOKEN in frame.columns:
        config[TOKEN] = st.column_config.TextColumn("token", help="Token label shown on the axes")
    st.data_editor(
        display_table(frame, lab.read, name, 2 if big else SHOWN_DECIMALS),
        key=editor_key(lab, prefix, name),
        num_rows="dynamic" if dynamic_rows else "fixed",
        hide_index=TOKEN in frame.columns,
        column_config=config,
        width="content",
        on_change=apply_pending_edits,  # at once, whatever page the next run draws (a link clicked mid-edit)
        args=(lab, prefix, name),
    )
    error = table_errors({name: frame}, lab.read).get(name)
    if error:
        st.error(message(error), icon="⚠️")
    _csv_popover(lab, prefix, name)


def _csv_popover(holder: Lab | Vectors, prefix: str, name: str) -> None:
    """The table's download and upload as CSV, in a popover drawn only while it is open."""
    popover = st.popover(
        f"{message(name)} as CSV", icon=":material/table_view:", key=f"{prefix}_csv_{name}", on_change="rerun"
    )
    if not popover.open:
        return
    errors = session.current().csv_errors
    with popover:
        frame = holder.tables[name]  # never edited in place, so the callable made on click sees this table
        st.download_button(
            f"Download {message(name)}.csv",
            lambda: table_to_csv(frame),
            file_name=f"{name}.csv",
            mime="text/csv",
            key=f"{prefix}_csv_down_{name}",
        )
        key = f"{prefix}_csv_up_{name}_{holder.rev}"
        st.file_uploader(
            f"Replace {message(name)} from a CSV file",
            type=["csv"],
            key=key,
            on_change=_on_csv_upload,
            args=(holder, errors, key, name, f"{prefix}_{name}"),
        )
        error = errors.get(f"{prefix}_{name}")
        if error:
            st.error(message(error), icon="⚠️")


def _on_csv_upload(holder: Lab | Vectors, errors: dict[str, str], key: str, name: str, error_key: str) -> None:
    upload = st.session_state.get(key)
    errors.pop(error_key, None)
    if upload is None:
        return
    try:
        holder.tables[name] = table_from_csv(
            upload.getvalue(), holder.tables[name], name, max_rows=MAX_TOKENS, max_cols=MAX_DIMS
        )
    except TableError as err:
        errors[error_key] = f"{err} Nothing was changed."
        return
    bump_rev(holder)


def chart(fig: go.Figure, key: str, *, fit: str | None = None, screens: int = 1, **kwargs: object) -> object:
    """The one way a page shows a figure: its title as page text above it (shown literally; the browser wraps
    it), then st.plotly_chart with the app's chart config and the figure's own title taken out.

    The toolbar's camera saves a PNG at slide resolution or an SVG (the sidebar's choice), named after page
    and scenario; Streamlit's theme is off so the figure keeps its own projector-friendly colours.

    ``fit``, a page's main chart on a projector: a CSS length, what the page shows above the chart. The chart is
    then as tall as its figure asks, but no taller than the window less ``fit`` (``screens`` times that for a grid
    whose first of ``screens`` rows of panels must show whole), so the browser sizes it to the first screen.
    """
    title = fig.layout.title.text
    if title:
        st.markdown(f"**{plain(title)}**")
        fig.layout.title.text = None
    s = session.current()
    name = f"{s.page or 'attention'}-{s.lab.scenario}-{key.split('_', 1)[-1]}"
    kwargs.setdefault("theme", None)
    place = st
    if fit is not None and projector():
        # a container as tall as the figure asks (Streamlit), at most what the window leaves (CSS); the chart fills it
        st.html(f"<style>.st-key-fit_{key} {{ max-height: max(15rem, calc((100dvh - {fit}) * {screens})); }}</style>")
        place = st.container(height=int(fig.layout.height), border=False, key=f"fit_{key}")
        kwargs["height"] = "stretch"
    return place.plotly_chart(fig, key=key, config=theme.export_config(name, chart_format()), **kwargs)


def clicked_cell(key: str) -> tuple[int, int] | None:
    """The (row, column) a click selected in the clickable grid chart ``key`` (its points' customdata), or None."""
    points = (st.session_state.get(key) or {}).get("selection", {}).get("points", [])  # absent: not drawn this run
    cells = [p["customdata"] for p in points if len(p.get("customdata") or ()) == 2]
    return (int(cells[-1][0]), int(cells[-1][1])) if cells else None


def projector() -> bool:
    """True when the lecturer switched on projector mode (larger text everywhere)."""
    return bool(st.session_state.get("sidebar_projector", False))


def chart_format() -> str:
    """What the charts' camera icon saves, as chosen in the sidebar: "png" or "svg"."""
    chosen = st.session_state.get("sidebar_chart_format")
    return chosen if chosen in theme.IMAGE_FORMATS else "png"


def csv_download(label: str, table: Callable[[], pd.DataFrame], file_name: str, key: str) -> None:
    """A download button for a result table as CSV; ``table`` makes the table, on click."""
    st.download_button(
        label,
        lambda: csv_text(table(), index=False),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )  # written on click


def metric_columns(n: int, big: bool) -> list:
    """``n`` places for st.metric: on a projector at most three to a row (five in a row cut values and labels
    to an ellipsis at 1024 pixels); otherwise each as wide as its label and value, as many to a row as fit."""
    if not big:
        row = st.container(horizontal=True, gap="large")
        return [row.container(width="content") for _ in range(n)]
    return [col for start in range(0, n, 3) for col in st.columns(3)[: n - start]]


def beside(key: str, *, chart_first: bool = False, whole: bool = False) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Two places in a row, (tables, chart): the tables as wide as their columns, the chart they change the rest.

    The browser lays them out (frame.py's CSS): the chart keeps a least width, and the tables scroll sideways
    before the chart goes narrower; ``chart_first`` puts the chart on the left. ``whole``: a result table that
    never scrolls, with the chart under it.
    """
    if whole:
        return st.container(key=f"besidewhole_{key}"), st.container(key=f"besideunder_{key}")
    row = st.container(horizontal=True, gap="medium", wrap=False, key=f"beside_{key}")
    if chart_first:
        chart_place = row.container(key=f"besidechart_{key}")
        return row.container(width="content", key=f"besidetables_{key}"), chart_place
    return row.container(width="content", key=f"besidetables_{key}"), row.container(key=f"besidechart_{key}")


def number_table(
    table: pd.DataFrame | pa.Table, key: str, decimals: int = 3, help: Mapping[str, str] | None = None
) -> None:
    """A read-only table whose decimal columns all show ``decimals`` places (Streamlit's default drops trailing
    zeros, so 0.5280 read 0.528 beside 0.8421): one decimal convention for every number table. ``help``: a
    tooltip for some column headers (short headers keep every column in sight). No column has a fixed width: the
    browser sizes each to its header and values, so a header that names a token ("weight on Emma") or a long
    dimension label shows whole, and a table too wide for its place scrolls sideways."""
    help = help or {}
    table = arrow_table(table) if isinstance(table, pd.DataFrame) else table
    fixed = {
        f.name: st.column_config.NumberColumn(format=f"%.{decimals}f", help=help.get(f.name))
        for f in table.schema  # a name may repeat: a head's dims "1, 1"
        if pa.types.is_floating(f.type)
    }
    st.dataframe(table, hide_index=True, key=key, column_config=fixed, width="content")


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    """``frame``'s columns as the Arrow table st.dataframe sends, for a table shown without its index.

    The schema and values are those of Streamlit's own conversion (``pa.Table.from_pandas``: NaN as null,
    repeated column names kept); what is left out is the pandas index and its metadata, about 1 ms of a
    table's rerun that a hidden index does not need."""
    columns = [pa.array(column, from_pandas=True) for _, column in frame.items()]
    return pa.Table.from_arrays(columns, names=[str(c) for c in frame.columns])


def columns_table(columns: Mapping[str, object]) -> pa.Table:
    """Columns (name -> texts, or numbers in a list or NumPy array) as the Arrow table :func:`arrow_table` makes
    of their DataFrame (texts as large strings, NaN as null), without the DataFrame: about 0.2 ms a column less."""
    return pa.Table.from_arrays([_arrow_column(v) for v in columns.values()], names=list(columns))


def numbers_arrow(M: np.ndarray, rows: list[str], cols: list[str]) -> pa.Table:
    """:func:`numbers_frame`'s table made as Arrow directly, as :func:`columns_table` does (a name may repeat)."""
    columns = [_arrow_column(rows), *(_arrow_column(M[:, j]) for j in range(M.shape[1]))]
    return pa.Table.from_arrays(columns, names=[TOKEN, *map(str, cols)])


def _arrow_column(values: object) -> pa.Array:
    column = pa.array(values, from_pandas=True)
    return column.cast(pa.large_string()) if column.type == pa.string() else column


def numbers_frame(M: object, rows: list[str], cols: list[str]) -> pd.DataFrame:
    """A read-only table of numbers for st.dataframe (labels may repeat, so they go in a column)."""
    frame = pd.DataFrame(M, columns=cols)
    frame.insert(0, TOKEN, rows)
    return frame


NATURAL_PAGE = {  # the page each seed notebook's lecture opens on
    "mammal-query": "playground",
    "random-causal": "playground",
    "apple-orange": "multi_head",
    "emma-friend": "step_by_step",
    "random-seed42": "playground",
    "positions-order": "positions",  # and each lesson's
    "kv-cache": "kv_cache",
    "gqa-heads": "multi_head",
    "online-softmax": "online_softmax",
    "attention-sinks": "sinks",
    "cross-attention": "cross_attention",
}


@st.cache_data
def _explanation(scenario_id: str) -> tuple[str, str]:
    """(title, explanation) of a scenario; immutable, so cached across sessions."""
    sc = ac.load_scenario(scenario_id)
    return sc.title, sc.explanation


def page_header(title: str, intro: bool = True) -> DeltaGenerator | None:
    """The page's title and, with ``intro``, the lecture's introduction (:func:`lecture_intro`) under it; on a
    projector both in one compact row, the title beside the folded introduction, so the charts start high. Returns
    that row (where a page may put more beside its title), None off a projector."""
    if not projector():
        st.title(title)
        if intro:
            lecture_intro()
        return None
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium", key="page_header")
    row.title(title, width="content")
    if intro:
        with row:
            lecture_intro()
    return row


def lecture_intro() -> None:
    """On the page a scenario's lecture starts on (its card opens it), the scenario's explanation.

    Open, except in projector mode (where the lecturer tells it and the screen is for the charts); one
    click opens or folds it.
    """
    s = session.current()
    if s.lab.origin is not None:  # a real model's head, opened from the real-model page: say so instead
        st.info(f"These are the real numbers of {plain(s.lab.origin.label)}.", icon=":material/memory:")
        return
    if NATURAL_PAGE.get(s.lab.scenario) != s.page:
        return
    title, explanation = _explanation(s.lab.scenario)
    # open for a student reading alone; folded on a projector, where it would push the charts off screen
    with st.expander(f"About this lecture: {title}", expanded=not projector(), icon=":material/school:"):
        st.markdown(explanation)  # the scenario's own text (attention_core), with its formulas


MASK_LABELS = {
    "none": "none",
    "causal": "causal",
    "padding": "padding",
    "window": "sliding window",
    "prefix": "prefix-LM",
    "streaming": "StreamingLLM",
    "custom": "custom",
}
MASK_HELP = (
    "causal: a token sees itself and earlier tokens · padding: the last n keys are hidden · "
    "sliding window: itself and the w − 1 tokens before it · prefix-LM: the first p tokens are seen by "
    "all, the rest causally · StreamingLLM: the first s tokens (sinks) plus a sliding window · custom: "
    "paint it cell by cell"
)
MASK_PARAM_LABELS = {
    "padding": ("Padding keys n", 0),
    "window": ("Window width w", 1),
    "prefix": ("Prefix length p", 0),
    "streaming": ("Window width w", 1),
}
SCALE_LABELS = {"sqrt": "1/√d_k", "none": "none (×1)", "custom": "custom"}
STAGE_LABELS = {"scores": "Raw scores QKᵀ", "scaled": "Scaled", "masked": "Masked", "weights": "Weights"}
STAGE_BUTTONS = STAGE_LABELS | {"scores": "QKᵀ"}  # the chart's title says "Raw scores": four buttons fit 1024 px
PRESET_LABELS = {"identity": "Identity", "random": "Random (seeded)", "zeros": "Zeros"}


def attention_controls(lab: Lab, prefix: str, stacked: bool = False) -> None:
    """Mask, scaling and temperature, shared by every page through the lab state: in one row, or ``stacked`` one
    under the other (in a column beside a chart)."""
    # one row: seven masks as radio buttons took three lines above every page's tables and charts
    mask_col, scale_col, temp_col = (st.container(),) * 3 if stacked else st.columns([3, 4, 3])
    with mask_col:
        bound(
            st.selectbox,
            "Mask",
            f"{prefix}_mask",
            "mask",
            options=MASK_KINDS,
            format_func=MASK_LABELS.get,
            help=MASK_HELP,
        )
        if lab.mask in MASK_PARAMS:
            label, low = MASK_PARAM_LABELS[lab.mask]
            bound(
                st.number_input,
                label,
                f"{prefix}_{MASK_PARAMS[lab.mask]}",
                MASK_PARAMS[lab.mask],
                min_value=low,
                max_value=MAX_TOKENS,
                step=1,
            )
        if lab.mask == "streaming":
            bound(
                st.number_input,
                "Sink tokens s",
                f"{prefix}_mask_sink",
                "mask_sink",
                min_value=0,
                max_value=MAX_TOKENS,
                step=1,
            )
    with scale_col:
        bound(
            st.radio,
            "Scaling",
            f"{prefix}_scale_mode",
            "scale_mode",
            options=SCALE_MODES,
            format_func=SCALE_LABELS.get,
            horizontal=True,
            help="What the raw scores QKᵀ are multiplied by",
        )
        if lab.scale_mode == "custom":
            bound(
                st.number_input,
                "Scale factor",
                f"{prefix}_scale_custom",
                "scale_custom",
                min_value=-100.0,
                max_value=100.0,
                step=0.1,
                format="%.4f",
            )
    with temp_col:
        bound(
            st.slider,
            "Temperature",
            f"{prefix}_temperature",
            "temperature",
            min_value=0.1,
            max_value=5.0,
            step=0.1,
            help="Divides the scaled scores: < 1 sharpens the softmax, > 1 flattens it",
        )


def mask_painter(lab: Lab, prefix: str) -> None:
    """A checkbox grid (rows: queries, columns: keys) that paints the custom mask, cell by cell."""
    query_tokens, key_tokens = lab_tokens(lab)
    n_q, n_k = len(query_tokens), len(key_tokens)
    key = f"{prefix}_mask_editor_{lab.rev}_{n_q}x{n_k}"
    _fold_painted(lab, key, n_q, n_k)
    cols = [f"k{j}" for j in range(n_k)]
    frame = pd.DataFrame(lab.mask_custom, columns=cols)
    frame.insert(0, TOKEN, query_tokens)
    config = {
        c: st.column_config.CheckboxColumn(label or f"key {j}")  # as wide as its key's label
        for j, (c, label) in enumerate(zip(cols, key_tokens, strict=True))
    }
    config[TOKEN] = st.column_config.TextColumn("query ↓ / key →", disabled=True)
    st.caption("Tick a cell to let that query (row) attend that key (column).")
    st.data_editor(
        frame,
        key=key,
        hide_index=True,
        column_config=config,
        disabled=[TOKEN],
        on_change=_fold_painted,  # at once, whatever page the next run draws
        args=(lab, key, n_q, n_k),
    )


def _fold_painted(lab: Lab, key: str, n_q: int, n_k: int) -> None:
    """Fold the painter ``key``'s ticks into the lab's (n_q, n_k) custom mask."""
    mask = custom_mask(lab, n_q, n_k)
    cols = [f"k{j}" for j in range(n_k)]
    painted, _ = folded(pd.DataFrame(mask, columns=cols, dtype=object), key, _cell_edits)
    lab.mask_custom = painted.to_numpy(dtype=bool)


def _cell_edits(frame: pd.DataFrame, delta: Delta) -> pd.DataFrame:
    """The painter's grid has fixed rows: only its cell edits count."""
    return apply_delta(frame, Delta(delta.edited_rows, [], []))


def blind_rows_note(mask: object, query_tokens: list[str]) -> None:
    """Say which queries the mask leaves with no visible key (their weights are all zero)."""
    rows = [] if mask is None else ac.blind_rows(mask)
    if len(rows):
        names = ", ".join(repr(query_tokens[i]) for i in rows[:8]) + (" …" if len(rows) > 8 else "")
        st.info(
            f"The mask hides every key from {names}: nothing to attend to, so the weights of that row are all "
            "zero and its output is a zero vector (a real model never masks a whole row).",
            icon="🕳️",
        )


LIMITS_NOTE = (
    f"Sizes that stay interactive: at most {MAX_TOKENS} tokens, {MAX_DIMS} dimensions and {MAX_HEADS} "
    f"heads. Heatmaps write their values in the cells up to {theme.CELL_TEXT_LIMIT} tokens."
)


EDITOR_TABS = {
    "Q": "Q (queries)",
    "K": "K (keys)",
    "V": "V (values)",
    "X": "X (embeddings)",
    "W_q": "W_Q",
    "W_k": "W_K",
    "W_v": "W_V",
}


def tables_box(lab: Lab, prefix: str, big: bool) -> None:
    """The lab's editors in an open "Tables" expander; on a projector without one (its padding hid columns)."""
    with st.container() if big else st.expander("Tables", expanded=True, icon=":material/edit:"):
        editors_panel(lab, prefix)


def editors_panel(lab: Lab, prefix: str) -> None:
    """Tabs with the scenario's editable tables: Q, K, V, or X and the projections with presets.

    Only the open tab's editor is drawn (the tabs rerun the page when switched): each editor costs a
    few ms of every rerun. Every table's edits are folded in, by its editor when its tab is open and
    directly when it is closed, and a closed table that does not parse is named below the tabs.
    """
    names = _editor_tables(lab)
    tabs = st.tabs(_editor_tab_labels(lab), key=f"{prefix}_tables_tab", on_change="rerun")
    closed = {}
    for tab, name in zip(tabs, names, strict=False):
        if tab.open:
            with tab:
                matrix_editor(lab, prefix, name, dynamic_rows=name in ("X", "Q", "K", "V"))  # folds its edits in
        else:
            apply_pending_edits(lab, prefix, name)  # edits made before the tab was closed
            closed[name] = lab.tables[name]
    if tabs[-1].open:
        with tabs[-1]:
            _sizes(lab, prefix)
    for name, error in table_errors(closed, lab.read).items():
        st.error(f"{message(error)} (tab {EDITOR_TABS[name]})", icon="⚠️")


def fold_hidden_editors(lab: Lab, prefix: str) -> None:
    """While the editors of :func:`editors_panel` are not drawn (their expander closed), the edits made before
    they were hidden are folded into the lab's tables; the page names a table that does not parse."""
    for name in _editor_tables(lab):
        apply_pending_edits(lab, prefix, name)


def _editor_tables(lab: Lab) -> tuple[str, ...]:
    """The tables the editors' tabs hold: Q, K, V given directly, or X and the projections."""
    return ("Q", "K", "V") if "Q" in lab.tables else ("X", "W_q", "W_k", "W_v")


def _editor_tab_labels(lab: Lab) -> list[str]:
    """The editors' tab labels: a tab per table, then the sizes (and presets)."""
    return [EDITOR_TABS[n] for n in _editor_tables(lab)] + ["Sizes" if "Q" in lab.tables else "Presets and sizes"]


def _sizes(lab: Lab, prefix: str) -> None:
    """The size controls (and the presets for W_Q, W_K, W_V) of the editors' last tab."""
    tables = lab.tables
    if "Q" in tables:
        _size_input(lab, prefix, "d_k", "Width d_k of Q and K", ("Q", "K"), "d")
        _size_input(lab, prefix, "d_v", "Width d_v of V", ("V",), "v")
        st.caption(LIMITS_NOTE)
        return
    _presets(lab, prefix)
    n = st.number_input(
        "Embedding dims d_model", 1, MAX_DIMS, tables["X"].shape[1] - 1, key=f"{prefix}_d_model_{lab.rev}"
    )
    if n != tables["X"].shape[1] - 1:
        resize_model_dims(lab, n)
        bump_rev(lab)
        st.rerun()
    _size_input(lab, prefix, "d_k", "Head width d_k (columns of W_Q, W_K)", ("W_q", "W_k"), "k")
    _size_input(lab, prefix, "d_v", "Value width d_v (columns of W_V)", ("W_v",), "v")
    st.caption(LIMITS_NOTE)


def _size_input(lab: Lab, prefix: str, what: str, label: str, names: tuple[str, ...], col_prefix: str) -> None:
    current = len(value_columns(lab.tables[names[0]]))
    n = st.number_input(label, 1, MAX_DIMS, current, key=f"{prefix}_{what}_{lab.rev}")
    if n != current:
        resize_head_width(lab, names, n, col_prefix)
        bump_rev(lab)
        st.rerun()


def _presets(lab: Lab, prefix: str) -> None:
    kind_col, seed_col = st.columns(2)
    kind = kind_col.selectbox(
        "Preset for W_Q, W_K, W_V", PRESETS, format_func=PRESET_LABELS.get, key=f"{prefix}_preset"
    )
    seed = seed_col.number_input("Random seed", 0, 2**31 - 1, 0, key=f"{prefix}_preset_seed")
    st.button("Apply preset", key=f"{prefix}_preset_apply", on_click=_apply_preset, args=(lab, kind, int(seed)))


def _apply_preset(lab: Lab, kind: str, seed: int) -> None:
    apply_preset(lab, kind, seed)
    bump_rev(lab)
