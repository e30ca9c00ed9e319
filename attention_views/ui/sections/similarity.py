"""The similarity page's sections: the two editable vectors, and the cosine between the scenario's tokens."""

from __future__ import annotations

import streamlit as st

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.formats import message
from attention_views.pure.lab import Lab, Vectors
from attention_views.pure.single_head import resize_head_width
from attention_views.pure.tables import TableError, table_to_matrix, value_columns
from attention_views.ui.charts import chart
from attention_views.ui.controls import bump_rev
from attention_views.ui.editors import matrix_editor


def vectors_editor(vec: Vectors) -> None:
    """The two vectors (one table, a row each) and, under them, how many entries they have."""
    matrix_editor(vec, "similarity", "vectors")
    n = len(value_columns(vec.tables["vectors"]))
    wanted = st.number_input("Entries per vector", 2, 16, n, key=f"similarity_dims_{vec.rev}")
    if wanted != n:
        resize_head_width(vec, ("vectors",), wanted, "d")
        bump_rev(vec)
        st.rerun()


def pairwise_cosine(lab: Lab, big: bool) -> None:
    """Every token of the scenario's X (or K) against every other, as a heatmap of cosines."""
    st.subheader("Cosine similarity between the scenario's tokens")
    name = "X" if "X" in lab.tables else "K"
    what = "embeddings X" if name == "X" else "keys K"
    try:
        tokens, E = table_to_matrix(lab.tables[name], name)  # (n, d)
    except TableError as err:
        st.error(
            f"The scenario's {what} table has an error, so this heatmap is not drawn: {message(err)}. "
            "Fix it on the Playground page.",
            icon="⚠️",
        )
    else:
        st.caption(
            f"Every row of the {what} against every other: 1 = same direction, 0 = orthogonal, "
            "−1 = opposite. A row of zeros has no direction and gets 0."
        )
        chart(
            figures.matrix_heatmap(
                ac.pairwise_cosine(E, E), tokens, tokens, title=f"Pairwise cosine of the {what}", projector=big
            ),
            key="similarity_pairwise",
        )
