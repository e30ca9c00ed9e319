"""The shared figure cache is bounded by bytes, keeps the most recently used, and hands out copies."""

import pickle

import numpy as np

from attention_views import cached_figures, figures
from attention_views.cached_figures import SpecCache


def _args(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.ones(8), size=8)
    return (W, [f"t{i}" for i in range(8)], [f"t{i}" for i in range(8)])


def test_a_hit_equals_a_fresh_build_and_is_a_copy():
    cache = SpecCache(10_000_000)
    first = cache.get("attention_heatmap", _args(0), {})
    assert first == figures.SPECS["attention_heatmap"](*_args(0))
    first["layout"]["title"] = "changed by one session"
    again = cache.get("attention_heatmap", _args(0), {})
    assert again["layout"]["title"] != "changed by one session"
    assert len(cache) == 1


def test_the_cache_never_holds_more_bytes_than_its_bound_and_drops_the_oldest():
    one = len(pickle.dumps(figures.SPECS["attention_heatmap"](*_args(0)), protocol=5))
    cache = SpecCache(int(one * 3.5))
    for seed in range(10):
        cache.get("attention_heatmap", _args(seed), {})
        assert cache.bytes <= cache.max_bytes
    assert len(cache) == 3
    held = cache.bytes
    cache.get("attention_heatmap", _args(9), {})  # recent: a hit, nothing changes
    assert (len(cache), cache.bytes) == (3, held)
    cache.get("attention_heatmap", _args(0), {})  # dropped long ago: built again, the oldest (7) goes
    assert len(cache) == 3
    cache.get("attention_heatmap", _args(8), {})  # was second oldest; 0 and 9 were used since
    cache.get("attention_heatmap", _args(9), {})
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes


def test_the_app_cache_is_bounded_at_100_mb():
    assert cached_figures.SPEC_CACHE.max_bytes == 100_000_000
