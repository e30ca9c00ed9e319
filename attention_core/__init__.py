"""attention_core: scaled dot-product and multi-head attention in plain NumPy, for teaching.

Vocabulary used in every docstring and shape comment of this package:

- ``n_q``: number of query tokens; ``n_k``: number of key (and value) tokens.
- ``d_model``: width of a token embedding (columns of ``X``).
- ``d_k``: width of a query/key vector; ``d_v``: width of a value vector.
- ``d_head``: width of one head's projections when all heads share it; ``h``: number of heads.

Row-vector convention, as in the seed notebooks: one token per row, ``Q = X @ W_q + b_q``.
Masks: ``True`` means "this query may attend this key" (see :mod:`attention_core.masks`).

Reproduce a lecture in three lines::

    import attention_core as ac
    result = ac.run_scenario(ac.load_scenario("emma-friend"))
    print(result.heads[0].weights.round(2))
"""

from attention_core.attention import AttentionResult, scaled_dot_product_attention
from attention_core.backward import attention_backward, projection_backward
from attention_core.catalogue import list_scenarios, load_scenario
from attention_core.compare import WeightChanges, weight_changes
from attention_core.decoder import (
    DecoderConfig,
    DecoderLayerResult,
    DecoderLayerWeights,
    GroupedQueryResult,
    decoder_layer,
    grouped_query_attention,
    repeat_kv,
    rms_norm,
    swiglu,
)
from attention_core.errors import AttentionInputError
from attention_core.exercises import Exercise, Grade, exercise_weights, grade, list_exercises, load_exercise, score
from attention_core.explain import CellExplanation, explain_cell
from attention_core.head_scores import (
    first_token_score,
    induction_score,
    induction_targets,
    previous_token_score,
    self_score,
)
from attention_core.head_training import HeadTask, HeadTraining, TrainingSnapshot, train_head
from attention_core.kv_cache import DecodeResult, DecodeStep, kv_cache_bytes, kv_cache_decode
from attention_core.learning import (
    LearningRun,
    LearningState,
    learn_step,
    learn_until_solved,
    pattern_loss,
    random_start,
    start_learning,
)
from attention_core.masks import (
    additive_mask,
    blind_rows,
    causal_mask,
    padding_mask,
    prefix_lm_mask,
    sliding_window_mask,
    streaming_mask,
)
from attention_core.multihead import (
    Head,
    MultiHeadResult,
    identity_head,
    multi_head_attention,
    selection_head,
    split_heads,
)
from attention_core.online_softmax import OnlineSoftmaxResult, OnlineSoftmaxTile, online_softmax_attention
from attention_core.permutation import (
    PermutationCheck,
    as_permutation,
    permutation_check,
    permute_tokens,
    permute_weights,
    shuffled_order,
)
from attention_core.positions import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    rope,
    rope_angles,
    rope_tables,
    rotate_half,
    sinusoidal_encoding,
)
from attention_core.readouts import RowReadouts, head_similarity, row_readouts
from attention_core.scenarios import SCENARIO_DEFAULT, Scenario, run_scenario
from attention_core.similarity import (
    activation_norms,
    angle_degrees,
    cosine_similarity,
    pairwise_cosine,
    unit_rows,
)
from attention_core.sinks import softmax_plus_one
from attention_core.softmax import softmax
from attention_core.stats import (
    Saturation,
    ScoreRow,
    ScoreVariance,
    dot_product_variance,
    effective_tokens,
    entropy_bits,
    sample_score_row,
    score_variance,
    softmax_saturation,
)

__all__ = [
    "SCENARIO_DEFAULT",
    "AttentionInputError",
    "AttentionResult",
    "CellExplanation",
    "DecodeResult",
    "DecodeStep",
    "DecoderConfig",
    "DecoderLayerResult",
    "DecoderLayerWeights",
    "Exercise",
    "Grade",
    "GroupedQueryResult",
    "Head",
    "HeadTask",
    "HeadTraining",
    "LearningRun",
    "LearningState",
    "MultiHeadResult",
    "OnlineSoftmaxResult",
    "PermutationCheck",
    "RowReadouts",
    "Saturation",
    "Scenario",
    "ScoreRow",
    "ScoreVariance",
    "TrainingSnapshot",
    "OnlineSoftmaxTile",
    "WeightChanges",
    "activation_norms",
    "additive_mask",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "blind_rows",
    "angle_degrees",
    "attention_backward",
    "as_permutation",
    "causal_mask",
    "cosine_similarity",
    "decoder_layer",
    "dot_product_variance",
    "effective_tokens",
    "entropy_bits",
    "exercise_weights",
    "explain_cell",
    "first_token_score",
    "grade",
    "grouped_query_attention",
    "head_similarity",
    "identity_head",
    "kv_cache_bytes",
    "kv_cache_decode",
    "induction_score",
    "induction_targets",
    "learn_step",
    "learn_until_solved",
    "list_exercises",
    "list_scenarios",
    "load_exercise",
    "load_scenario",
    "multi_head_attention",
    "online_softmax_attention",
    "padding_mask",
    "pairwise_cosine",
    "pattern_loss",
    "permutation_check",
    "permute_tokens",
    "permute_weights",
    "prefix_lm_mask",
    "previous_token_score",
    "projection_backward",
    "random_start",
    "repeat_kv",
    "rms_norm",
    "rope",
    "rope_angles",
    "rope_tables",
    "rotate_half",
    "row_readouts",
    "run_scenario",
    "sample_score_row",
    "scaled_dot_product_attention",
    "score",
    "score_variance",
    "selection_head",
    "self_score",
    "shuffled_order",
    "sinusoidal_encoding",
    "sliding_window_mask",
    "softmax",
    "softmax_plus_one",
    "softmax_saturation",
    "split_heads",
    "start_learning",
    "streaming_mask",
    "swiglu",
    "train_head",
    "unit_rows",
    "weight_changes",
]
