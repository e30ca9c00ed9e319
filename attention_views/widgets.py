"""Streamlit widget helpers shared by the pages: the lab state, the sidebar, bound controls, editors.

This is the only module of the view package that imports Streamlit. Every widget has an explicit
key prefixed by its page; the canonical values live in ``st.session_state["lab"]`` (state.py) so
that an edit made on one page is there on every other page, and nothing is shared between browser
sessions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

import attention_core as ac
from attention_views import share, theme
from attention_views.editors import (
    TOKEN,
    Delta,
    TableError,
    apply_delta,
    display_table,
    table_from_csv,
    table_to_csv,
    value_columns,
)
from attention_views.reproduce_widget import reproduce_panel
from attention_views.state import (
    DEFAULT_SCENARIO,
    MASK_KINDS,
    MASK_PARAMS,
    MAX_DIMS,
    MAX_HEADS,
    MAX_TOKENS,
    PRESETS,
    SCALE_MODES,
    apply_preset,
    custom_mask,
    lab_tokens,
    new_lab,
    resize_head_width,
    resize_model_dims,
    table_errors,
)

LAB = "lab"
SHARE_SLOT = "_share_slot"  # this run's share-panel container (a per-session placeholder, re-made every run)
LINK_CACHE = "_link_cache"  # the last link token and what it was made from (see link_state)
PRISTINE = "_pristine_lab"  # this session's pristine copy of its scenario, to tell the edits apart
REPRODUCE = "sidebar_reproduce"  # the "Reproduce in NumPy" expander's open state
PAGE_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 2rem; }
h1 { font-size: 2.1rem !important; padding-top: 0 !important; }
</style>"""
PROJECTOR_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 2rem; }
.stApp, .stMarkdown p, .stCaption, label, .stDataFrame { font-size: 1.25rem !important; }
h1 { font-size: 2.4rem !important; padding-top: 0 !important; } h2, h3 { font-size: 1.9rem !important; }
</style>"""
PAGE_PREFIXES = ("home_", "playground_", "multi_head_", "step_by_step_", "scaling_", "similarity_", "exercises_")


@st.cache_data
def scenario_cards() -> dict[str, tuple[str, str, str]]:
    """id -> (title, seed file, story) for every scenario; immutable, so cached across sessions."""
    out = {}
    for sid in ac.list_scenarios():
        sc = ac.load_scenario(sid)
        out[sid] = (sc.title, sc.seed, sc.story)
    return out


def lab(page: str = "") -> dict:
    """This session's lab state for ``page``, created on first use from the link when it carries one.

    A link may carry ``?state=`` (a full shared view) or just ``?scenario=``; a damaged one is
    refused with a warning and the scenario's defaults are shown. Call :func:`finish` at the end of
    the page so the link in the address bar and the sidebar follows every edit.
    """
    _leave_pages_folder_mode()
    ss = st.session_state
    ss["page"] = page
    requested = st.query_params.get("scenario")
    valid = requested in scenario_cards()
    if requested is not None and not valid:
        st.warning(f"The link asks for scenario {requested!r}, which does not exist; showing the current one.")
    if LAB not in ss:
        ss[LAB] = _lab_from_link(requested if valid else DEFAULT_SCENARIO)
    elif valid and requested != ss[LAB]["scenario"]:
        load_scenario(requested)
    sidebar()
    return ss[LAB]


def _leave_pages_folder_mode() -> None:
    """Make a direct link's first run go through app.py's st.navigation.

    A server whose app has a folder named ``pages/`` starts in Streamlit's old multipage mode: until
    some session has run app.py (which calls st.navigation), a direct link such as /playground runs
    the page file alone, without app.py's page config and with a generated page list. st.navigation
    switches that mode off by clearing this flag; we clear it and rerun, so the run goes through
    app.py with the same URL. (Streamlit 1.67, pinned: streamlit/runtime/pages_manager.py.)
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def _lab_from_link(scenario_id: str) -> dict:
    token = st.query_params.get("state")
    if token:
        try:
            return share.decode(token)[0]
        except share.ShareError as err:
            st.warning(f"This link's saved view could not be opened: {err}. Showing the scenario's defaults.")
    return new_lab(scenario_id)


