"""Real model: SmolLM2-135M's 270 heads, from the same NumPy attention as the playground; switch them off."""

import streamlit as st

import attention_models as am
from attention_views import session
from attention_views.formats import message
from attention_views.sections import real_model as rm
from attention_views.widgets import projector

lab = session.current().lab
view, big = lab.model, projector()
st.title("Real model: SmolLM2-135M")
st.caption(
    "A pretrained transformer (30 layers of 9 heads), run by the same NumPy attention as the playground. "
    "Find heads that do recognisable jobs, switch them off, and watch the prediction change."
)
try:
    model = rm.load_model()
except am.ModelNotInstalledError as err:
    rm.not_installed(err)
    st.stop()

rm.input_ui(view)
try:
    ids, run, unedited = rm.run_for(model, view)
except am.AttentionModelError as err:
    st.error(message(err), icon="⚠️")
    st.stop()
scores = rm.head_scores(tuple(ids), rm.scales_key(view.scales))

overview, detail = st.container(key="stack_real_model").columns([3, 5], gap="medium")  # stacked below 1280 px
with overview:
    rm.overview_ui(view, scores, big)
with detail:
    rm.head_ui(run, view, scores, big)
    rm.open_in_playground(model, run, view)

predict, edit = st.columns([3, 5], gap="medium")
with predict:
    st.subheader("Next token")
    rm.next_token_ui(model, run, unedited, view)
    rm.loss_ui(ids, view)
with edit:
    st.subheader("Edit the model")
    rm.edit_ui(lab, scores)
