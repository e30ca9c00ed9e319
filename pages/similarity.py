"""Similarity: dot product, norms, cosine and angle of two vectors, and of the scenario's tokens (seed 002)."""

import streamlit as st

from attention_core.vector_pair import compare_vectors, zero_rows
from attention_views.pure import figures, formats
from attention_views.pure.tables import TableError, table_to_matrix
from attention_views.ui import session
from attention_views.ui.charts import beside, chart, metric_columns
from attention_views.ui.controls import projector
from attention_views.ui.readonly_tables import number_table, numbers_frame
from attention_views.ui.sections import similarity

NAMES = ["X", "Y"]

lab = session.current().lab
vec = lab.vectors  # this page's own two vectors
big = projector()

st.title("Similarity: dot product, cosine and angle")
st.latex(r"\cos\theta = \frac{X\cdot Y}{\lVert X\rVert\,\lVert Y\rVert},\qquad \theta = \arccos(\cos\theta)")
edit_col, arrows_col = beside("similarity")  # the vectors beside their arrows
with edit_col:
    st.markdown("**Two vectors**, one per row: edit any entry.")
    similarity.vectors_editor(vec)
valid = False
try:
    M = table_to_matrix(vec.tables["vectors"], "vectors")[1]  # (2, d)
except TableError:
    pass  # its message (vector, entry) is already shown under the editor
else:
    zero = zero_rows(M)
    if zero:
        edit_col.error(
            f"{NAMES[zero[0]]} is all zeros: it has no direction, so there is no cosine or angle. "
            "Change one of its entries.",
            icon="⚠️",
        )
    else:
        vec.last, valid = M, True
if not valid:
    edit_col.warning("Showing the last valid vectors until the entry is fixed.", icon="⏸️")

M = vec.last  # (2, d)
pair = compare_vectors(M)
units = pair.units  # (2, d)
with arrows_col:
    toggles = st.container(horizontal=True)  # side by side where they fit, else one under the other
    three = toggles.toggle("3-D (first three entries)", key="similarity_3d", disabled=M.shape[1] < 3)
    unit = toggles.toggle("Draw the normalised vectors", key="similarity_unit")
    drawn = (units if unit else M)[:, : 3 if three and M.shape[1] >= 3 else 2]  # (2, 2 or 3)
    chart(figures.vector_arrows(dict(zip(NAMES, drawn, strict=True)), projector=big), key="similarity_arrows")
for col, label, value in zip(
    metric_columns(5, big),
    ("dot(X, Y)", "‖X‖", "‖Y‖", "cosine", "angle"),
    (
        formats.metric(pair.dot),
        formats.metric(pair.norms[0]),
        formats.metric(pair.norms[1]),
        f"{pair.cosine:.4f}",
        f"{pair.angle:.2f}°",
    ),
    strict=True,
):
    col.metric(label, value)
st.markdown("**After normalisation**: each vector divided by its length.")
unit_cols = [f"d{j}" for j in range(M.shape[1])]
number_table(
    numbers_frame(units.round(3), ["X_unit", "Y_unit"], unit_cols), "similarity_units", alt="After normalisation"
)
st.caption(f"dot(X_unit, Y_unit) = {units[0] @ units[1]:.4f}: for unit vectors the dot product is the cosine.")

similarity.pairwise_cosine(lab, big)