def finish() -> None:
    """Keep the address bar and the sidebar's share panel equal to the current view."""
    ss = st.session_state
    lab, page = ss[LAB], ss.get("page", "")
    params = {"scenario": lab["scenario"]}
    token = link_state(lab, page)
    if token is not None:
        params["state"] = token
    if {k: st.query_params.get(k) for k in ("scenario", "state")} != {"state": None, **params}:
        st.query_params.from_dict(params)
    query = "&".join(f"{k}={v}" for k, v in params.items())
    with ss[SHARE_SLOT]:
        if len(query) > share.LINK_LIMIT:
            st.warning(f"This view is too large for a link ({len(query)} characters; the limit is "
                       f"{share.LINK_LIMIT}). Download it as a JSON file instead.")
        else:
            st.caption("Link to this view (copy it with the icon):")
            st.code(f"{(st.context.url or '').split('?')[0]}?{query}", language=None, wrap_lines=True)
        view = {**lab, "tables": dict(lab["tables"])}  # this run's view (tables are replaced, never edited): the
        # callable runs on another thread, maybe while the next rerun changes the lab
        st.download_button("Download this view (JSON)", lambda: share.to_json(view, page),  # made on click
                           file_name=f"attention-lab-{lab['scenario']}.json", mime="application/json",
                           key="sidebar_download", width="stretch")
        st.file_uploader("Open a saved view (.json)", type=["json"], key="sidebar_upload", on_change=_on_upload)
        if ss.get("sidebar_upload_error"):
            st.error(ss["sidebar_upload_error"], icon="⚠️")
    reproduce = st.sidebar.expander("Reproduce in NumPy", icon=":material/code:", key=REPRODUCE, on_change="rerun")
    if reproduce.open:  # the script is written only while someone is looking at it
        with reproduce:
            reproduce_panel(ss[LAB])


def link_state(lab: dict, page: str) -> str | None:
    """The link's ``state=`` token for the lab (None for a pristine view), encoded again only after a change.

    The last token is kept in this session with what it was made from: the scenario, page and scalar
    fields by value (with their types: 1 and 1.0 encode differently), the painted mask by value, and
    the tables and heads by identity, which is enough because they are replaced, never edited in
    place (editors.apply_delta and every other change build a new DataFrame).
    """
    ss = st.session_state
    values = (lab["scenario"], page, *((type(lab[f]), lab[f]) for f in share.SCALARS), tuple(lab["tables"]))
    frames = (lab["heads"], *lab["tables"].values())
    mask = lab.get("mask_custom")
    last = ss.get(LINK_CACHE)
    if (last is not None and last["values"] == values and len(last["frames"]) == len(frames)
            and all(a is b for a, b in zip(last["frames"], frames, strict=True)) and _same_mask(last["mask"], mask)):
        return last["token"]
    pristine = ss.get(PRISTINE)
    if pristine is None or pristine["scenario"] != lab["scenario"]:
        pristine = ss[PRISTINE] = new_lab(lab["scenario"])  # this session's own copy, only ever read
    payload = share.lab_payload(lab, page, pristine=pristine)
    token = share.encode_payload(payload) if payload.keys() - {"v", "s", "p"} else None
    ss[LINK_CACHE] = {"values": values, "frames": frames, "mask": None if mask is None else mask.copy(),
                      "token": token}
    return token


