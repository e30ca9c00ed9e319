"""attention_views: the view layer of Attention Lab, in two parts.

``attention_views.pure``: figures (NumPy arrays and token labels in, ``plotly.graph_objects.Figure`` out), the
table and link codecs, the session's state and the computations the pages show. It never imports Streamlit.

``attention_views.ui``: the Streamlit part (widgets, panels, page sections, the frame around every page), built
on the pure part.

Nothing is re-exported here: import the module you need (``from attention_views.pure import figures``).
"""
