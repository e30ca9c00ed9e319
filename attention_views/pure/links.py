"""Shareable state: the lab as a short, versioned, URL-safe token, and back.

A token is ``"1." + urlsafe_b64(zlib(json))`` of the scenario id plus only what differs from that
scenario's pristine state. Decoding never evaluates anything: it is JSON, bounded in size before
and after decompression, and checked field by field against the app's limits; anything unexpected
raises :class:`ShareError` with a message for the user.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Callable

import numpy as np
import pandas as pd

import attention_core as ac
import attention_models as am
from attention_core.head_training import JOBS
from attention_views.pure.lab import (
    HEAD_MODES,
    HEAD_SCORES,
    JOB_EVERY,
    JOB_STEPS,
    LEARNING_RATES,
    MASK_KINDS,
    MAX_ANSWER_CHARS,
    MAX_DIMS,
    MAX_HEADS,
    MAX_LEARN_STEPS,
    MAX_SEED,
    MAX_SPEED,
    MAX_TEXT_CHARS,
    MAX_TOKENS,
    MODEL_HEADS,
    MODEL_LAYERS,
    MODEL_PRESETS,
    MODEL_VOCAB,
    SCALE_MODES,
    STAGES,
    HeadOrigin,
    Lab,
    Learning,
    ModelView,
    Snapshot,
    TableMemo,
    Vectors,
    compact_json,
    new_lab,
    new_vectors,
)
from attention_views.pure.tables import (
    TOKEN,
    TableError,
    cell_text,
    finite_block,
    is_empty,
    is_real,
    is_whole,
    printable,
    table_to_matrix,
)

OpenHead = Callable[[int, int, tuple[int, ...], bool], Lab]  # (layer, head, token ids, put back) -> the lab
VERSION = "1"
MAX_TOKEN_CHARS = 16_000  # refuse longer links before decoding anything
MAX_JSON_BYTES = 200_000  # refuse larger payloads while decompressing a link (no zip bombs)
MAX_FILE_BYTES = 1_000_000  # a saved file holds every table in full and a snapshot: 64 x 64 each fits
LINK_LIMIT = 2_000  # a link longer than this is cut by proxies and chat apps: offer the JSON file instead
SMALL_JSON_BYTES = 16_000  # larger JSON is packed fast (zlib level 1), unless that lands near LINK_LIMIT
MAX_LABEL_CHARS = 100
SNAPSHOT_DECIMALS = 6
MAX_DEPTH = 6  # the schema nests 5 deep (payload > "t" > table > "data" > row); json.loads recurses per level
TOKEN_TABLES = frozenset({"Q", "K", "V", "X"})  # tables whose rows are tokens (a "token" column); W_* are not
SCALARS = {  # Lab field -> short payload key
    "mask": "m",
    "mask_pad": "mp",
    "mask_window": "mw",
    "mask_prefix": "mx",
    "mask_sink": "mk",
    "scale_mode": "sm",
    "scale_custom": "sc",
    "temperature": "T",
    "stage": "st",
    "heads_mode": "hm",
    "n_heads": "n",
    "use_W_o": "o",
    "own_ranges": "or",
    "selected": "c",
    "projector": "pm",
}
LEARNING = {  # Learning field -> short key in the payload's "ln"
    "lr": "lr",
    "speed": "sp",
    "seed": "sd",
    "exercise": "x",
    "step": "k",
    "job": "j",
    "job_seed": "js",
    "job_step": "jk",
}


class ShareError(ValueError):
    """A link or file that cannot be opened; the message says why."""


def clean_text(text: str) -> str:
    """``text`` cut to MAX_LABEL_CHARS, any lone surrogate (a JSON ``\\ud800``) replaced: see tables.printable."""
    return printable(text[:MAX_LABEL_CHARS])


def table_payload(frame: pd.DataFrame) -> dict:
    """A table as plain JSON: row labels, column labels, raw cells."""
    tokens = TOKEN in frame.columns
    cols = [c for c in frame.columns if c != TOKEN]
    rows = frame[TOKEN].tolist() if tokens else list(frame.index)
    block = finite_block(frame)  # a clean table at once; else cell by cell, keeping bad cells as typed
    if block is not None:
        data = block.tolist()
    else:
        data = [[_cell(v) for v in row] for row in frame[cols].itertuples(index=False)]
    return {"tok": tokens, "rows": [str(r) for r in rows], "cols": [str(c) for c in cols], "data": data}


def _cell(value: object) -> object:
    """A raw editor cell as JSON: a finite number stays a number, anything else travels as text or null."""
    if is_real(value):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the float range: keep it as typed (it is reported as bad)
            return clean_text(str(value))
        return number if number == number and abs(number) != float("inf") else str(number)
    return None if is_empty(value) else clean_text(str(value))


def lab_payload(
    lab: Lab,
    page: str = "",
    *,
    full: bool = False,
    pristine: Lab | None = None,
    memo: dict | None = None,
    open_head: OpenHead | None = None,
) -> dict:
    """The lab as JSON-ready data: scenario id and what differs from its pristine state (or all).

    The schema: ``v`` version, ``s`` scenario, ``p`` page, the SCALARS by their short keys, ``t`` tables
    (name -> :func:`table_payload`; a model head's table may be :func:`cells_payload`), ``mc`` the painted mask
    (rows of 0/1), ``h`` the heads table (rows of [name, dims]), ``ss`` the snapshot (weights to 6 decimals in a
    link, in full in a file), ``sv`` the similarity page's vectors (a table), ``rm`` the real-model view, ``ln`` the
    learning settings (LEARNING),
    ``og`` the real model's head the tables came from (:func:`origin_payload`). ``pristine``:
    :func:`pristine_of` the lab when the caller already has one (it is only read). ``memo``: the session's
    ``link_tables``, which keeps each table's part from the last call while the table and its pristine one are the
    same objects (the same payload, the same lists: comparing it with the last one is then immediate).
    ``open_head``: as for :func:`pristine_of`.
    """
    pristine = pristine_of(lab, pristine, open_head)
    out = {"v": VERSION, "s": lab.scenario}
    if page:
        out["p"] = page
    for name, short in SCALARS.items():
        value = getattr(lab, name)
        if full or value != getattr(pristine, name):
            out[short] = list(value) if name == "selected" else value
    cells = lab.origin is not None and pristine.origin is not None  # a model's head: its edits, cell by cell
    parts = {name: _table_part(name, f, pristine.tables.get(name), full, memo, cells) for name, f in lab.tables.items()}
    tables = {name: part for name, part in parts.items() if part is not None}
    if tables:
        out["t"] = tables
    if lab.mask_custom is not None:
        out["mc"] = lab.mask_custom.astype(int).tolist()
    if full or lab.model != ModelView():
        out["rm"] = model_payload(lab.model)
    if lab.origin is not None:
        out["og"] = origin_payload(lab.origin)
    if full or not lab.vectors.tables["vectors"].equals(pristine.vectors.tables["vectors"]):
        out["sv"] = table_payload(lab.vectors.tables["vectors"])
    learned = {short: getattr(lab.learning, name) for name, short in LEARNING.items()}
    if full or lab.learning != Learning():
        out["ln"] = learned
    if full or not lab.heads.equals(pristine.heads):
        out["h"] = [[_text(v) for v in row] for row in lab.heads.itertuples(index=False)]
    if lab.snapshot is not None:  # a link rounds the weights: 6 decimals are far below the 2 a delta shows
        snap = lab.snapshot
        weights = snap.weights if full else np.round(snap.weights, SNAPSHOT_DECIMALS)
        out["ss"] = {"w": weights.tolist(), "q": snap.query_tokens, "k": snap.key_tokens}
    return out


def _table_part(
    name: str, frame: pd.DataFrame, pristine: pd.DataFrame | None, full: bool, memo: dict | None, cells: bool = False
):
    """A lab table's payload, or None when it equals its pristine table (``full``: always the payload). ``cells``:
    a table of the pristine one's shape and labels travels as its changed cells (:func:`cells_payload`)."""
    kept = memo.get(name) if memo is not None and not full else None
    if kept is not None and kept.frame is frame and kept.pristine is pristine:
        return kept.payload
    part = table_payload(frame) if full or pristine is None or not frame.equals(pristine) else None
    if part is not None and cells and not full and pristine is not None:
        part = cells_payload(frame, pristine) or part
    if memo is not None and not full:
        memo[name] = TableMemo(frame, pristine, part)
    return part


def cells_payload(frame: pd.DataFrame, pristine: pd.DataFrame) -> dict | None:
    """``{"cells": [[row, column, cell], ...]}``: the cells of ``frame`` that differ from ``pristine`` (columns counted
    without the token column, cells as :func:`table_payload` writes them); None when the shape or a label differs, or
    when most cells do (the whole table is then shorter)."""
    same_rows = (
        frame[TOKEN].tolist() == pristine[TOKEN].tolist() if TOKEN in frame else frame.index.equals(pristine.index)
    )
    if frame.shape != pristine.shape or list(frame.columns) != list(pristine.columns) or not same_rows:
        return None
    cols = [c for c in frame.columns if c != TOKEN]
    new, old = frame[cols].to_numpy(), pristine[cols].to_numpy()  # (rows, cols) raw cells each
    block, before = finite_block(frame), finite_block(pristine)
    if block is not None and before is not None:
        changed = np.argwhere(block != before)  # (k, 2) row, column
    else:
        changed = [
            (r, c) for r in range(new.shape[0]) for c in range(new.shape[1]) if _cell(new[r, c]) != _cell(old[r, c])
        ]
    if 2 * len(changed) > new.size:
        return None
    return {"cells": [[int(r), int(c), _cell(new[r, c])] for r, c in changed]}


def _cells(name: str, cells: object, pristine: pd.DataFrame) -> pd.DataFrame:
    """Table ``name``: its pristine table with the link's changed cells (:func:`cells_payload`), each checked."""
    cols = [c for c in pristine.columns if c != TOKEN]
    rows = len(pristine)
    if not (
        isinstance(cells, list)
        and len(cells) <= rows * len(cols)
        and all(
            isinstance(c, list)
            and len(c) == 3
            and is_whole(c[0], 0, rows - 1)
            and is_whole(c[1], 0, len(cols) - 1)
            and (c[2] is None or isinstance(c[2], str) or (is_real(c[2]) and abs(c[2]) < float("inf")))
            for c in cells
        )
    ):
        raise ShareError(
            f"table {name}'s changed cells in the state are malformed (rows of [row, column, cell] inside its "
            f"{rows} x {len(cols)} cells)"
        )
    frame = pristine.copy()
    for r, c, value in cells:
        frame.iat[r, frame.columns.get_loc(cols[c])] = clean_text(value) if isinstance(value, str) else value
    return frame


def _text(value: object) -> str:
    """A heads-table cell as text; an empty cell (None or NaN) is ""."""
    return clean_text(cell_text(value))


def pristine_of(lab: Lab, kept: Lab | None = None, open_head: OpenHead | None = None) -> Lab:
    """What ``lab`` is compared with: a real model's head as ``open_head`` opens it (the model's own numbers), else a
    fresh copy of its scenario. ``kept``: the last one, returned when it still fits (only ever read)."""
    origin = lab.origin
    if kept is not None and kept.scenario == lab.scenario:
        if origin is None and kept.origin is None or origin is not None and origin.same_head(kept.origin):
            return kept
    if origin is None:
        return new_lab(lab.scenario)
    try:
        return model_head(open_head, origin.layer, origin.head, origin.token_ids)
    except ShareError:  # the model cannot rebuild it: compared with the scenario, every table travels whole
        return new_lab(lab.scenario)


def model_head(
    open_head: OpenHead | None, layer: int, head: int, token_ids: tuple[int, ...], put_back: bool = False
) -> Lab:
    """The lab of the real model's head ``(layer, head)`` on ``token_ids``, as ``open_head`` opens it; ShareError
    naming the field when the model has no such head or tokens, or is not installed (or no ``open_head`` given)."""
    if open_head is None:
        raise ShareError("the state holds a real model's head, and the real model is not loaded here")
    try:
        return open_head(layer, head, token_ids, put_back)
    except am.AttentionModelError as err:
        raise ShareError(f"the state's model head cannot be opened: {err}") from None


def encode(lab: Lab, page: str = "", open_head: OpenHead | None = None) -> str:
    """The lab as a compact link token (``open_head``: as for :func:`pristine_of`)."""
    return encode_payload(lab_payload(lab, page, open_head=open_head))


def encode_payload(payload: dict, memo: dict | None = None, most: int | None = None) -> str | None:
    """A payload from :func:`lab_payload` as a compact link token. ``memo``: the one given to lab_payload, whose
    tables' parts are written as JSON once (the same bytes as writing the whole payload at once).

    ``most``: the longest token wanted, in characters. A longer one is given up as soon as its packed part
    outgrows it, and None comes back, without packing the rest."""
    raw = _compact_json(payload, memo).encode()
    small = len(raw) <= SMALL_JSON_BYTES
    # level 9 only for small JSON (slow on large); "1." and base64 of n bytes, unpadded, is 2 + ceil(4n / 3) long,
    # so at most (most - 2) * 3 // 4 packed bytes make a token of at most ``most`` characters
    packed = _pack(raw, 9 if small else 1, None if most is None else (most - len(VERSION) - 1) * 3 // 4)
    if packed is None:
        return None
    if not small and len(packed) < LINK_LIMIT:  # it may still fit in a link: pack it as small as it gets
        packed = zlib.compress(raw, 9)
    return VERSION + "." + base64.urlsafe_b64encode(packed).decode().rstrip("=")


PACK_CHUNK = 16_384  # bytes of JSON packed at a time while the packed part may still outgrow its limit


def _pack(raw: bytes, level: int, most: int | None) -> bytes | None:
    """``zlib.compress(raw, level)``, or None once the packed bytes pass ``most`` (None: no limit)."""
    if most is None:
        return zlib.compress(raw, level)
    packer, packed = zlib.compressobj(level), bytearray()
    for start in range(0, len(raw), PACK_CHUNK):
        packed += packer.compress(raw[start : start + PACK_CHUNK])
        if len(packed) > most:
            return None
    packed += packer.flush()
    return None if len(packed) > most else bytes(packed)


def _compact_json(payload: dict, memo: dict | None) -> str:
    """``compact_json(payload)``, each table part that is ``memo``'s own taken from its text."""
    if not memo or "t" not in payload:
        return compact_json(payload)
    tables = ",".join(f"{compact_json(name)}:{_part_json(part, memo.get(name))}" for name, part in payload["t"].items())
    items = (f"{compact_json(k)}:{'{' + tables + '}' if k == 't' else compact_json(v)}" for k, v in payload.items())
    return "{" + ",".join(items) + "}"


def _part_json(part: dict, kept: TableMemo | None) -> str:
    return kept.text if kept is not None and kept.payload is part else compact_json(part)


def decode(token: str, open_head: OpenHead | None = None) -> tuple[Lab, str]:
    """(lab, page) from a link token; ShareError if it is damaged, tampered with or too large. ``open_head`` opens
    a real model's head the token names (without it, such a token is refused)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        raise ShareError(f"the link's state is longer than {MAX_TOKEN_CHARS} characters, the app's limit")
    version, _, body = token.partition(".")
    if version != VERSION:
        raise ShareError(f"the link was made by another version of the app (state version {version[:10]!r})")
    try:
        packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_JSON_BYTES)
        if inflater.unconsumed_tail:
            raise ShareError(f"the link's state unpacks to more than {MAX_JSON_BYTES} bytes, the app's limit")
        payload = _parse(raw, "the link's state")
    except (binascii.Error, zlib.error, ValueError, UnicodeDecodeError) as err:
        if isinstance(err, ShareError):
            raise
        raise ShareError("the link's state is damaged or cut off; check that the whole link was copied") from None
    return payload_to_lab(payload, open_head), _page(payload)


def _page(payload: dict) -> str:
    page = payload.get("p", "")
    return page if isinstance(page, str) and page.isidentifier() else ""


def payload_to_lab(payload: object, open_head: OpenHead | None = None) -> Lab:
    """Rebuild a lab from payload data (from a link or a JSON file), validating every field; ``open_head`` opens
    a real model's head the payload names."""
    if not isinstance(payload, dict) or payload.get("v") != VERSION:
        raise ShareError("this is not an Attention Lab state (version 1)")
    scenario = payload.get("s")
    if not isinstance(scenario, str) or scenario not in ac.list_scenarios():
        raise ShareError(f"unknown scenario {clean_text(str(scenario))[:40]!r}")
    for short, kind, what in (("t", dict, "an object of tables"), ("h", list, "a list of rows")):
        if short in payload and not isinstance(payload[short], kind):
            raise ShareError(f"the state's field {short!r} must be {what}")
    lab = (
        model_head(open_head, *_origin(payload["og"])) if "og" in payload else new_lab(scenario)
    )  # what the edits apply to
    for name, short in SCALARS.items():
        if short in payload:
            setattr(lab, name, check_field(name, payload[short]))
    for name, table in payload.get("t", {}).items():
        if name not in lab.tables and name != "W_o":
            raise ShareError(f"the state has a table {clean_text(name)[:20]!r} that scenario {scenario!r} does not use")
        if isinstance(table, dict) and set(table) == {"cells"} and name in lab.tables:
            lab.tables[name] = _cells(name, table["cells"], lab.tables[name])
        else:
            lab.tables[name] = _table(name, table)
    for short, name, read in PARTS:
        if short in payload:
            setattr(lab, name, read(payload[short]))
    return lab


def _learning(value: object) -> Learning:
    """The learning settings from the payload, each field through check_field; a step needs its exercise."""
    if not isinstance(value, dict):
        raise ShareError("the state's learning settings (ln) must be an object")
    learning = Learning()
    for name, short in LEARNING.items():
        if short in value:
            setattr(learning, name, check_field(name, value[short]))
    if learning.step and not learning.exercise:
        raise ShareError("the state's learning step has no exercise to replay it on")
    return learning


def _vectors(table: object) -> Vectors:
    """The similarity page's two vectors from the payload: a table of two rows (its last valid pair: the seed's
    until the table parses)."""
    frame = _table("vectors", table)
    if len(frame) != 2:
        raise ShareError(f"the state's similarity vectors have {len(frame)} rows; there must be 2 (X and Y)")
    vectors = new_vectors()
    vectors.tables["vectors"] = frame
    try:
        vectors.last = table_to_matrix(frame, "vectors")[1]  # (2, d)
    except TableError:
        pass  # the page names the bad cell and shows the seed's pair meanwhile
    return vectors


def check_field(name: str, value: object) -> object:
    """A scalar field of the lab from a link or file, checked against its type and the app's limits.

    Returns the value as the Lab holds it; raises ShareError naming the field otherwise.
    """
    number = is_real(value) and abs(value) < 1e6
    checks = {
        "mask": value in MASK_KINDS,
        "mask_pad": is_whole(value, 0, MAX_TOKENS),
        "mask_window": is_whole(value, 1, MAX_TOKENS),
        "mask_prefix": is_whole(value, 0, MAX_TOKENS),
        "mask_sink": is_whole(value, 0, MAX_TOKENS),
        "scale_mode": value in SCALE_MODES,
        "scale_custom": number,
        "temperature": number and 0.1 <= value <= 5.0,
        "stage": value in STAGES,
        "heads_mode": value in HEAD_MODES,
        "n_heads": is_whole(value, 1, MAX_HEADS),
        "use_W_o": isinstance(value, bool),
        "own_ranges": isinstance(value, bool),
        "projector": isinstance(value, bool),
        "selected": isinstance(value, list) and len(value) == 2 and all(is_whole(v, 0, MAX_TOKENS - 1) for v in value),
        "lr": value in LEARNING_RATES and not isinstance(value, bool),
        "speed": is_whole(value, 1, MAX_SPEED),
        "seed": is_whole(value, 0, MAX_SEED),
        "exercise": value == "" or value in ac.list_exercises(),
        "step": is_whole(value, 0, MAX_LEARN_STEPS),
        "job": value in JOBS,
        "job_seed": is_whole(value, 0, MAX_SEED),
        "job_step": is_whole(value, 0, JOB_STEPS) and value % JOB_EVERY == 0,
    }
    if not checks[name]:
        raise ShareError(f"the state's {name} ({str(value)[:40]}) is not allowed")
    if name == "lr":
        return float(value)  # 1 in JSON is the rate 1.0 of the slider
    return tuple(value) if name == "selected" else value


MAX_MODEL_INDEX = 10**9  # a model-head field's type check; the model itself says which layers, heads and ids exist


def model_payload(view: ModelView) -> dict:
    """The real-model page's view as JSON: preset, text, generated ids, head, score, every edited scale, the two
    answers and the patching prompts (the patching result is recomputed, never sent)."""
    edited = np.argwhere(view.scales != 1.0)  # (k, 2) layer, head
    return {
        "p": view.preset,
        "t": view.text,
        "g": list(view.generated),
        "l": view.layer,
        "h": view.head,
        "sc": view.score,
        "e": [[int(layer), int(head), float(view.scales[layer, head])] for layer, head in edited],
        "a": view.answer,
        "b": view.other,
        "pc": view.clean,
        "pk": view.corrupt,
    }


def _model_view(value: object) -> ModelView:
    """The real-model view from a payload, every field checked; ShareError naming the first bad one."""
    if not isinstance(value, dict):
        raise ShareError("the state's real-model view (rm) must be an object")
    view = ModelView()
    checks = {
        "p": lambda v: v in MODEL_PRESETS,
        "t": lambda v: isinstance(v, str) and len(v) <= MAX_TEXT_CHARS,
        "g": lambda v: (
            isinstance(v, list) and len(v) <= am.MAX_TOKENS and all(is_whole(i, 0, MODEL_VOCAB - 1) for i in v)
        ),
        "l": lambda v: is_whole(v, 0, MODEL_LAYERS - 1),
        "h": lambda v: is_whole(v, 0, MODEL_HEADS - 1),
        "sc": lambda v: v in HEAD_SCORES,
        "e": lambda v: (
            isinstance(v, list)
            and len(v) <= MODEL_LAYERS * MODEL_HEADS
            and all(
                isinstance(r, list)
                and len(r) == 3
                and is_whole(r[0], 0, MODEL_LAYERS - 1)
                and is_whole(r[1], 0, MODEL_HEADS - 1)
                and is_real(r[2])
                and abs(r[2]) <= 10
                for r in v
            )
        ),
        "a": _answer_text,
        "b": _answer_text,
        "pc": _prompt_text,
        "pk": _prompt_text,
    }
    for key, ok in checks.items():
        if key in value and not ok(value[key]):
            raise ShareError(
                f"the state's real-model field {key!r} ({clean_text(str(value[key]))[:40]}) is not allowed"
            )
    scales = np.ones((MODEL_LAYERS, MODEL_HEADS))
    for layer, head, scale in value.get("e", []):
        scales[layer, head] = float(scale)
    return ModelView(
        preset=value.get("p", view.preset),
        text=printable(value.get("t", view.text)),
        generated=tuple(value.get("g", [])),
        layer=value.get("l", view.layer),
        head=value.get("h", view.head),
        score=value.get("sc", view.score),
        scales=scales,
        answer=printable(value.get("a", view.answer)),
        other=printable(value.get("b", view.other)),
        clean=printable(value.get("pc", view.clean)),
        corrupt=printable(value.get("pk", view.corrupt)),
    )


def _answer_text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_ANSWER_CHARS


def _prompt_text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT_CHARS


def origin_payload(origin: HeadOrigin) -> dict:
    """The head a playground lab came from: layer ``l``, head ``h``, token ids ``i``, put back ``pb`` (the label and
    the tables are the model's, made again when the view is opened)."""
    return {"l": origin.layer, "h": origin.head, "i": list(origin.token_ids), "pb": origin.put_back}


def _origin(value: object) -> tuple[int, int, tuple[int, ...], bool]:
    """(layer, head, token ids, put back) from a payload, each field's type checked (:func:`model_head` checks them
    against the model); a label ``x`` of an older link is read past."""
    checks = {
        "l": lambda v: is_whole(v, 0, MAX_MODEL_INDEX),
        "h": lambda v: is_whole(v, 0, MAX_MODEL_INDEX),
        "i": lambda v: (
            isinstance(v, list) and 0 < len(v) <= MAX_TOKENS and all(is_whole(i, 0, MAX_MODEL_INDEX) for i in v)
        ),
        "pb": lambda v: isinstance(v, bool),
    }
    if not isinstance(value, dict) or not set(checks) <= set(value) <= {*checks, "x"}:
        raise ShareError(f"the state's model head (og) must be an object with the fields {', '.join(checks)}")
    for key, ok in checks.items():
        if not ok(value[key]):
            raise ShareError(
                f"the state's model-head field {key!r} ({clean_text(str(value[key]))[:40]}) is not allowed"
            )
    return value["l"], value["h"], tuple(value["i"]), value["pb"]


def _painted(value: object) -> np.ndarray:
    """A painted mask from the payload: a list of rows of 0/1, at most MAX_TOKENS square."""
    if not (
        isinstance(value, list)
        and 0 < len(value) <= MAX_TOKENS
        and all(
            isinstance(r, list) and len(r) == len(value[0]) <= MAX_TOKENS and all(c in (0, 1) for c in r) for r in value
        )
    ):
        raise ShareError(f"the state's painted mask is malformed (rows of 0/1, at most {MAX_TOKENS} x {MAX_TOKENS})")
    return np.array(value, dtype=bool)


def _snapshot(value: object) -> Snapshot:
    """A compare snapshot from the payload: weights in [0, 1], n_q x n_k <= MAX_TOKENS square, one label each."""
    try:
        weights, queries, keys = value["w"], value["q"], value["k"]
    except (TypeError, KeyError):
        raise ShareError("the state's snapshot is missing its weights (w) or tokens (q, k)") from None
    labels_ok = all(
        isinstance(t, list) and 0 < len(t) <= MAX_TOKENS and all(isinstance(x, str) for x in t) for t in (queries, keys)
    )
    if not (
        labels_ok
        and isinstance(weights, list)
        and len(weights) == len(queries)
        and all(isinstance(r, list) and len(r) == len(keys) and all(_weight(c) for c in r) for r in weights)
    ):
        raise ShareError(
            f"the state's snapshot is malformed (at most {MAX_TOKENS} x {MAX_TOKENS} weights from 0 to "
            "1, one token label per row and column)"
        )
    return Snapshot(np.array(weights, dtype=float), [clean_text(q) for q in queries], [clean_text(k) for k in keys])


def _weight(cell: object) -> bool:
    return isinstance(cell, (int, float)) and is_real(cell) and 0.0 <= cell <= 1.0


def _table(name: str, table: object) -> pd.DataFrame:
    try:
        rows, cols, data, tokens = table["rows"], table["cols"], table["data"], table["tok"]
    except (TypeError, KeyError):
        raise ShareError(f"table {name} in the state is missing rows, cols, data or tok") from None
    if not (isinstance(rows, list) and isinstance(cols, list) and isinstance(data, list)):
        raise ShareError(f"table {name} in the state is malformed")
    if tokens is not (name in TOKEN_TABLES):  # the flag decides where the labels go: it must match the table
        raise ShareError(f"table {name} in the state has a wrong token flag (tok must be {name in TOKEN_TABLES})")
    if len(rows) > MAX_TOKENS or len(cols) > MAX_DIMS:
        raise ShareError(f"table {name} is {len(rows)} x {len(cols)}; the app allows at most {MAX_TOKENS} x {MAX_DIMS}")
    if len(data) != len(rows) or any(not isinstance(r, list) or len(r) != len(cols) for r in data):
        raise ShareError(f"table {name} in the state has rows of the wrong length")
    for cell in (c for row in data for c in row):
        if not (cell is None or isinstance(cell, (int, float, str))) or isinstance(cell, bool):
            raise ShareError(f"table {name} in the state holds a cell that is not a number or text")
    data = [[clean_text(c) if isinstance(c, str) else c for c in row] for row in data]
    labels = [clean_text(str(r)) for r in rows]
    col_labels = [clean_text(str(c)) for c in cols]
    if len(set(col_labels)) != len(col_labels) or TOKEN in col_labels:
        raise ShareError(f"table {name} in the state has repeated column names")
    frame = pd.DataFrame(data, columns=col_labels, dtype=object)
    if tokens:
        frame.insert(0, TOKEN, labels)
    else:
        frame.index = labels
    return frame


def _heads(rows: object) -> pd.DataFrame:
    if (
        not isinstance(rows, list)
        or len(rows) > MAX_HEADS
        or any(not isinstance(r, list) or len(r) != 2 or not all(isinstance(c, str) for c in r) for r in rows)
    ):
        raise ShareError(f"the state's heads table is malformed (at most {MAX_HEADS} rows of name and dims)")
    return pd.DataFrame([[clean_text(c) for c in r] for r in rows], columns=["head", "dims"], dtype=object)


PARTS = (  # payload key, Lab field, the reader that checks it
    ("h", "heads", _heads),
    ("mc", "mask_custom", _painted),
    ("ss", "snapshot", _snapshot),
    ("rm", "model", _model_view),
    ("sv", "vectors", _vectors),
    ("ln", "learning", _learning),
)


def to_json(lab: Lab, page: str = "", open_head: OpenHead | None = None) -> str:
    """Everything needed to reopen the lab, as a JSON document (for download)."""
    return json.dumps(lab_payload(lab, page, full=True, open_head=open_head), indent=1, allow_nan=False)


def from_json(text: str | bytes, open_head: OpenHead | None = None) -> tuple[Lab, str]:
    """(lab, page) from a JSON document made by :func:`to_json`; ShareError on anything else (``open_head``: as
    for :func:`decode`)."""
    if len(text) > MAX_FILE_BYTES:
        raise ShareError(f"the file is larger than {MAX_FILE_BYTES // 1000} kB, the app's limit")
    try:
        payload = _parse(text, "the file")
    except (ValueError, UnicodeDecodeError) as err:
        if isinstance(err, ShareError):
            raise
        raise ShareError("the file is not valid JSON; download a state from the app and upload that") from None
    return payload_to_lab(payload, open_head), _page(payload)


_SPECIAL = re.compile(rb'[\[\]{}"\\]')  # brackets, quotes and backslashes: all the depth count needs to see


def _parse(raw: str | bytes, what: str) -> object:
    """JSON from a link or a file, refused before parsing when it nests deeper than the schema ever does.

    ``json.loads`` recurses once per level, so ``[[[[...]]]]`` 3,000 deep would end in RecursionError;
    the brackets outside strings are counted first, in one linear pass over the special characters.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth, in_string, escaped_at = 0, False, -1
    for match in _SPECIAL.finditer(data):
        char, at = match.group(), match.start()
        if at == escaped_at:  # the character after a backslash inside a string
            continue
        if in_string:
            if char == b"\\":
                escaped_at = at + 1
            elif char == b'"':
                in_string = False
        elif char == b'"':
            in_string = True
        elif char in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                raise ShareError(f"{what} nests more than {MAX_DEPTH} levels deep; no state of the app does")
        elif char in (b"]", b"}"):
            depth -= 1
    return json.loads(raw)
