"""Links and files carry the learning settings: the exercises page's rate, speed, seed and step reached, and the
lesson page's job, seed and step; every field is bounded."""

import base64
import json
import zlib

import pytest

from attention_core.head_training import JOB_INDUCTION
from attention_views.pure import links
from attention_views.pure.lab import JOB_STEPS, MAX_LEARN_STEPS, MAX_SEED, MAX_SPEED, Learning, new_lab


def _token(payload: dict) -> str:
    raw = json.dumps(payload).encode()
    return "1." + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def _learned() -> Learning:
    return Learning(
        lr=3.0, speed=17, seed=42, exercise="previous", step=23, job=JOB_INDUCTION, job_seed=7, job_step=120
    )


def test_learning_settings_round_trip_through_a_link_and_a_file():
    lab = new_lab("mammal-query")
    lab.learning = _learned()
    back, page = links.decode(links.encode(lab, "exercises"))
    assert page == "exercises"
    assert back.learning == _learned()
    assert links.from_json(links.to_json(lab))[0].learning == _learned()


def test_default_learning_settings_stay_out_of_the_link():
    lab = new_lab("mammal-query")
    assert "ln" not in links.lab_payload(lab)
    lab.learning.speed = 6
    assert links.lab_payload(lab)["ln"]["sp"] == 6


def test_a_whole_number_rate_comes_back_as_the_sliders_float():
    back, _ = links.decode(_token({"v": "1", "s": "mammal-query", "ln": {"lr": 1}}))
    assert back.learning.lr == 1.0 and isinstance(back.learning.lr, float)


@pytest.mark.parametrize(
    ("ln", "message"),
    [
        ([1], "must be an object"),
        ({"lr": 0.5}, "lr"),  # not one of the slider's rates
        ({"lr": True}, "lr"),
        ({"sp": 0}, "speed"),
        ({"sp": MAX_SPEED + 1}, "speed"),
        ({"sd": -1}, "seed"),
        ({"sd": MAX_SEED + 1}, "seed"),
        ({"sd": 1.5}, "seed"),
        ({"x": "no-such-exercise"}, "exercise"),
        ({"x": "self", "k": MAX_LEARN_STEPS + 1}, "step"),
        ({"k": 5}, "no exercise"),
        ({"j": "copying"}, "job"),
        ({"js": "7"}, "job_seed"),
        ({"jk": JOB_STEPS + 10}, "job_step"),
        ({"jk": 15}, "job_step"),  # between two snapshots
    ],
)
def test_bad_learning_fields_are_refused_by_name(ln, message):
    with pytest.raises(links.ShareError, match=message):
        links.decode(_token({"v": "1", "s": "mammal-query", "ln": ln}))