def _same_mask(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool((a == b).all())


def _on_upload() -> None:
    ss = st.session_state
    ss["sidebar_upload_error"] = ""
    upload = ss.get("sidebar_upload")
    if upload is None:
        return
    try:
        if upload.size > share.MAX_FILE_BYTES:
            raise share.ShareError(f"the file is larger than {share.MAX_FILE_BYTES // 1000} kB, the app's limit")
        restored, _ = share.from_json(upload.getvalue())
    except share.ShareError as err:
        ss["sidebar_upload_error"] = f"That file was not opened: {err}. Nothing was changed."
        return
    _replace_lab(restored)


def projector() -> bool:
    """True when the lecturer switched on projector mode (larger text everywhere)."""
    return bool(st.session_state.get("sidebar_projector", False))


def load_scenario(scenario_id: str) -> None:
    """Replace the lab with a pristine copy of a scenario; every editor and control starts afresh."""
    _replace_lab(new_lab(scenario_id))
    st.query_params["scenario"] = scenario_id


def _replace_lab(new: dict) -> None:
    ss = st.session_state
    new["rev"] = ss[LAB]["rev"] + 1 if LAB in ss else 0
    ss[LAB] = new
    for key in [k for k in ss if isinstance(k, str) and k.startswith(PAGE_PREFIXES)]:
        del ss[key]


def _on_pick() -> None:
    load_scenario(st.session_state["sidebar_scenario"])


def _on_reset() -> None:
    load_scenario(st.session_state[LAB]["scenario"])


def sidebar() -> None:
    """Scenario picker, Reset, projector mode and the share panel (filled by :func:`finish`)."""
    ss, cards = st.session_state, scenario_cards()
    if ss.get("sidebar_scenario") != ss[LAB]["scenario"]:
        ss["sidebar_scenario"] = ss[LAB]["scenario"]
    with st.sidebar:
        st.selectbox(
            "Scenario", list(cards), format_func=lambda sid: cards[sid][0], key="sidebar_scenario", on_change=_on_pick
        )
        title, seed, story = cards[ss[LAB]["scenario"]]
        st.caption(f"{story}  \nSeed notebook: `{seed}`")
        st.button("Reset scenario", key="sidebar_reset", on_click=_on_reset, help="Undo every edit of this scenario")
        st.toggle("Projector mode", key="sidebar_projector", help="Larger text and high contrast for a lecture hall")
        ss[SHARE_SLOT] = st.expander("Share and save", icon=":material/share:").container()
    st.html(PROJECTOR_CSS if projector() else PAGE_CSS)


def bound(widget: Callable, label: str, key: str, field: str, **kwargs: object) -> object:
    """Draw ``widget`` with its value kept in the lab's ``field`` (so every page shares it)."""
    ss = st.session_state
    if key not in ss:
        ss[key] = ss[LAB][field]
    value = widget(label, key=key, **kwargs)
    ss[LAB][field] = value
    return value


def bump_rev(lab: dict) -> None:
    """Re-create every editor from the canonical tables (after a change of shape or a preset)."""
    lab["rev"] += 1


def editor_key(lab: dict, prefix: str, name: str) -> str:
    return f"{prefix}_editor_{name}_{lab['rev']}"


def apply_pending_edits(lab: dict, prefix: str, name: str) -> None:
    """Fold the editor's reported edits into the canonical table (never writing its output back in)."""
    delta = Delta.from_state(st.session_state.get(editor_key(lab, prefix, name)))
    if delta is None:
        return
    lab["tables"][name] = apply_delta(lab["tables"][name], delta)
    if delta.reshapes:  # row positions changed: the editor must restart from the canonical table
        bump_rev(lab)


def matrix_editor(lab: dict, prefix: str, name: str, *, dynamic_rows: bool = False, help: str = "") -> None:
    """An editor for one of the lab's tables, with its error (matrix, row, column) right below it."""
    apply_pending_edits(lab, prefix, name)
    frame = lab["tables"][name]
    config = {col: st.column_config.NumberColumn(col, help=help or None, width="small") for col in value_columns(frame)}
    if TOKEN in frame.columns:
        config[TOKEN] = st.column_config.TextColumn("token", help="Token label shown on the axes", width="small")
    st.data_editor(
        display_table(frame),
        key=editor_key(lab, prefix, name),
        num_rows="dynamic" if dynamic_rows else "fixed",
        hide_index=TOKEN in frame.columns,
        column_config=config,
        width="stretch",
    )
    error = table_errors({"tables": {name: frame}}).get(name)
    if error:
        st.error(error, icon="⚠️")
    _csv_popover(lab, prefix, name)


def _csv_popover(lab: dict, prefix: str, name: str) -> None:
    with st.popover(f"{name} as CSV", icon=":material/table_view:"):
        frame = lab["tables"][name]  # never edited in place, so the callable made on click sees this table
        st.download_button(f"Download {name}.csv", lambda: table_to_csv(frame), file_name=f"{name}.csv",
                           mime="text/csv", key=f"{prefix}_csv_down_{name}")
        key, error_key = f"{prefix}_csv_up_{name}_{lab['rev']}", f"{prefix}_csv_error_{name}"
        st.file_uploader(f"Replace {name} from a CSV file", type=["csv"], key=key,
                         on_change=_on_csv_upload, args=(key, name, error_key))
        if st.session_state.get(error_key):
            st.error(st.session_state[error_key], icon="⚠️")


def _on_csv_upload(key: str, name: str, error_key: str) -> None:
    ss = st.session_state
    upload = ss.get(key)
    ss[error_key] = ""
    if upload is None:
        return
    try:
        ss[LAB]["tables"][name] = table_from_csv(upload.getvalue(), ss[LAB]["tables"][name], name,
                                                 max_rows=MAX_TOKENS, max_cols=MAX_DIMS)
    except TableError as err:
        ss[error_key] = f"{err} Nothing was changed."
        return
    bump_rev(ss[LAB])


def chart(fig: object, key: str, **kwargs: object) -> object:
    """st.plotly_chart with the toolbar's PNG export at slide resolution, named after page and scenario."""
    ss = st.session_state
    name = f"{ss.get('page') or 'attention'}-{ss[LAB]['scenario']}-{key.split('_', 1)[-1]}"
    kwargs.setdefault("theme", None)  # keep the figure's own projector-friendly template and colours
    return st.plotly_chart(fig, key=key, config=theme.png_export_config(name), **kwargs)


def csv_download(label: str, frame: pd.DataFrame, file_name: str, key: str) -> None:
    """A download button for a result table as CSV."""
    st.download_button(label, lambda: frame.to_csv(index=False), file_name=file_name, mime="text/csv", key=key,
                       icon=":material/download:")  # written on click


def metric_number(value: float) -> str:
    """A number for st.metric: two decimals while short ("2.42"), else scientific ("1.235e+200")."""
    if not np.isfinite(value):  # past the float range: the true value exists but a float cannot hold it
        return "> 1.8e308" if value > 0 else "< −1.8e308" if value < 0 else "too large"
    return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.4g}"


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
}


