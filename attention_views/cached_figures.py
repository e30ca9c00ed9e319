"""The figure builders of :mod:`attention_views.figures`, cached across reruns (and sessions).

``cached_figures.attention_heatmap(...)`` (one name per builder, listed at the end) takes the same
arguments as ``figures.attention_heatmap(...)`` and returns the same figure, built once per distinct
input by ``figures.attention_heatmap_spec`` as a plain dict (no plotly objects), kept pickled in one
:class:`SpecCache` of at most 100 MB per process. The builders are pure functions of their arguments, so
the cache holds only immutable data and nothing of one session can reach another.

What reaches the browser, and why the figure is a :class:`SpecFigure` (streamlit 1.67.0 and plotly 7.1.0,
pinned; ``streamlit/elements/plotly_chart.py``, ``plotly_chart``): st.plotly_chart calls
``plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)``, which for a ``BaseFigure``
returns ``fig.to_dict()`` (on a real ``go.Figure`` a ``copy.deepcopy`` of every trace: about a second for
eight 64x64 heads) and for a plain dict re-validates it (``Figure(**d).to_dict()``, as slow); then
``plotly.io.to_json(figure, validate=False)``, which reads the dict (it only pops each trace's ``uid``,
which a spec never has), and ``_resolve_content_width/_height`` read ``figure["layout"]``. A SpecFigure
is a ``go.Figure`` whose ``to_dict()`` is the cached spec itself, so the only work left is the JSON.
If another version changes that path, ``tests/views/test_figure_specs.py`` says so.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import pickle
import threading
from collections import OrderedDict

import plotly.graph_objects as go

from attention_views import figures


class SpecFigure(go.Figure):
    """A ``go.Figure`` made from a finished figure spec, without plotly's object model until it is needed.

    ``to_dict()``/``to_plotly_json()`` return the spec as it is (not a copy: do not modify it). Anything
    else (``fig.layout``, ``fig.update_layout(...)``, ``fig.to_json()``) first turns this object into an
    ordinary validated ``go.Figure`` of a copy of the spec, which from then on behaves exactly like one.
    """

    def __init__(self, spec: dict) -> None:  # no go.Figure.__init__: that builds and validates every trace
        self._spec = spec  # a private name, which BaseFigure.__setattr__ lets through

    def __getattr__(self, name: str) -> object:
        """Called only for attributes not yet set: plotly's internals are built here, on first use."""
        spec = self.__dict__.pop("_spec", None)
        if spec is None or name.startswith("__"):
            raise AttributeError(name)
        go.Figure.__init__(self, copy.deepcopy(spec))  # the deep copy keeps the cached spec unmodified
        return getattr(self, name)

    def to_dict(self) -> dict:
        spec = self.__dict__.get("_spec")
        return spec if spec is not None else super().to_dict()

    def to_plotly_json(self) -> dict:
        return self.to_dict()


class SpecCache:
    """Figure specs kept pickled, least recently used dropped first, bounded by their total size in bytes.

    Shared by every session of the process, so it holds only immutable data (each hit unpickles its own
    copy, as ``st.cache_data`` would) and its bound is on memory, not on a count of entries: a figure's
    size grows with its cells and label lengths from a few kB to about 1 MB
    (benchmarks/bench_figure_cache.py prints the largest). A spec larger than the whole bound is not kept.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._blobs: OrderedDict[bytes, bytes] = OrderedDict()  # key -> pickled spec, oldest first
        self._lock = threading.Lock()  # sessions run on their own threads

    def get(self, name: str, args: tuple, kwargs: dict) -> dict:
        """``figures.SPECS[name](*args, **kwargs)``, built once per distinct input while it stays in the cache."""
        key = hashlib.blake2b(pickle.dumps((name, args, sorted(kwargs.items())), protocol=5)).digest()
        with self._lock:
            blob = self._blobs.get(key)
            if blob is not None:
                self._blobs.move_to_end(key)
        if blob is None:
            blob = pickle.dumps(figures.SPECS[name](*args, **kwargs), protocol=5)
            self._keep(key, blob)
        return pickle.loads(blob)  # noqa: S301 (our own bytes, made just above or earlier in this process)

    def _keep(self, key: bytes, blob: bytes) -> None:
        if len(blob) > self.max_bytes:
            return
        with self._lock:
            old = self._blobs.pop(key, None)
            self.bytes += len(blob) - (len(old) if old is not None else 0)
            self._blobs[key] = blob
            while self.bytes > self.max_bytes:
                _, dropped = self._blobs.popitem(last=False)
                self.bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._blobs)


MAX_BYTES = 100_000_000  # issue 15: the figure cache of one process holds at most 100 MB
SPEC_CACHE = SpecCache(MAX_BYTES)


def _call(name: str, *args: object, **kwargs: object) -> SpecFigure:
    return SpecFigure(SPEC_CACHE.get(name, args, kwargs))  # its own copy: a caller may change it freely


def _cached(name: str) -> functools.partial[SpecFigure]:
    """The cached twin of ``figures.<name>``: the same arguments, the figure built once per distinct input."""
    if name not in figures.SPECS:
        raise ValueError(f"attention_views.figures has no figure builder {name!r}")
    return functools.partial(_call, name)


attention_heatmap = _cached("attention_heatmap")
matrix_heatmap = _cached("matrix_heatmap")
mask_heatmap = _cached("mask_heatmap")
delta_heatmap = _cached("delta_heatmap")
head_grid = _cached("head_grid")
head_similarity_heatmap = _cached("head_similarity_heatmap")
clickable_grid = _cached("clickable_grid")
head_score_grid = _cached("head_score_grid")
activation_bars = _cached("activation_bars")
grouped_activation_bars = _cached("grouped_activation_bars")
product_terms_bar = _cached("product_terms_bar")
variance_vs_dk = _cached("variance_vs_dk")
saturation_vs_dk = _cached("saturation_vs_dk")
vector_arrows = _cached("vector_arrows")
