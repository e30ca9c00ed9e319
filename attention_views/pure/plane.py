"""The vector plane: queries and keys as arrows in two of their dimensions, one vector moved by a drag.

Pure geometry and bookkeeping for ``ui/components/plane.py``: which two dimensions are drawn, where every
arrow ends, how far the plane reaches, what a drag moved (checked: a position the plane cannot take raises
:class:`PlaneError` with a message naming it) and what the component is sent. Every weight the plane shows
is ``attention_core``'s, computed here for the moved vector and sent as text already printed. Never imports
Streamlit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

import attention_core as ac
from attention_views.pure.tables import value_columns

KINDS = {"Q": "query", "K": "key"}  # the tables whose rows the plane draws -> what a handle is called
HUGE = 1e6  # a coordinate beyond ±HUGE is refused: no drag on the plane reaches it
WEIGHT_DECIMALS = 3  # the weights are printed to this many decimals (the bars and the labels)
STEPS = (1, 1.5, 2, 3, 4, 5, 6, 8, 10)  # the plane's reach is one of these times a power of ten
ROOM = 1.25  # the plane reaches this far past the longest arrow, so a handle can be dragged outward


class PlaneError(ValueError):
    """A drag the plane cannot take (a position not a number, huge, or of a row that is gone)."""


@dataclass(frozen=True)
class Drag:
    """A handle moved on the plane: row ``row`` of table ``kind`` ("Q" or "K") now at ``xy`` in the plane's
    two dimensions; ``id`` names the gesture (one per drag or key press); ``done``: the pointer was let go."""

    kind: str
    row: int
    xy: tuple[float, float]
    id: str
    done: bool


def plane_dims(d_k: int, picked: tuple[int, int] | None = None) -> tuple[int, int]:
    """The two dimensions drawn: (0, 1) unless two different ones in range were picked; d_k >= 2."""
    if d_k < 2:
        raise PlaneError(f"the plane needs at least two dimensions; the queries and keys have {d_k}")
    if picked is not None and picked[0] != picked[1] and all(0 <= j < d_k for j in picked):
        return picked
    return (0, 1)


def extent(Q: np.ndarray, K: np.ndarray, dims: tuple[int, int]) -> float:
    """How far the plane reaches from the origin along each axis: ROOM times the largest |coordinate|
    drawn, rounded up to a power of ten times one of STEPS (1 when every arrow is 0). Q (n_q, d_k), K (n_k, d_k)."""
    biggest = float(np.max(np.abs(np.concatenate([Q[:, dims], K[:, dims]]))))
    if not biggest > 0:
        return 1.0
    reach = biggest * ROOM
    power = 10.0 ** math.floor(math.log10(reach))
    return next(m * power for m in STEPS if m * power >= reach)


def resolution(reach: float) -> float:
    """The grid a dragged position is rounded to: a hundredth of the power of ten below the plane's reach."""
    return 10.0 ** math.floor(math.log10(reach)) / 100


def snap(value: float, grid: float) -> float:
    """``value`` rounded to a multiple of ``grid`` (printed without float noise: 0.30000000000000004 -> 0.3)."""
    decimals = max(0, -math.floor(math.log10(grid)))
    return round(round(value / grid) * grid, decimals) + 0.0


def parse_drag(state: object, tokens: dict[str, list[str]], dim_names: tuple[str, str], grid: float) -> Drag | None:
    """The component's reported drag as a :class:`Drag` (its position snapped to ``grid``), or None when nothing
    was dragged yet.

    ``tokens``: each table's row labels ("Q", "K"). Raises PlaneError, naming the handle and the dimension,
    for a position that is not a number or is beyond ±HUGE, or for a row or table the lab no longer has.
    """
    if not isinstance(state, dict) or not state:
        return None
    kind, row = state.get("kind"), state.get("row")
    if kind not in KINDS or not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < len(tokens[kind]):
        raise PlaneError(f"the dragged handle ({kind!r} row {row!r}) is not on the plane any more; drag again")
    name = f"the {KINDS[kind]} {tokens[kind][row]!r}"
    xy = (state.get("x"), state.get("y"))
    for value, dim in zip(xy, dim_names, strict=True):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise PlaneError(f"{name} was moved to {dim} = {value!r}, which is not a number; drag it again")
        if abs(value) > HUGE:
            raise PlaneError(
                f"{name} was moved to {dim} = {value:.4g}, beyond ±{HUGE:g}, the farthest the plane goes; "
                "drag it closer to the origin"
            )
    return Drag(kind, row, (snap(xy[0], grid), snap(xy[1], grid)), str(state.get("id", "")), state.get("done") is True)


def moved(M: np.ndarray, row: int, dims: tuple[int, int], xy: tuple[float, float]) -> np.ndarray:
    """A copy of ``M (n, d)`` with row ``row`` at ``xy`` in dimensions ``dims``, its other entries held."""
    out = np.array(M, dtype=float)
    out[row, list(dims)] = xy
    return out


def drag_result(result: ac.AttentionResult, drag: Drag | None, dims: tuple[int, int]) -> ac.AttentionResult:
    """The head's attention (``attention_core``) with the dragged vector moved; ``result`` when nothing moved."""
    if drag is None:
        return result
    Q = moved(result.Q, drag.row, dims, drag.xy) if drag.kind == "Q" else result.Q
    K = moved(result.K, drag.row, dims, drag.xy) if drag.kind == "K" else result.K
    return ac.scaled_dot_product_attention(
        Q, K, result.V, mask=result.mask, scale=result.scale, temperature=result.temperature
    )


def write_drag(frame: pd.DataFrame, drag: Drag, dims: tuple[int, int]) -> pd.DataFrame:
    """A copy of the lab's table ``frame`` (Q or K) with the dragged row at the drag's position in ``dims``."""
    out = frame.copy()
    columns = value_columns(frame)
    for j, value in zip(dims, drag.xy, strict=True):
        out.iat[drag.row, out.columns.get_loc(columns[j])] = value
    return out


def weight_text(w: float) -> str:
    """A weight as the plane prints it (WEIGHT_DECIMALS decimals)."""
    return f"{w:.{WEIGHT_DECIMALS}f}"


def plane_data(
    result: ac.AttentionResult,
    query: int,
    dims: tuple[int, int],
    tokens: dict[str, list[str]],
    dim_names: tuple[str, str],
    reach: float,
    *,
    big: bool = False,
) -> dict:
    """What the component draws (JSON): every query and key's end point in the plane, the chosen query's
    weights for each key (numbers for the bars, printed text for the labels), the plane's reach, the grid of
    a keyboard step, and each handle's accessible name. Labels are user text: the component sets them as text."""
    w = result.weights[query]  # (n_k,)
    grid = resolution(reach)
    return {
        "queries": [[float(a), float(b)] for a, b in result.Q[:, dims]],
        "keys": [[float(a), float(b)] for a, b in result.K[:, dims]],
        "query_tokens": list(tokens["Q"]),
        "key_tokens": list(tokens["K"]),
        "query": query,
        "weights": [float(x) for x in w],
        "weight_text": [weight_text(x) for x in w],
        "masked": [not bool(m) for m in result.mask[query]],
        "dims": list(dim_names),
        "reach": reach,
        "step": grid * 10,
        "big": big,
    }