MASK_LABELS = {"none": "none", "causal": "causal", "padding": "padding", "window": "sliding window",
               "prefix": "prefix-LM", "custom": "custom"}
MASK_HELP = ("causal: a token sees itself and earlier tokens · padding: the last n keys are hidden · "
             "sliding window: itself and the w − 1 tokens before it · prefix-LM: the first p tokens are seen by "
             "all, the rest causally · custom: paint it cell by cell")
MASK_PARAM_LABELS = {"padding": ("Padding keys n", 0), "window": ("Window width w", 1),
                     "prefix": ("Prefix length p", 0)}
SCALE_LABELS = {"sqrt": "1/√d_k", "none": "none (×1)", "custom": "custom"}
STAGE_LABELS = {"scores": "Raw scores QKᵀ", "scaled": "Scaled", "masked": "Masked", "weights": "Weights"}
PRESET_LABELS = {"identity": "Identity", "random": "Random (seeded)", "zeros": "Zeros"}


def attention_controls(lab: dict, prefix: str) -> None:
    """Mask, scaling and temperature, shared by every page through the lab state."""
    mask_col, scale_col, temp_col = st.columns([4, 3, 2])
    with mask_col:
        bound(st.radio, "Mask", f"{prefix}_mask", "mask", options=MASK_KINDS, format_func=MASK_LABELS.get,
              horizontal=True, help=MASK_HELP)
        if lab["mask"] in MASK_PARAMS:
            label, low = MASK_PARAM_LABELS[lab["mask"]]
            bound(st.number_input, label, f"{prefix}_{MASK_PARAMS[lab['mask']]}", MASK_PARAMS[lab["mask"]],
                  min_value=low, max_value=MAX_TOKENS, step=1)
    with scale_col:
        bound(st.radio, "Scaling", f"{prefix}_scale_mode", "scale_mode", options=SCALE_MODES,
              format_func=SCALE_LABELS.get, horizontal=True, help="What the raw scores QKᵀ are multiplied by")
        if lab["scale_mode"] == "custom":
            bound(st.number_input, "Scale factor", f"{prefix}_scale_custom", "scale_custom",
                  min_value=-100.0, max_value=100.0, step=0.1, format="%.4f")
    with temp_col:
        bound(st.slider, "Temperature", f"{prefix}_temperature", "temperature", min_value=0.1, max_value=5.0,
              step=0.1, help="Divides the scaled scores: < 1 sharpens the softmax, > 1 flattens it")


def mask_painter(lab: dict, prefix: str) -> None:
    """A checkbox grid (rows: queries, columns: keys) that paints the custom mask, cell by cell."""
    query_tokens, key_tokens = lab_tokens(lab)
    mask = custom_mask(lab, len(query_tokens), len(key_tokens))  # (n_q, n_k)
    cols = [f"k{j}" for j in range(mask.shape[1])]
    key = f"{prefix}_mask_editor_{lab['rev']}_{mask.shape[0]}x{mask.shape[1]}"
    delta = Delta.from_state(st.session_state.get(key))
    if delta is not None:
        for i, cells in delta.edited_rows.items():
            for col, value in cells.items():
                if 0 <= i < mask.shape[0] and col in cols:
                    mask[i, cols.index(col)] = bool(value)
    lab["mask_custom"] = mask
    frame = pd.DataFrame(mask, columns=cols)
    frame.insert(0, TOKEN, query_tokens)
    config = {c: st.column_config.CheckboxColumn(label or f"key {j}", width="small")
              for j, (c, label) in enumerate(zip(cols, key_tokens, strict=True))}
    config[TOKEN] = st.column_config.TextColumn("query ↓ / key →", disabled=True)
    st.caption("Tick a cell to let that query (row) attend that key (column).")
    st.data_editor(frame, key=key, hide_index=True, column_config=config, disabled=[TOKEN])


