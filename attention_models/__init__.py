"""attention_models: real pretrained models run by attention_core's NumPy maths.

::

    import attention_models as am
    model = am.load("smollm2-135m")           # reads the file once per process
    run = model.run("When Mary and John went to the store, John gave a drink to")
    run.token_ids, run.tokens                 # list[int], list[str]
    run.attention                             # (n_layers, n_heads, T, T) softmax weights
    run.next_token_probs                      # (vocab,) probabilities of the next token
    model.run(run.token_ids, head_scale=S, reuse=run)   # S (n_layers, n_heads); 0 switches a head off
    model.run(ids, head_weights={(9, 6): W})  # W (T, T) used instead of head 6's softmax in layer 9

    mary, john = model.tokenize(" Mary")[0], model.tokenize(" John")[0]
    am.logit_diff(run, mary, john)                # logit[" Mary"] - logit[" John"] at the last position
    am.direct_logit_attribution(run, mary, john)  # {"embed": float, "heads": (L, h), "mlps": (L,)}, summing to it
    am.logit_lens(run)                            # (n_layers + 1, vocab) probabilities read from each residual
    am.patch_heads(model, am.IOI.clean, am.IOI.corrupt, mary, john)     # (L, h) share restored by each head
    am.patch_residual(model, am.IOI.clean, am.IOI.corrupt, mary, john)  # (L + 1, T) ... by each residual row
    am.patch_heads(model, run, model.run(am.IOI.corrupt), mary, john)  # the same from runs already made

This package reads model files (its own GGUF reader, gguf_file; tokenizers); the maths lives in attention_core.
"""

from attention_models.errors import AttentionModelError, ModelNotInstalledError, SequenceTooLongError
from attention_models.interp import (
    Patch,
    direct_logit_attribution,
    logit_diff,
    logit_lens,
    patch_heads,
    patch_residual,
)
from attention_models.model import MAX_TOKENS, MODELS, Model, ModelRun, load
from attention_models.presets import DEFAULT_SENTENCE, IOI, PatchingPreset, repeated_random_tokens

__all__ = [
    "DEFAULT_SENTENCE",
    "IOI",
    "MAX_TOKENS",
    "MODELS",
    "AttentionModelError",
    "Model",
    "ModelNotInstalledError",
    "ModelRun",
    "Patch",
    "PatchingPreset",
    "SequenceTooLongError",
    "direct_logit_attribution",
    "load",
    "logit_diff",
    "logit_lens",
    "patch_heads",
    "patch_residual",
    "repeated_random_tokens",
]
