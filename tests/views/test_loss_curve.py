"""figures.loss_curve: the losses as drawn, a marked step, and messages for bad input."""

import numpy as np
import pytest

from attention_views.pure import figures


def test_the_curve_draws_every_loss_against_its_step_and_marks_now():
    fig = figures.loss_curve(np.arange(0, 40, 10), np.array([2.0, 1.0, 0.5, 0.25]), now=20, title="Loss")
    line, now = fig.data
    np.testing.assert_array_equal(line.x, [0, 10, 20, 30])
    np.testing.assert_array_equal(line.y, [2.0, 1.0, 0.5, 0.25])
    assert list(now.x) == [20] and list(now.y) == [0.5]
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= 2.0
    assert fig.layout.title.text == "Loss"


def test_one_point_is_enough():
    assert len(figures.loss_curve(np.array([0]), np.array([1.6])).data) == 1


@pytest.mark.parametrize(
    ("steps", "losses", "now", "message"),
    [
        ([0, 1], [1.0], None, "losses"),
        ([1, 0], [1.0, 0.5], None, "rise"),
        ([0, 1], [1.0, np.nan], None, "finite"),
        ([0, 1], [1.0, 0.5], 5, "not one of the steps"),
    ],
)
def test_bad_input_says_what_to_fix(steps, losses, now, message):
    with pytest.raises(ValueError, match=message):
        figures.loss_curve(np.array(steps), np.array(losses), now=now)
