"""The plotly.js bundle the in-place figures load (attention_views/ui/components/vendor/README.md): the file pinned
by its hash, of the plotly.js version plotly.py writes its JSON for, holding every trace type the app draws in
place, served with a gzipped copy that is the same bytes."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import plotly
import pytest

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.lab import STAGES
from attention_views.ui import static
from attention_views.ui.components import figure

PINNED_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"  # vendor/README.md's


def version_in(bundle: Path) -> str:
    return re.search(r"plotly\.js \(?[a-z -]*\)? ?v(\d+\.\d+\.\d+)", bundle.read_text()[:300]).group(1)


def test_the_bundle_is_the_pinned_file_and_plotly_pys_version():
    assert hashlib.sha256(figure.BUNDLE.read_bytes()).hexdigest() == PINNED_SHA256
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"  # the plotly.js plotly.py writes for
    assert version_in(figure.BUNDLE) == version_in(full) == "4.1.1"


def test_the_traces_listed_are_the_bundles_own():
    readme = (figure.BUNDLE.parent / "README.md").read_text()
    listed = re.search(r"Contains trace modules (.*)\.", readme).group(1)
    assert set(re.findall(r"`(\w+)`", listed)) == figure.TRACES


@pytest.mark.parametrize("scenario", ac.list_scenarios())
def test_every_figure_drawn_in_place_uses_only_the_bundles_traces(scenario):
    r = ac.run_scenario(ac.load_scenario(scenario)).heads[0]
    n_q, n_k = r.weights.shape
    drawn = [
        figures.attention_heatmap(getattr(r, stage), [f"q{i}" for i in range(n_q)], [f"k{j}" for j in range(n_k)])
        for stage in STAGES
    ]
    drawn.append(figures.activation_bars([f"q{i}" for i in range(n_q)], ac.activation_norms(r.output)))
    for fig in drawn:
        assert {t.type for t in fig.data} <= figure.TRACES


def test_a_figure_the_bundle_cannot_draw_is_refused_before_it_reaches_a_page():
    import plotly.graph_objects as go

    with pytest.raises(ValueError, match="scatter3d"):
        figure.figure_in_place(go.Figure(go.Scatter3d(x=[1], y=[1], z=[1])), "k", {})


def test_the_served_copy_and_its_gzip_are_the_bundle(tmp_path, monkeypatch):
    monkeypatch.setattr(static, "FOLDER", tmp_path)
    figure.plotly_js.cache_clear()
    try:
        url = figure.plotly_js()
    finally:
        figure.plotly_js.cache_clear()
    served = tmp_path / figure.VENDOR / figure.BUNDLE.name
    assert url.endswith(f"/{figure.VENDOR}/{figure.BUNDLE.name}")
    assert served.read_bytes() == figure.BUNDLE.read_bytes()
    assert gzip.decompress(served.with_name(served.name + ".gz").read_bytes()) == figure.BUNDLE.read_bytes()
