"""The scaling page, headless: the random row follows d_k, the curves follow the rule, seed 001's numbers."""

import numpy as np
import pytest
from apptest_pages import assert_clean, heatmap_z, open_page, plotly_figures, sent_array

import attention_core as ac

PREFIX = "scaling"


def figure(at, title_start: str) -> dict:
    """The page's figure whose title starts with ``title_start``."""
    figs = {f["layout"]["title"]["text"]: f for f in plotly_figures(at)}
    return next(f for title, f in figs.items() if title.startswith(title_start))


def bars(at) -> dict[str, np.ndarray]:
    """The weights of the one-row bar chart, by series name."""
    return {t["name"]: sent_array(t["y"]) for t in figure(at, "One score row")["data"]}


def lines(at, title_start: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {t["name"]: (sent_array(t["x"]), sent_array(t["y"])) for t in figure(at, title_start)["data"]}


def worked(at):
    """The page with the expander of the notebook's own numbers open (drawn only while open)."""
    at.session_state["scaling_worked"] = True  # what a click on the expander sends
    return at.run()


def test_every_scenario_draws_the_page(scenario):
    at = open_page("scaling", scenario)
    assert_clean(at)
    assert len(plotly_figures(at)) == 3 and not at.metric  # the worked case's expander is closed
    worked(at)
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert len(titles) == 5, titles  # the row's bars, variance, saturation, raw and scaled worked scores
    assert [m.value for m in at.metric] == ["1.08", "0.66", "7.22", "5.67", "0.90"]  # worked case, any scenario


def test_the_bars_are_the_core_row_for_the_slider_value():
    at = open_page("scaling")
    row = ac.sample_score_row(8, 8, np.random.default_rng(0))  # defaults: d_k 8, 8 keys, seed 0
    shown = list(bars(at).values())
    np.testing.assert_allclose(shown[0], row.weights_unscaled)
    np.testing.assert_allclose(shown[1], row.weights_scaled)


def test_moving_the_d_k_slider_changes_the_plotted_row():
    at = open_page("scaling")
    before = bars(at)
    slider = at.select_slider(key="scaling_d_k")
    assert slider.options == [str(2**p) for p in range(10)]  # powers of two, 1 to 512 (issue 14)
    slider.set_value(512).run()
    assert_clean(at)
    after = bars(at)
    unscaled, scaled = after.values()
    assert not np.allclose(list(before.values())[0], unscaled)
    np.testing.assert_allclose(unscaled, ac.sample_score_row(512, 8, np.random.default_rng(0)).weights_unscaled)
    assert unscaled.max() > scaled.max()  # at d_k = 512 the unscaled row has collapsed onto one key
    assert any("d_k = 512" in s.value for s in at.subheader)


def test_seed_and_number_of_keys_change_the_row():
    at = open_page("scaling")
    before = list(bars(at).values())[0]
    at.number_input(key="scaling_seed").set_value(7).run()
    assert not np.allclose(list(bars(at).values())[0], before)
    at.slider(key="scaling_n_keys").set_value(3).run()
    assert_clean(at)
    assert all(v.size == 3 for v in bars(at).values())
    entropy = lines(at, "Softmax saturation")
    assert all(np.all(y <= np.log2(3) + 1e-9) for name, (_, y) in entropy.items() if name.startswith("entropy"))


def test_variance_curves_follow_d_k_and_one():
    at = open_page("scaling")
    curves = lines(at, "Why scale")
    (d, unscaled), (d2, scaled) = curves.values()
    np.testing.assert_array_equal(d, d2)
    assert d[0] == 1 and d[-1] == 512 and len(d) >= 10
    n = 1_000  # the page's sample size per d_k; five standard errors of a sample variance of q.k
    tol = 5 * np.sqrt((2 + 6 / d) / n)
    np.testing.assert_array_less(np.abs(unscaled / d - 1), tol)
    np.testing.assert_array_less(np.abs(scaled - 1), tol)


def test_saturation_curves_show_the_unscaled_softmax_collapsing():
    at = open_page("scaling")
    curves = {name: y for name, (_, y) in lines(at, "Softmax saturation").items()}
    unscaled = next(y for name, y in curves.items() if name.startswith("max weight") and "unscaled" in name)
    scaled = next(y for name, y in curves.items() if name.startswith("max weight") and "unscaled" not in name)
    assert unscaled[-1] > 0.9 > scaled[-1]
    assert unscaled[-1] > unscaled[0]


@pytest.mark.parametrize(
    "which, gold",
    [
        # seed 001_02856d891cb48197.txt, In [5]: np.matmul(q, k.T)
        (
            "Raw",
            [
                [1.8712587, 6.19145356, 4.15940504, -1.57731701],
                [-0.12115231, -1.09390409, -2.67478445, -0.91758004],
                [0.99468909, 1.03143942, 0.53920418, -0.70517691],
                [0.17845267, -4.47881966, -4.43512822, 1.42083484],
            ],
        ),
        # In [9]: scaled = np.matmul(q, k.T) / np.sqrt(d_k)
        (
            "Scaled",
            [
                [0.66158986, 2.1890094, 1.47057175, -0.55766578],
                [-0.04283381, -0.3867535, -0.94567911, -0.32441353],
                [0.3516757, 0.3646689, 0.19063747, -0.24931769],
                [0.06309255, -1.58350188, -1.56805462, 0.50234097],
            ],
        ),
    ],
)
def test_worked_case_is_the_notebooks_scores(which, gold):
    at = worked(open_page("scaling", "apple-orange"))  # the worked case is seed 001's, whatever the scenario
    np.testing.assert_allclose(heatmap_z(figure(at, which)), gold, atol=1e-7)