def blind_rows_note(mask: object, query_tokens: list[str]) -> None:
    """Say which queries the mask leaves with no visible key (their weights are all zero)."""
    rows = [] if mask is None else ac.blind_rows(mask)
    if len(rows):
        names = ", ".join(repr(query_tokens[i]) for i in rows[:8]) + (" …" if len(rows) > 8 else "")
        st.info(f"The mask hides every key from {names}: nothing to attend to, so the weights of that row are all "
                "zero and its output is a zero vector (a real model never masks a whole row).", icon="🕳️")


LIMITS_NOTE = (f"Sizes that stay interactive: at most {MAX_TOKENS} tokens, {MAX_DIMS} dimensions and {MAX_HEADS} "
               f"heads. Heatmaps write their values in the cells up to {theme.CELL_TEXT_LIMIT} tokens.")


EDITOR_TABS = {"Q": "Q (queries)", "K": "K (keys)", "V": "V (values)", "X": "X (embeddings)", "W_q": "W_Q",
               "W_k": "W_K", "W_v": "W_V"}


def editors_panel(lab: dict, prefix: str) -> None:
    """Tabs with the scenario's editable tables: Q, K, V, or X and the projections with presets.

    Only the open tab's editor is drawn (the tabs rerun the page when switched): each editor costs a
    few ms of every rerun. Every table's edits are folded in, by its editor when its tab is open and
    directly when it is closed, and a closed table that does not parse is named below the tabs.
    """
    names = ("Q", "K", "V") if "Q" in lab["tables"] else ("X", "W_q", "W_k", "W_v")
    last = "Sizes" if "Q" in lab["tables"] else "Presets and sizes"
    tabs = st.tabs([EDITOR_TABS[n] for n in names] + [last], key=f"{prefix}_tables_tab", on_change="rerun")
    closed = {}
    for tab, name in zip(tabs, names, strict=False):
        if tab.open:
            with tab:
                matrix_editor(lab, prefix, name, dynamic_rows=name in ("X", "Q", "K", "V"))  # folds its edits in
        else:
            apply_pending_edits(lab, prefix, name)  # edits made before the tab was closed
            closed[name] = lab["tables"][name]
    if tabs[-1].open:
        with tabs[-1]:
            _sizes(lab, prefix)
    for name, error in table_errors({"tables": closed}).items():
        st.error(f"{error} (tab {EDITOR_TABS[name]})", icon="⚠️")


def _sizes(lab: dict, prefix: str) -> None:
    """The size controls (and the presets for W_Q, W_K, W_V) of the editors' last tab."""
    tables = lab["tables"]
    if "Q" in tables:
        _size_input(lab, prefix, "d_k", "Width d_k of Q and K", ("Q", "K"), "d")
        _size_input(lab, prefix, "d_v", "Width d_v of V", ("V",), "v")
        st.caption(LIMITS_NOTE)
        return
    _presets(lab, prefix)
    n = st.number_input("Embedding dims d_model", 1, MAX_DIMS, tables["X"].shape[1] - 1,
                        key=f"{prefix}_d_model_{lab['rev']}")
    if n != tables["X"].shape[1] - 1:
        resize_model_dims(lab, n)
        bump_rev(lab)
        st.rerun()
    _size_input(lab, prefix, "d_k", "Head width d_k (columns of W_Q, W_K)", ("W_q", "W_k"), "k")
    _size_input(lab, prefix, "d_v", "Value width d_v (columns of W_V)", ("W_v",), "v")
    st.caption(LIMITS_NOTE)


def _size_input(lab: dict, prefix: str, what: str, label: str, names: tuple[str, ...], col_prefix: str) -> None:
    current = len(value_columns(lab["tables"][names[0]]))
    n = st.number_input(label, 1, MAX_DIMS, current, key=f"{prefix}_{what}_{lab['rev']}")
    if n != current:
        resize_head_width(lab, names, n, col_prefix)
        bump_rev(lab)
        st.rerun()


def _presets(lab: dict, prefix: str) -> None:
    kind_col, seed_col = st.columns(2)
    kind = kind_col.selectbox("Preset for W_Q, W_K, W_V", PRESETS, format_func=PRESET_LABELS.get,
                              key=f"{prefix}_preset")
    seed = seed_col.number_input("Random seed", 0, 2**31 - 1, 0, key=f"{prefix}_preset_seed")
    if st.button("Apply preset", key=f"{prefix}_preset_apply"):
        apply_preset(lab, kind, int(seed))
        bump_rev(lab)
        st.rerun()
