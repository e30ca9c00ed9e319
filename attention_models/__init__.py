"""attention_models: real pretrained models run by attention_core's NumPy maths.

::

    import attention_models as am
    model = am.load("smollm2-135m")           # reads the file once per process
    run = model.run("When Mary and John went to the store, John gave a drink to")
    run.token_ids, run.tokens                 # list[int], list[str]
    run.attention                             # (n_layers, n_heads, T, T) softmax weights
    run.next_token_probs                      # (vocab,) probabilities of the next token
    model.run(run.token_ids, head_scale=S, reuse=run)   # S (n_layers, n_heads); 0 switches a head off

This package reads model files (gguf, tokenizers); the maths lives in attention_core.
"""

from attention_models.errors import AttentionModelError, ModelNotInstalledError, SequenceTooLongError
from attention_models.model import MAX_TOKENS, MODELS, Model, ModelRun, load
from attention_models.presets import DEFAULT_SENTENCE, repeated_random_tokens

__all__ = [
    "DEFAULT_SENTENCE",
    "MAX_TOKENS",
    "MODELS",
    "AttentionModelError",
    "Model",
    "ModelNotInstalledError",
    "ModelRun",
    "SequenceTooLongError",
    "load",
    "repeated_random_tokens",
]
