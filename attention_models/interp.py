r"""Which parts of a run made its prediction: logit difference, direct logit attribution, logit lens, patching.

All of them read the **logit difference** between two tokens ``a`` and ``b`` at the last position,
through the final RMSNorm and the output head ``W_U (vocab, d_model)``:

.. math:: \mathrm{LD} = \frac{x_L}{\mathrm{rms}(x_L)} \odot g \cdot (W_U[a] - W_U[b])

The last residual is a sum, ``x_L = embed + sum_{l,i} head_{l,i} W_o^{(l,i)} + sum_l mlp_l``
(``W_o^{(l,i)}`` the 64 rows of ``W_o`` that head ``i`` feeds). With ``rms(x_L)`` frozen at the
run's value the formula is linear in ``x_L``, so each part gets its own term and the terms sum to LD
(**direct logit attribution**). The **logit lens** reads every residual ``x_0 .. x_L`` through the
final norm (each with its own rms) and the output head, as if the model stopped there.

**Activation patching** runs the corrupted prompt with one value taken from the clean run (a head's
output, or one row of the residual stream) and reports the share of the logit difference it
restores, ``(LD_patched - LD_corrupt) / (LD_clean - LD_corrupt)``: 1 = that value alone carries the
answer, 0 = it does not matter. The layers below the patched one are the corrupted run's (taken
over, not recomputed); the patched runs go through the layers above together as one batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attention_core.decoder import rms_norm, swiglu
from attention_models.errors import AttentionModelError
from attention_models.model import Model, ModelRun

Prompt = str | list[int]  # a text, or its token ids
Progress = Callable[[float], None] | None  # called with the fraction done as patching goes

BATCH_ROWS = 4096  # patched sequences x tokens run through a layer at once (memory ~ 40 MB at 128 tokens)


def _direction(model: Model, x: np.ndarray, a: int, b: int) -> np.ndarray:
    """Readout ``g / rms(x) * (W_U[a] - W_U[b])`` of final residual rows ``x (m, d_model)``, (m, d_model)."""
    a, b = model._check_ids([a, b])
    x = np.asarray(x, dtype=np.float64)
    inv_rms = 1.0 / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + model.config.eps)  # (m, 1)
    unembed = model.weights.output[a].astype(np.float64) - model.weights.output[b]  # (d_model,)
    return inv_rms * (model.weights.output_norm * unembed)  # (m, d_model)


def logit_diffs(model: Model, x: np.ndarray, a: int, b: int) -> np.ndarray:
    """``logit[a] - logit[b]`` read from final residual rows ``x (m, d_model)``, (m,) float64."""
    return np.einsum("md,md->m", np.asarray(x, dtype=np.float64), _direction(model, x, a, b))


def logit_diff(run: ModelRun, a: int, b: int) -> float:
    """``logit[a] - logit[b]`` at the run's last position."""
    return float(logit_diffs(run.model, run.residuals[-1][-1:], a, b)[0])


def direct_logit_attribution(run: ModelRun, a: int, b: int) -> dict[str, object]:
    """The last position's logit difference split into ``embed`` (float), ``heads (L, h)``, ``mlps (L,)``.

    Each head's part is its slice of the output projection, ``head_{l,i}[-1] @ W_o^{(l,i)}``; each
    MLP's is the MLP recomputed on the last row; all read through the final norm frozen at the run's
    rms, so ``embed + heads.sum() + mlps.sum() == run.logit_diff(a, b)`` up to float32 rounding.
    """
    model, last = run.model, run.residuals[:, -1]  # (L+1, d_model) the residual at the last position
    h, d_head = model.n_heads, model.d_head
    heads, mlps = [], []
    with model.threads():
        for layer, w in enumerate(model.weights.layers):
            per_head = np.einsum("hk,hkd->hd", run.head_outputs[layer, :, -1], w.W_o.reshape(h, d_head, -1))  # (h, d)
            mid = last[layer] + per_head.sum(axis=0)  # (d_model,) after the attention half
            mlp = swiglu(rms_norm(mid[None], w.ffn_norm, model.config.eps), w.W_gate, w.W_up, w.W_down)[0]
            heads.append(per_head)
            mlps.append(mlp)
    readout = _direction(model, last[-1:], a, b)[0]  # (d_model,) frozen at the final residual's rms
    heads_ld = np.stack(heads).astype(np.float64) @ readout  # (L, h, d) @ (d,) -> (L, h)
    mlps_ld = np.stack(mlps).astype(np.float64) @ readout  # (L,)
    return {"embed": float(last[0].astype(np.float64) @ readout), "heads": heads_ld, "mlps": mlps_ld}


