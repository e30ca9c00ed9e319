"""The editors of the lab's tables: a data editor per table (its edits folded in by :func:`folded`, the one way an
edit reaches a table), its CSV download and upload, the tabs of :func:`editors_panel` with the sizes and presets,
and the mask painter."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attention_views.pure import theme
from attention_views.pure.formats import message
from attention_views.pure.lab import MAX_DIMS, MAX_HEADS, MAX_TOKENS, Lab, Session, Vectors
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
    PROJECTOR_DECIMALS,
    SHOWN_DECIMALS,
    TOKEN,
    Delta,
    TableError,
    apply_delta,
    display_table,
    table_from_csv,
    table_to_csv,
    value_columns,
)
from attention_views.ui import session
from attention_views.ui.controls import bump_rev, projector


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


def fold_last_runs_edits(s: Session) -> None:
    """At a run's start, the edits the last whole run's editors hold folded into their tables, whatever page this
    run draws: an editor stores an edit without a rerun (``on_change="ignore"``), and the rerun that carries it may
    be another page's (a link clicked right after typing) or close the editor's tab. An editor whose rows moved
    restarts under a new key and is done; the others stay listed until this run ends (:func:`end_run`), so a run
    cut short leaves them to the next (their cell edits fold in again as they were)."""
    s.editors_drawn = [(owner, name, key) for owner, name, key in s.editors_drawn if not _fold(owner, name, key)]
    s.editors_late = [(owner, name, key) for owner, name, key in s.editors_late if not _fold(owner, name, key)]
    s.editors_drawing = []


def end_run(s: Session) -> None:
    """At a run's end: the editors it drew are the ones the next run folds in first, with those the run before drew
    and this one did not (a grid's commit asks for its rerun a moment after the grid stores the edit, so a page
    link clicked meanwhile runs first, without the edit, and the commit's rerun brings it one run later)."""
    drawn = {key for _, _, key in s.editors_drawing}
    s.editors_late = [e for e in s.editors_drawn if e[2] not in drawn]
    s.editors_drawn, s.editors_drawing = s.editors_drawing, []


def drawn_keys(s: Session) -> list[str]:
    """The keys of the editors this run drew (so far): their edits are stored without a rerun."""
    return [key for _, _, key in s.editors_drawing]


def apply_pending_edits(lab: Lab, prefix: str, name: str) -> None:
    """Fold the editor's reported edits into the lab's table; restart the editors when rows moved."""
    _fold(lab, name, editor_key(lab, prefix, name))


def _fold(owner: Lab | Vectors, name: str, key: str) -> bool:
    """Fold the edits editor ``key`` reports into ``owner``'s table ``name``; when rows moved, restart the editors
    (a new revision in their keys) and say so."""
    owner.tables[name], moved = folded(owner.tables[name], key)
    if moved:
        bump_rev(owner)
    return moved


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
    key = editor_key(lab, prefix, name)
    st.data_editor(
        display_table(frame, lab.read, name, PROJECTOR_DECIMALS if big else SHOWN_DECIMALS),
        key=key,
        num_rows="dynamic" if dynamic_rows else "fixed",
        hide_index=TOKEN in frame.columns,
        column_config=config,
        width="content",
        on_change="ignore",  # stored at once; components/commits.py reruns the app (Streamlit would wait 150 ms)
        alt=EDITOR_TABS.get(name, name),  # its tab's label
    )
    session.current().editors_drawing.append((lab, name, key))
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
        alt="Mask painter",
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


PRESET_LABELS = {"identity": "Identity", "random": "Random (seeded)", "zeros": "Zeros"}


def tables_box(lab: Lab, prefix: str, big: bool, extra: str | None = None) -> DeltaGenerator | None:
    """The lab's editors in an open "Tables" expander; on a projector without one (its padding hid columns).
    ``extra``: the label of one more tab, before the sizes, that the page fills; returns its place while it is
    open, else None."""
    with st.container() if big else st.expander("Tables", expanded=True, icon=":material/edit:"):
        return editors_panel(lab, prefix, extra)


def editors_panel(lab: Lab, prefix: str, extra: str | None = None) -> DeltaGenerator | None:
    """Tabs with the scenario's editable tables: Q, K, V, or X and the projections with presets.

    Only the open tab's editor is drawn (the tabs rerun the page when switched): each editor costs a
    few ms of every rerun. Every table's edits are folded in, by its editor when its tab is open and
    directly when it is closed, and a closed table that does not parse is named below the tabs.
    ``extra``: the label of a tab before the sizes that the page fills; returns its place while it is open.
    """
    names = editor_tables(lab)
    labels = [EDITOR_TABS[n] for n in names] + ([extra] if extra else []) + [_sizes_label(lab)]
    tabs = st.tabs(labels, key=f"{prefix}_tables_tab", on_change="rerun")
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
    place = tabs[len(names)] if extra else None
    return place if place is not None and place.open else None


def fold_hidden_editors(lab: Lab, prefix: str) -> None:
    """While the editors of :func:`editors_panel` are not drawn (their expander closed), the edits made before
    they were hidden are folded into the lab's tables; the page names a table that does not parse."""
    for name in editor_tables(lab):
        apply_pending_edits(lab, prefix, name)


def editor_tables(lab: Lab) -> tuple[str, ...]:
    """The tables the editors' tabs hold: Q, K, V given directly, or X and the projections."""
    return ("Q", "K", "V") if "Q" in lab.tables else ("X", "W_q", "W_k", "W_v")


def _sizes_label(lab: Lab) -> str:
    """The label of the editors' last tab: the sizes (and presets)."""
    return "Sizes" if "Q" in lab.tables else "Presets and sizes"


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
