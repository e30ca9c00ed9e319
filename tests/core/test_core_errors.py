"""Every bad input raises AttentionInputError with a message that says what is wrong and where."""

from __future__ import annotations

import numpy as np
import pytest

import attention_core as ac

ONES = np.ones


def _with_nan(shape: tuple[int, int], i: int, j: int, value: float) -> np.ndarray:
    M = ONES(shape)
    M[i, j] = value
    return M


def _sdpa(Q=None, K=None, V=None, **kwargs):
    """scaled_dot_product_attention on 2 queries, 5 keys, d_k = 4, d_v = 3 unless told otherwise."""
    return lambda: ac.scaled_dot_product_attention(
        ONES((2, 4)) if Q is None else Q, ONES((5, 4)) if K is None else K, ONES((5, 3)) if V is None else V, **kwargs
    )


def _mha(X=None, heads=None, **kwargs):
    """multi_head_attention on 3 tokens, d_model = 4, one head of width 2 unless told otherwise."""
    head = ac.Head(ONES((4, 2)), ONES((4, 2)), ONES((4, 2)))
    return lambda: ac.multi_head_attention(
        ONES((3, 4)) if X is None else X, heads=[head] if heads is None else heads, **kwargs
    )


CASES = {
    # wrong rank
    "Q is a vector": (_sdpa(Q=ONES(4)), ["Q must be a 2-D matrix", "1 dimension", "(4,)"]),
    "K is 3-D": (_sdpa(K=ONES((5, 4, 1))), ["K must be a 2-D matrix", "3 dimension", "(5, 4, 1)"]),
    "X_q is a number": (_mha(X=3.0), ["X_q must be a 2-D matrix", "0 dimension"]),
    "Y of activation_norms is a vector": (lambda: ac.activation_norms(ONES(3)), ["Y must be a 2-D matrix"]),
    # empty
    "Q has no rows": (_sdpa(Q=np.zeros((0, 4))), ["Q is empty", "(0, 4)", "at least one row"]),
    "V has no columns": (_sdpa(V=np.zeros((5, 0))), ["V is empty", "(5, 0)"]),
    "heads is empty": (_mha(heads=[]), ["heads is empty"]),
    "selection of no dims": (lambda: ac.selection_head([], 8, "fruit"), ["'fruit' selects no dimensions"]),
    # mismatched shapes
    "Q and K widths": (_sdpa(Q=ONES((2, 3))), ["Q has 3 columns but K has 4"]),
    "K and V rows": (_sdpa(V=ONES((4, 3))), ["K has 5 rows but V has 4"]),
    "W_k rows vs embeddings": (
        _mha(heads=[ac.Head(ONES((4, 2)), ONES((5, 2)), ONES((4, 2)))]),
        ["head 0 W_k has 5 rows but the embeddings have 4 columns"],
    ),
    "W_v rows vs embeddings, named head": (
        _mha(heads=[ac.selection_head([0], 4, "a"), ac.Head(ONES((4, 2)), ONES((4, 2)), ONES((6, 2)), name="B")]),
        ["head 1 (B) W_v has 6 rows but the embeddings have 4 columns"],
    ),
    "W_q and W_k widths": (
        _mha(heads=[ac.Head(ONES((4, 2)), ONES((4, 3)), ONES((4, 2)))]),
        ["W_q has 2 columns but W_k has 3"],
    ),
    "X_q and X_kv widths": (
        lambda: ac.multi_head_attention(ONES((3, 4)), ONES((2, 5)), heads=[]),
        ["X_q has 4 columns but X_kv has 5"],
    ),
    "W_o rows vs concat": (_mha(W_o=ONES((3, 3))), ["W_o has 3 rows but the concatenated heads have 2 columns"]),
    "b_o length": (_mha(W_o=ONES((2, 3)), b_o=ONES(2)), ["b_o has 2 entries", "3 columns"]),
    "b_o without W_o": (_mha(b_o=ONES(2)), ["b_o was given without W_o"]),
    "head bias length": (
        _mha(heads=[ac.Head(ONES((4, 2)), ONES((4, 2)), ONES((4, 2)), b_k=ONES(3))]),
        ["head 0 b_k has 3 entries but its matrix has 2 columns"],
    ),
    "split W_k rows": (
        lambda: ac.split_heads(ONES((4, 8)), ONES((5, 8)), ONES((4, 8)), 2),
        ["W_k has 5 rows but W_q has 4 rows"],
    ),
    "split bias length": (
        lambda: ac.split_heads(ONES((4, 8)), ONES((4, 8)), ONES((4, 8)), 2, b_v=ONES(3)),
        ["b_v has 3 entries", "8 columns"],
    ),
    "cosine lengths": (lambda: ac.cosine_similarity([1, 2, 3], [1, 2]), ["a has 3 entries but b has 2"]),
    "pairwise widths": (lambda: ac.pairwise_cosine(ONES((2, 3)), ONES((2, 4))), ["A has 3 columns but B has 4"]),
    "ragged rows": (_sdpa(Q=[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]]), ["Q has rows of different lengths [2, 4]"]),
    # non-numeric entries
    "text in Q": (_sdpa(Q=[[1.0, 2.0, "x", 4.0], [1.0, 2.0, 3.0, 4.0]]), ["Q row 0, column 2 is 'x', not a number"]),
    "numeric text in K": (_sdpa(K=np.full((5, 4), "1.5")), ["K row 0, column 0 is '1.5', not a number"]),
    "None in V": (_sdpa(V=[[1, 1, 1]] * 4 + [[1, None, 1]]), ["V row 4, column 1 is None, not a number"]),
    "booleans in X": (_mha(X=ONES((3, 4), dtype=bool)), ["X_q row 0, column 0 is True, not a number"]),
    "complex in Q": (_sdpa(Q=ONES((2, 4)) * 1j), ["Q row 0, column 0 is 1j, not a number"]),
    "text in a bias": (
        lambda: ac.split_heads(ONES((4, 2)), ONES((4, 2)), ONES((4, 2)), 1, b_q=[1, "b"]),
        ["b_q entry 1 is 'b', not a number"],
    ),
    "not a Head": (_mha(heads=["head"]), ["heads[0] is a str, not a Head"]),
    # NaN / inf, with row and column
    "NaN in K": (_sdpa(K=_with_nan((5, 4), 2, 3, np.nan)), ["K row 2, column 3 is NaN"]),
    "+inf in Q": (_sdpa(Q=_with_nan((2, 4), 1, 0, np.inf)), ["Q row 1, column 0 is +inf"]),
    "-inf in V": (_sdpa(V=_with_nan((5, 3), 4, 2, -np.inf)), ["V row 4, column 2 is -inf"]),
    "NaN in a head's W_q": (
        _mha(heads=[ac.Head(_with_nan((4, 2), 3, 1, np.nan), ONES((4, 2)), ONES((4, 2)), name="h")]),
        ["head 0 (h) W_q row 3, column 1 is NaN"],
    ),
    "NaN in a bias": (
        _mha(heads=[ac.Head(ONES((4, 2)), ONES((4, 2)), ONES((4, 2)), b_v=[1.0, np.nan])]),
        ["head 0 b_v entry 1 is NaN"],
    ),
    "scores overflow": (
        _sdpa(Q=[[1e160]], K=[[1e160]], V=[[1.0]]),
        ["Q @ K.T overflowed at query row 0, key column 0"],
    ),
    "scaled scores overflow": (
        _sdpa(Q=[[1e100]], K=[[1e100]], V=[[1.0]], scale=1e300),
        ["the scaled scores overflowed at query row 0, key column 0"],
    ),
    # masks
    "mask of the wrong shape": (
        _sdpa(mask=ONES((3, 3), dtype=bool)),
        ["mask has shape (3, 3) but the scores have shape (2, 5)"],
    ),
    "mask transposed in multi-head": (_mha(mask=ONES((4, 3), dtype=bool)), ["mask has shape (4, 3)", "(3, 3)"]),
    "ragged mask": (_sdpa(mask=[[True] * 5, [True]]), ["mask is not a table", "2 rows", "5 entries"]),
    "NaN in an additive mask": (_sdpa(mask=_with_nan((2, 5), 1, 2, np.nan) * 0), ["mask row 1, column 2 is nan"]),
    "+inf in an additive mask": (_sdpa(mask=_with_nan((2, 5), 0, 4, np.inf)), ["mask row 0, column 4 is inf"]),
    "text mask": (_sdpa(mask=np.full((2, 5), "yes")), ["mask must be booleans", "or numbers"]),
    "unknown mask kind": (
        lambda: ac.run_scenario(ac.load_scenario("emma-friend"), mask="diagonal"),
        ["mask must be one of none, causal", "'diagonal'"],
    ),
    "causal_mask size 0": (lambda: ac.causal_mask(0), ["n_queries must be a whole number of at least 1"]),
    "causal_mask keys -1": (lambda: ac.causal_mask(3, -1), ["n_keys must be a whole number of at least 1"]),
    # temperature and scale
    "temperature 0": (_sdpa(temperature=0), ["temperature must be greater than 0", "0.0"]),
    "temperature negative": (_mha(temperature=-1.5), ["temperature must be greater than 0", "-1.5"]),
    "temperature 0 in a scenario": (
        lambda: ac.run_scenario(ac.load_scenario("apple-orange"), temperature=0.0),
        ["temperature must be greater than 0"],
    ),
    "temperature text": (_sdpa(temperature="hot"), ["temperature must be a number", "'hot'"]),
    "temperature NaN": (_sdpa(temperature=float("nan")), ["temperature must be a finite number"]),
    "scale text": (_sdpa(scale="big"), ["scale must be a number", "'big'"]),
    "scale inf": (_mha(scale=float("inf")), ["scale must be a finite number"]),
    # head counts and selections
    "width not divisible": (
        lambda: ac.split_heads(ONES((4, 6)), ONES((4, 6)), ONES((4, 6)), 4),
        ["W_q has 6 columns, which do not split evenly into 4 heads"],
    ),
    "W_v width not divisible": (
        lambda: ac.split_heads(ONES((4, 8)), ONES((4, 8)), ONES((4, 6)), 4),
        ["W_v has 6 columns", "4 heads"],
    ),
    "zero heads": (
        lambda: ac.split_heads(ONES((4, 8)), ONES((4, 8)), ONES((4, 8)), 0),
        ["n_heads must be a whole number of at least 1, but it is 0"],
    ),
    "fractional heads": (lambda: ac.split_heads(ONES((4, 8)), ONES((4, 8)), ONES((4, 8)), 2.0), ["n_heads", "2.0"]),
    "selection dim too large": (
        lambda: ac.selection_head([2, 8], 8, "acidity"),
        ["'acidity' selects dimension 8", "dimensions 0 to 7"],
    ),
    "selection dim negative": (lambda: ac.selection_head([-1], 4), ["selects dimension -1", "0 to 3"]),
    "selection dim fractional": (lambda: ac.selection_head([1.5], 4), ["selects dimension 1.5"]),
    "selection d_model 0": (lambda: ac.selection_head([0], 0), ["d_model must be a whole number of at least 1"]),
    # scenarios and similarity
    "unknown scenario": (lambda: ac.load_scenario("nope"), ["unknown scenario 'nope'", "mammal-query", "emma-friend"]),
    "zero vector cosine": (lambda: ac.cosine_similarity([0, 0], [1, 1]), ["a is all zeros"]),
}


@pytest.mark.parametrize("call, fragments", list(CASES.values()), ids=list(CASES))
def test_bad_input_raises_a_message_naming_the_problem(call, fragments):
    with pytest.raises(ac.AttentionInputError) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} is not in the message {message!r}"


def test_attention_input_error_is_a_value_error():
    assert issubclass(ac.AttentionInputError, ValueError)


def test_a_numeric_object_array_is_accepted():
    """A table of numbers that arrives as dtype=object (e.g. from a pandas frame) is still numbers."""
    Q = np.array([[1, 2.5]], dtype=object)
    r = ac.scaled_dot_product_attention(Q, [[1.0, 0.0]], [[3.0]])
    np.testing.assert_array_equal(r.scores, [[1.0]])
    np.testing.assert_array_equal(r.output, [[3.0]])