def logit_lens(run: ModelRun, position: int = -1) -> np.ndarray:
    """Next-token probabilities ``(L+1, vocab)`` from each residual at ``position`` (embeddings, then each
    layer's output) through the final norm and the output head; the last row is the run's prediction."""
    T = len(run.token_ids)
    if not -T <= position < T:
        raise AttentionModelError(f"there is no position {position}: the run has {T} tokens (0..{T - 1}, or -1)")
    with run.model.threads():
        logits = run.model.logits(run.residuals[:, position])  # (L+1, vocab)
    z = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=-1, keepdims=True)  # (L+1, vocab) each row sums to 1


@dataclass(frozen=True)
class Patch:
    """One value of the target run replaced by the source run's: head ``head``'s output in ``layer``, or
    (``head`` None) the residual row ``position`` entering ``layer`` (``layer == L``: the last output)."""

    layer: int
    head: int | None = None
    position: int | None = None


def patched_logit_diffs(
    source: ModelRun, target: ModelRun, patches: list[Patch], a: int, b: int, progress: Progress = None
) -> np.ndarray:
    """For each patch, the logit difference of ``target`` rerun with that one value from ``source``, (n,).

    Both runs have the same number of tokens. Only what the patch can change is recomputed: the
    layers from the patched one up, the rows from the first one the patch changes (the rows before
    it stay the target's: attention is causal), in the last layer only the last row; a patch that
    changes nothing is not run at all.
    """
    model, T = target.model, len(target.token_ids)
    first_row = np.array([_first_changed_row(p, source, target) for p in patches], dtype=int)  # T: no change
    diffs = np.full(len(patches), logit_diff(target, a, b))
    todo = sorted(np.flatnonzero(first_row < T), key=lambda j: patches[j].layer)
    total, done = sum(model.n_layers - patches[j].layer for j in todo), 0
    per_batch = max(1, BATCH_ROWS // T)
    with model.threads():
        for first in range(0, len(todo), per_batch):
            chosen = todo[first : first + per_batch]
            batch = [patches[j] for j in chosen]
            x = np.stack([_patched_input(p, source, target) for p in batch])  # (B, T, d_model)
            starts = np.array([p.layer for p in batch])  # (B,) ascending
            kept = np.arange(T) < first_row[chosen][:, None]  # (B, T) rows the patch leaves as the target's
            for layer in range(int(starts[0]), model.n_layers):
                n = int(np.searchsorted(starts, layer, side="right"))  # the first n have started
                heads = _patched_heads(x[:n], layer, batch[:n], source, target)  # (n, h, T, d_head)
                rows = ~kept[:n] if layer < model.n_layers - 1 else np.broadcast_to(np.arange(T) == T - 1, (n, T))
                x[:n] = model.layer_output(x[:n], heads, layer, rows)
                x[:n][kept[:n]] = np.broadcast_to(target.residuals[layer + 1], x[:n].shape)[kept[:n]]
                done += n
                if progress is not None:
                    progress(done / total)
            diffs[chosen] = logit_diffs(model, x[:, -1], a, b)
    return diffs


def _patched_heads(x: np.ndarray, layer: int, batch: list[Patch], source: ModelRun, target: ModelRun) -> np.ndarray:
    """The heads of ``layer`` on ``x (n, T, d_model)``, each head patch starting here applied: (n, h, T, d_head).

    A head patch's own layer is not recomputed: its input is the target's, so are its heads but one.
    """
    fresh = [k for k, p in enumerate(batch) if p.layer < layer or p.head is None]
    heads = np.empty((len(batch), *target.head_outputs.shape[1:]), dtype=x.dtype)  # (n, h, T, d_head)
    if fresh:
        edited = {i: w for (at, i), w in target.head_weights.items() if at == layer}
        heads[fresh] = target.model.attention_heads(x[fresh], layer, target.head_scale[layer], edited)[0]
    for k, p in enumerate(batch):
        if p.layer == layer and p.head is not None:
            heads[k] = target.head_outputs[layer]
            heads[k, p.head] = source.head_outputs[layer, p.head]
    return heads


def _first_changed_row(p: Patch, source: ModelRun, target: ModelRun) -> int:
    """The first position whose value the patch changes (``T`` if it changes none)."""
    if p.head is not None:
        differs = (source.head_outputs[p.layer, p.head] != target.head_outputs[p.layer, p.head]).any(axis=-1)  # (T,)
    else:
        differs = np.zeros(len(target.token_ids), dtype=bool)
        differs[p.position] = (source.residuals[p.layer, p.position] != target.residuals[p.layer, p.position]).any()
    return int(np.argmax(differs)) if differs.any() else len(differs)


def _patched_input(p: Patch, source: ModelRun, target: ModelRun) -> np.ndarray:
    """The target's residual entering ``p.layer``, with the source's row ``p.position`` if it patches one."""
    x = target.residuals[p.layer].copy()  # (T, d_model)
    if p.head is None:
        x[p.position] = source.residuals[p.layer, p.position]
    return x


def patch_heads(
    model: Model, clean: Prompt | ModelRun, corrupt: Prompt | ModelRun, a: int, b: int, progress: Progress = None
) -> np.ndarray:
    """``(L, h)``: for each head, the corrupted run with that head's output from the clean run, as the share
    ``(LD_patched - LD_corrupt) / (LD_clean - LD_corrupt)`` of the logit difference it restores. ``clean`` and
    ``corrupt``: the prompts, or their unedited runs (then not run again)."""
    clean_run, corrupt_run = _pair(model, clean, corrupt)
    patches = [Patch(layer, head=i) for layer in range(model.n_layers) for i in range(model.n_heads)]
    diffs = patched_logit_diffs(clean_run, corrupt_run, patches, a, b, progress)
    return _shares(diffs, clean_run, corrupt_run, a, b).reshape(model.n_layers, model.n_heads)


def patch_residual(
    model: Model, clean: Prompt | ModelRun, corrupt: Prompt | ModelRun, a: int, b: int, progress: Progress = None
) -> np.ndarray:
    """``(L+1, T)``: for each layer's input (and the last output) and each position, the share restored by
    the corrupted run with that one residual row from the clean run. Row ``L`` is 1 at the last position.
    ``clean`` and ``corrupt`` as in :func:`patch_heads`."""
    clean_run, corrupt_run = _pair(model, clean, corrupt)
    T = len(clean_run.token_ids)
    patches = [Patch(layer, position=t) for layer in range(model.n_layers + 1) for t in range(T)]
    diffs = patched_logit_diffs(clean_run, corrupt_run, patches, a, b, progress)
    return _shares(diffs, clean_run, corrupt_run, a, b).reshape(model.n_layers + 1, T)


def _pair(model: Model, clean: Prompt | ModelRun, corrupt: Prompt | ModelRun) -> tuple[ModelRun, ModelRun]:
    """The runs of the two prompts (a run given is taken as it is); refused unless they have as many tokens."""
    clean_run, corrupt_run = (p if isinstance(p, ModelRun) else model.run(p) for p in (clean, corrupt))
    n, m = len(clean_run.token_ids), len(corrupt_run.token_ids)
    if n != m:
        raise AttentionModelError(
            f"the clean prompt has {n} tokens and the corrupted one {m}: patching swaps values position by "
            "position, so they need the same number of tokens (change words for words of as many tokens)"
        )
    return clean_run, corrupt_run


def _shares(diffs: np.ndarray, clean: ModelRun, corrupt: ModelRun, a: int, b: int) -> np.ndarray:
    ld_clean, ld_corrupt = logit_diff(clean, a, b), logit_diff(corrupt, a, b)
    if abs(ld_clean - ld_corrupt) < 1e-6:
        raise AttentionModelError(
            f"the clean and corrupted prompts give the same logit difference ({ld_clean:.4g}), so no patch can "
            "restore anything: choose a corrupted prompt the model answers differently"
        )
    return (diffs - ld_corrupt) / (ld_clean - ld_corrupt)
