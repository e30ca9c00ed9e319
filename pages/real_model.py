"""Real model: SmolLM2-135M's 270 heads, from the same NumPy attention as the playground; which parts answer."""

import streamlit as st

import attention_models as am
from attention_views.pure.formats import message
from attention_views.ui import session
from attention_views.ui.controls import projector
from attention_views.ui.frame import end_page
from attention_views.ui.sections import interp, model_runs
from attention_views.ui.sections import real_model as rm

lab = session.current().lab
view, big = lab.model, projector()
st.title("Real model: SmolLM2-135M")
rm.lecture_card(big)
try:
    model = model_runs.load_model()
except am.ModelNotInstalledError as err:
    rm.not_installed(err)
    end_page()

rm.input_ui(view)
try:
    ids, run, _ = rm.run_for(model, view)
except am.AttentionModelError as err:
    st.error(message(err), icon="⚠️")
    end_page()

# only the open tab is computed: a look at another head costs no attribution, patching or lens
interp.start_default_patching()  # once per process, on a thread: ready when a student opens Patching
heads_tab, attribution_tab, patching_tab, lens_tab = rm.tabs_ui(view)
if heads_tab.open:
    with heads_tab:
        scores = rm.head_scores(tuple(ids), model_runs.scales_key(view.scales))
        overview, detail = st.container(key="stack_real_model").columns([3, 5], gap="medium")  # stacked < 1280 px
        with overview:
            rm.overview_ui(view, scores, big)
            rm.head_types_ui(scores)
        with detail:
            rm.head_ui(run, view, scores, big)
            rm.open_in_playground(model, run, view)
        predict, edit = st.columns([3, 5], gap="medium")
        with predict:
            st.subheader("Next token")
            rm.next_token_ui(model, run, view)
            rm.loss_ui(ids, view)
        with edit:
            st.subheader("Edit the model")
            rm.edit_ui(lab, scores)
if attribution_tab.open:
    with attribution_tab:
        interp.attribution_ui(model, run, view, big)
if patching_tab.open:
    with patching_tab:
        interp.patching_ui(model, view, big)
if lens_tab.open:
    with lens_tab:
        interp.lens_ui(model, run, view, big)
