"""attention_views: the view layer of Attention Lab.

Figure builders (``figures.py``, styled by ``theme.py``) are pure functions: NumPy arrays and token
labels in, ``plotly.graph_objects.Figure`` out, never a Streamlit call. Widget and session-state
helpers live in their own modules beside them. Nothing is re-exported here: import the module you
need (``from attention_views import figures``).
"""
