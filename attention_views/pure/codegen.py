"""Reproduce in NumPy: the lab's current single head as a short, self-contained Python script.

:func:`numpy_script` writes the tables as literal arrays (every number as ``repr(float)``, so it
round-trips exactly), the tokens, the mask, the scale and the temperature, then calls
``attention_core`` as the playground does and prints the weights: a readable table first, then,
as the last line, a JSON object ``{"query_tokens", "key_tokens", "weights"}`` for a program to parse.
The script needs ``attention_core`` importable (run it from the app's repository root). W_O and
multi-head settings are not part of it; the playground's single head is.
"""

from __future__ import annotations

import numpy as np

from attention_views.pure.lab import MASK_PARAMS, Lab
from attention_views.pure.single_head import lab_mask, run_single_head
from attention_views.pure.tables import table_to_matrix

MASK_CALLS = {"padding": "padding_mask", "window": "sliding_window_mask", "prefix": "prefix_lm_mask"}
SCALE_NOTES = {"sqrt": "1/sqrt(d_k)", "none": "unscaled", "custom": "custom scale"}


def numpy_script(lab: Lab) -> str:
    """A Python script that rebuilds the lab's single head with attention_core and prints its weights.

    Raises the app's TableError or AttentionInputError while the lab's input is unusable, exactly
    as the playground would (it runs the head first, so every script it returns runs).
    """
    head = run_single_head(lab)  # validates every table the script uses
    r = head.result
    n_q, n_k = len(head.query_tokens), len(head.key_tokens)
    lines = [
        f'"""Attention Lab, scenario {lab.scenario!r}: one attention head, rebuilt with attention_core.',
        "",
        "Run it from the Attention Lab folder (where attention_core lives): python this_script.py",
        '"""',
        "import json",
        "",
        "import numpy as np",
        "",
        "import attention_core as ac",
        "",
        f"query_tokens = {list(head.query_tokens)!r}",
        f"key_tokens = {list(head.key_tokens)!r}",
    ]
    lines += _inputs(lab, head.X is None)
    lines += [
        _mask_line(lab, n_q, n_k),
        f"scale = {r.scale!r}  # {SCALE_NOTES.get(lab.scale_mode, lab.scale_mode)}, d_k = {r.Q.shape[1]}",
        f"temperature = {r.temperature!r}",
        "",
        "result = ac.scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)",
        "",
        "np.set_printoptions(precision=6, suppress=True)",
        'print("Attention weights (rows: queries, columns: keys):", key_tokens)',
        "for token, row in zip(query_tokens, result.weights):",
        '    print(f"{token:>12}", row)',
        'print(json.dumps({"query_tokens": query_tokens, "key_tokens": key_tokens,',
        '                  "weights": result.weights.tolist()}))',
    ]
    return "\n".join(lines) + "\n"


def _inputs(lab: Lab, direct: bool) -> list[str]:
    """Q, K, V as literals, or X and W_q, W_k, W_v as literals followed by the projections."""
    names = ("Q", "K", "V") if direct else ("X", "W_q", "W_k", "W_v")
    lines = [""]
    for name in names:
        lines += [array_literal(name, table_to_matrix(lab.tables[name], name)[1]), ""]
    if not direct:
        lines += ["Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, d_model) @ (d_model, d) -> (n, d)", ""]
    return lines


def array_literal(name: str, M: np.ndarray) -> str:
    """``name = np.array([...])`` with one row per line and every entry as repr(float) (exact)."""
    rows = ",\n".join("    [" + ", ".join(repr(float(v)) for v in row) + "]" for row in M)
    return f"{name} = np.array([  # {M.shape[0]} x {M.shape[1]}\n{rows},\n])"


def _mask_line(lab: Lab, n_q: int, n_k: int) -> str:
    """The mask as attention_core builds it: None, a mask function call, or a literal (painted mask)."""
    kind = lab.mask
    if kind == "none":
        return "mask = None  # every query may attend every key"
    if kind == "causal":
        return "mask = ac.causal_mask(len(query_tokens), len(key_tokens))  # True = may attend"
    if kind == "streaming":
        sink = min(lab.mask_sink, n_k)
        return (
            f"mask = ac.streaming_mask(len(query_tokens), len(key_tokens), {sink}, {lab.mask_window})"
            "  # sinks + window, True = may attend"
        )
    if kind in MASK_CALLS:
        param = getattr(lab, MASK_PARAMS[kind])
        param = min(param, n_k) if kind == "padding" else param  # as the lab does: at most every key is padding
        return f"mask = ac.{MASK_CALLS[kind]}(len(query_tokens), len(key_tokens), {int(param)})  # True = may attend"
    mask = lab_mask(lab, n_q, n_k)
    if mask is None:
        return "mask = None  # every query may attend every key"
    rows = ",\n".join("    [" + ", ".join(str(bool(v)) for v in row) + "]" for row in mask)
    return f"mask = np.array([  # {kind} mask, True = may attend\n{rows},\n])"


def script_file_name(lab: Lab) -> str:
    """A file name for the downloaded script."""
    return f"attention_lab_{lab.scenario.replace('-', '_')}.py"
