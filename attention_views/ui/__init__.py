"""The Streamlit part of the views: what draws a page and reads its widgets.

The frame around every page (``frame``: session, sidebar, share link), the session's place in
``st.session_state`` (``session.current``), the shared controls and editors (``controls``, ``editors``), how
figures and read-only tables are shown (``charts``, ``readonly_tables``), the panels and page sections
(``panels``, ``sections``), the exercises and learning views (``exercises``, ``learning``), the "Reproduce in
NumPy" panel (``reproduce``) and the one Streamlit workaround (``streamlit_compat``). It builds on
``attention_views.pure`` and never the other way round.
"""
