"""The vector plane: queries and keys as arrows in a plane of their space, one vector moved by a drag.

The plane is spanned by two orthonormal directions ``E`` (2, d_k): two of the dimensions themselves (a toy
scenario's named dimensions), or two keys the student picks, made orthonormal (Gram-Schmidt; a real head's 64
dimensions mean nothing one by one). A vector v is drawn at its coordinates ``v · E^T``; a vector dragged to
(a, b) becomes ``held + a e1 + b e2``, where ``held = v - (v · E^T) · E`` is its part outside the plane, unchanged.

Pure geometry and bookkeeping for ``ui/components/plane.py``: which plane is drawn, where every
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
from attention_core.attention import attention_stages
from attention_views.pure.tables import value_columns

KINDS = {"Q": "query", "K": "key"}  # the tables whose rows the plane draws -> what a handle is called
PARALLEL = 1e-9  # two keys span no plane when the second's part at right angles is below this share of its length
HUGE = 1e6  # a coordinate beyond ±HUGE is refused: no drag on the plane reaches it
WEIGHT_DECIMALS = 3  # the weights are printed to this many decimals (the bars and the labels)
STEPS = (1, 1.5, 2, 3, 4, 5, 6, 8, 10)  # the plane's reach is one of these times a power of ten
ROOM = 1.25  # the plane reaches this far past the longest arrow, so a handle can be dragged outward
AHEAD_STEPS = 8  # while a handle is dragged, the weights are sent for the grid points up to this many steps ...
AHEAD_WEIGHTS = 3000  # ... from the drag's path, fewer when n_k is large: at most this many printed weights a run
LEAD_STEPS = 32  # a drag's lead (where the pointer will be when the answer arrives) reaches this many steps at most


class PlaneError(ValueError):
    """A drag the plane cannot take (a position not a number, huge, or of a row that is gone)."""


@dataclass(frozen=True)
class Plane:
    """The plane drawn: spanned by the orthonormal rows of ``E`` (2, d_k), called ``names`` on its axes;
    ``dims``: the two dimensions when E's rows are those axes (a drag then writes only their two cells), else None;
    ``keys``: the two keys spanning it, else None. Keys move only on a plane of two dimensions (a plane of two
    keys would turn with a moved key)."""

    E: np.ndarray
    names: tuple[str, str]
    dims: tuple[int, int] | None = None
    keys: tuple[int, int] | None = None

    @property
    def keys_move(self) -> bool:
        return self.keys is None


@dataclass(frozen=True)
class Drag:
    """A handle moved on the plane: row ``row`` of table ``kind`` ("Q" or "K") now at ``xy`` in the plane's
    two dimensions; ``id`` names the gesture (one per drag or key press); ``done``: the pointer was let go;
    ``lead``: how far the pointer is expected to move on until this report is answered (plane units, capped)."""

    kind: str
    row: int
    xy: tuple[float, float]
    id: str
    done: bool
    lead: tuple[float, float] = (0.0, 0.0)


def plane_dims(d_k: int, picked: tuple[int, int] | None = None) -> tuple[int, int]:
    """The two dimensions drawn: (0, 1) unless two different ones in range were picked; d_k >= 2."""
    if d_k < 2:
        raise PlaneError(f"the plane needs at least two dimensions; the queries and keys have {d_k}")
    if picked is not None and picked[0] != picked[1] and all(0 <= j < d_k for j in picked):
        return picked
    return (0, 1)


def axes_plane(d_k: int, dims: tuple[int, int], names: tuple[str, str]) -> Plane:
    """The plane of dimensions ``dims`` of a d_k-dimensional space (E's rows: those two unit axes)."""
    E = np.zeros((2, d_k))  # (2, d_k)
    E[[0, 1], list(dims)] = 1.0
    return Plane(E, names, dims)


def key_plane(K: np.ndarray, first: int, second: int, tokens: list[str]) -> Plane:
    """The plane spanned by keys ``first`` and ``second`` (rows of K (n_k, d_k)), by Gram-Schmidt:

    e1 = k_first / |k_first|,  e2 = (k_second - (k_second · e1) e1) / |...|.

    Raises PlaneError, naming the keys, when they are the same key, the first is zero, or they point the same way.
    """
    a, b = repr(tokens[first]), repr(tokens[second])
    if first == second:
        raise PlaneError(f"the plane needs two different keys; both picks are the key {a} (#{first}): pick another")
    k1, k2 = np.asarray(K[first], dtype=float), np.asarray(K[second], dtype=float)  # (d_k,) each
    n1 = float(np.linalg.norm(k1))
    if not n1 > 0:
        raise PlaneError(f"the key {a} (#{first}) is all zeros: it points nowhere, so it spans no plane; pick another")
    e1 = k1 / n1
    rest = k2 - (k2 @ e1) * e1  # the part of k_second at right angles to e1
    n2 = float(np.linalg.norm(rest))
    if not n2 > PARALLEL * float(np.linalg.norm(k2)):
        raise PlaneError(f"the keys {a} (#{first}) and {b} (#{second}) point the same way: they span no plane")
    names = (f"e1: {a}", f"e2: {b} ⟂ e1")
    return Plane(np.stack([e1, rest / n2]), names, keys=(first, second))


def coords(M: np.ndarray, p: Plane) -> np.ndarray:
    """Where the rows of M (n, d_k) end on the plane: (n, 2), M · E^T."""
    return M @ p.E.T  # (n, 2)


def in_plane(v: np.ndarray, p: Plane, xy: tuple[float, float]) -> np.ndarray:
    """v (d_k,) moved to ``xy`` on the plane: held + a e1 + b e2, held = v - (v · E^T) · E (its part off the plane).

    For a plane of two dimensions this sets those two entries to xy exactly and keeps the others exactly
    (the products are with 0 and 1)."""
    held = v - (v @ p.E.T) @ p.E  # (d_k,)
    return held + np.asarray(xy, dtype=float) @ p.E  # (d_k,)


def top_keys(weights: np.ndarray) -> tuple[int, int]:
    """The two keys a query's ``weights`` (n_k,) favour most, the first first (ties: the earlier key); n_k >= 2."""
    order = np.argsort(-np.asarray(weights, dtype=float), kind="stable")
    return int(order[0]), int(order[1])


def extent(Q: np.ndarray, K: np.ndarray, p: Plane) -> float:
    """How far the plane reaches from the origin along each axis: ROOM times the largest |coordinate|
    drawn, rounded up to a power of ten times one of STEPS (1 when every arrow is 0). Q (n_q, d_k), K (n_k, d_k)."""
    biggest = float(np.max(np.abs(np.concatenate([coords(Q, p), coords(K, p)]))))
    if not biggest > 0:
        return 1.0
    reach = biggest * ROOM
    power = 10.0 ** math.floor(math.log10(reach))
    return next(m * power for m in STEPS if m * power >= reach)


def resolution(reach: float) -> float:
    """The grid a dragged position is rounded to: a hundredth of the power of ten below the plane's reach."""
    return 10.0 ** math.floor(math.log10(reach)) / 100


def grid_index(value: float, grid: float) -> int:
    """Which multiple of ``grid`` ``value`` is nearest (a tie to the even one; plane.js rounds the same way)."""
    return round(value / grid)


def grid_point(k: int, grid: float) -> float:
    """``k`` times ``grid``, printed without float noise (3 * 0.1 -> 0.3, not 0.30000000000000004)."""
    decimals = max(0, -math.floor(math.log10(grid)))
    return round(k * grid, decimals) + 0.0


def snap(value: float, grid: float) -> float:
    """``value`` rounded to a multiple of ``grid``: the grid point of its :func:`grid_index`."""
    return grid_point(grid_index(value, grid), grid)


def parse_drag(state: object, tokens: dict[str, list[str]], dim_names: tuple[str, str], grid: float) -> Drag | None:
    """The component's reported drag as a :class:`Drag` (its position snapped to ``grid``), or None when nothing
    was dragged yet.

    ``tokens``: the row labels of each table the plane moves ("Q", and "K" when keys move). Raises PlaneError,
    naming the handle and the dimension, for a position that is not a number or is beyond ±HUGE, for a row or
    table the lab no longer has, or for a table this plane does not move.
    """
    if not isinstance(state, dict) or not state:
        return None
    kind, row = state.get("kind"), state.get("row")
    if kind in KINDS and kind not in tokens:
        raise PlaneError(f"on a plane spanned by two keys only the query moves; the {KINDS[kind]}s stay where they are")
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
    at = (snap(xy[0], grid), snap(xy[1], grid))
    return Drag(kind, row, at, str(state.get("id", "")), state.get("done") is True, parse_lead(state.get("lead"), grid))


def parse_lead(value: object, grid: float) -> tuple[float, float]:
    """A report's lead [dx, dy] (plane units): as reported when within LEAD_STEPS grid steps, else shortened to that
    length along its direction; (0, 0) when it is not two finite numbers. A lead only chooses which weights are sent
    ahead, never a weight or a position, so a bad one is ignored rather than refused."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return (0.0, 0.0)
    if any(isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in value):
        return (0.0, 0.0)
    dx, dy = float(value[0]), float(value[1])
    cap = LEAD_STEPS * grid
    if not math.hypot(dx, dy) > cap:
        return (dx, dy)
    m = max(abs(dx), abs(dy))  # > 0 here; divided by it first, hypot stays finite however long the lead
    n = math.hypot(dx / m, dy / m)
    return (cap * (dx / m) / n, cap * (dy / m) / n)


def moved(M: np.ndarray, row: int, p: Plane, xy: tuple[float, float]) -> np.ndarray:
    """A copy of ``M (n, d_k)`` with row ``row`` moved to ``xy`` on the plane (:func:`in_plane`), the others held."""
    out = np.array(M, dtype=float)
    out[row] = in_plane(out[row], p, xy)
    return out


def drag_result(result: ac.AttentionResult, drag: Drag | None, p: Plane) -> ac.AttentionResult:
    """The head's attention (``attention_core``) with the dragged vector moved; ``result`` when nothing moved."""
    if drag is None:
        return result
    Q = moved(result.Q, drag.row, p, drag.xy) if drag.kind == "Q" else result.Q
    K = moved(result.K, drag.row, p, drag.xy) if drag.kind == "K" else result.K
    return ac.scaled_dot_product_attention(
        Q, K, result.V, mask=result.mask, scale=result.scale, temperature=result.temperature
    )


def ahead_points(lead: tuple[float, float], budget: int) -> np.ndarray:
    """The grid steps (i, j) (m, 2) from the drag's point whose weights :func:`ahead` sends: the points of a band
    along the lead (grid steps), from the drag's point (covered) to twice the lead, so it is centred where the
    pointer is expected when the answer arrives and reaches on while the next answer is awaited; half as wide
    as the widest h (at most AHEAD_STEPS) that keeps the points within ``budget``. A point is in the band of
    half-width h when its distance across the lead is at most h + 1/2 and along it from -(h + 1/2) to 2|lead| + h
    + 1/2; with no lead the band is the square |i|, |j| <= h. When even h = 0 holds more than ``budget`` points,
    the ``budget`` nearest along the lead are kept. Order: i, then j."""
    length = math.hypot(*lead)
    u = np.array(lead) / length if length > 0 else np.array([1.0, 0.0])  # (2,) along the lead
    r = math.ceil(2 * length) + AHEAD_STEPS + 1
    side = np.arange(-r, r + 1)
    ij = np.stack(np.meshgrid(side, side, indexing="ij"), axis=-1).reshape(-1, 2)  # (points, 2), i then j
    along, across = ij @ u, np.abs(ij @ np.array([-u[1], u[0]]))  # (points,) each
    for h in range(AHEAD_STEPS, -1, -1):
        band = (across <= h + 0.5) & (along >= -(h + 0.5)) & (along <= 2 * length + h + 0.5)
        if band.sum() <= budget or h == 0:
            break
    if band.sum() > budget:
        nearest = np.flatnonzero(band)[np.argsort(along[band], kind="stable")[:budget]]
        band = np.isin(np.arange(len(ij)), nearest)
    return ij[band]


def ahead(result: ac.AttentionResult, drag: Drag | None, p: Plane, query: int, grid: float) -> dict | None:
    """The chosen query's weights, printed, for the dragged handle moved to each grid point near the drag's
    path, so that plane.js draws them as soon as the pointer reaches one (JSON), or None when no drag is
    running or the drag cannot change them (another query dragged).

    ``result``: the head's attention before the drag. The points (``points``: grid indices [x, y]) are the drag's
    point ``at`` = (grid_index(x), grid_index(y)) plus :func:`ahead_points` of the drag's lead, within
    AHEAD_WEIGHTS // n_k points; ``text`` holds, for each point, the query's weights (n_k,) as :func:`weight_text`
    prints them. One call of attention_core for all points: the moved table stacked, one (n, d_k) table per
    point, through the stages scaled_dot_product_attention runs (each point's table alone is what
    :func:`drag_result` computes).
    """
    if drag is None or drag.done or (drag.kind == "Q" and drag.row != query):
        return None
    at = np.array([grid_index(drag.xy[0], grid), grid_index(drag.xy[1], grid)])  # (2,)
    budget = max(1, AHEAD_WEIGHTS // result.K.shape[0])
    indices = at + ahead_points((drag.lead[0] / grid, drag.lead[1] / grid), budget)  # (points, 2)
    table = result.Q if drag.kind == "Q" else result.K
    stack = np.stack([moved(table, drag.row, p, (grid_point(i, grid), grid_point(j, grid))) for i, j in indices])
    Q, K = (stack, result.K) if drag.kind == "Q" else (result.Q, stack)  # stack: (points, n, d_k)
    r = attention_stages(Q, K, result.V, result.additive_mask, result.scale, result.temperature)
    w = r.weights[:, query]  # (points, n_k)
    return {
        "id": drag.id,
        "kind": drag.kind,
        "row": drag.row,
        "grid": grid,
        "at": at.tolist(),
        "points": indices.tolist(),
        "text": [[weight_text(x) for x in row] for row in w.tolist()],
    }


def write_drag(frame: pd.DataFrame, drag: Drag, p: Plane, vector: np.ndarray) -> pd.DataFrame:
    """A copy of the lab's table ``frame`` (Q or K) with the dragged row holding ``vector`` (d_k,), the moved vector
    (:func:`moved`): on a plane of two dimensions only their two cells are written (the others hold the table's
    own entries, even one being fixed), on a plane of two keys the whole row."""
    out = frame.copy()
    columns = value_columns(frame)
    for j in p.dims if p.dims is not None else range(len(columns)):
        out.iat[drag.row, out.columns.get_loc(columns[j])] = float(vector[j])
    return out


def weight_text(w: float) -> str:
    """A weight as the plane prints it (WEIGHT_DECIMALS decimals)."""
    return f"{w:.{WEIGHT_DECIMALS}f}"


def plane_data(
    result: ac.AttentionResult,
    query: int,
    p: Plane,
    tokens: dict[str, list[str]],
    reach: float,
    *,
    big: bool = False,
) -> dict:
    """What the component draws (JSON): every query and key's end point in the plane, the chosen query's
    weights for each key (numbers for the bars, printed text for the labels), the plane's reach, the grid of
    a keyboard step, whether keys move, and each handle's accessible name. Labels are user text: the component
    sets them as text. On a plane of two keys only the chosen query is drawn of the queries."""
    w = result.weights[query]  # (n_k,)
    grid = resolution(reach)
    return {
        "queries": [[float(a), float(b)] for a, b in coords(result.Q, p)],
        "keys": [[float(a), float(b)] for a, b in coords(result.K, p)],
        "keys_move": p.keys_move,
        "other_queries": p.dims is not None,
        "query_tokens": list(tokens["Q"]),
        "key_tokens": list(tokens["K"]),
        "query": query,
        "weights": [float(x) for x in w],
        "weight_text": [weight_text(x) for x in w],
        "masked": [not bool(m) for m in result.mask[query]],
        "dims": list(p.names),
        "reach": reach,
        "step": grid * 10,
        "big": big,
    }
