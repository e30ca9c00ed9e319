"""The pure part of the views: everything a page shows or keeps that needs no Streamlit.

Figures (``figures``, styled by ``theme``, numbers written by ``formats``), the editable tables and their checks
(``tables``), the share link and file codec (``links``), the session's state (``lab``: one ``Session`` and its
``Lab``), the single- and multi-head runs of a lab (``single_head``, ``multi_head``), the NumPy script that
reproduces a view (``codegen``) and the page list (``navigation``). No module here imports Streamlit or
``attention_views.ui`` (tests/views/test_pure_part.py reads every import and imports every module to check).
"""
