"""The five seed notebooks as scenarios: the data of each lecture, ready to run.

Each scenario reproduces the printed numbers of its notebook in ``../shared/seeds/`` (the test
suite checks every one). Ids are stable: links to the app use them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import scaled_dot_product_attention
from attention_core.errors import AttentionInputError
from attention_core.masks import causal_mask
from attention_core.multihead import Head, MultiHeadResult, identity_head, multi_head_attention, selection_head

MASK_KINDS = ("none", "causal")


class _ScenarioDefault:
    def __repr__(self) -> str:
        return "SCENARIO_DEFAULT"


SCENARIO_DEFAULT = _ScenarioDefault()  # "use the scenario's own default" for run_scenario(scale=...)


@dataclass(frozen=True)
class Scenario:
    """One lecture's data: either embeddings ``X (n, d_model)`` + heads, or direct ``Q, K, V``.

    ``default_scale`` None means ``1/sqrt(d_k)``; a number multiplies the raw scores.
    """

    id: str
    title: str
    seed: str
    story: str
    explanation: str
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    default_mask: str = "none"
    default_scale: float | None = None
    X: np.ndarray | None = None
    heads: tuple[Head, ...] = ()
    W_o: np.ndarray | None = None
    single_head: Head | None = None
    Q: np.ndarray | None = None
    K: np.ndarray | None = None
    V: np.ndarray | None = None
    dim_labels: tuple[str, ...] | None = None
    value_row_labels: tuple[str, ...] | None = None

    @property
    def direct(self) -> bool:
        """True when the scenario gives Q, K, V directly rather than embeddings and projections."""
        return self.Q is not None


def _mammal_query() -> Scenario:
    keys = np.array([[9.1, 1.0, 2.1], [0.1, 7.5, 4.3], [1.3, 5.5, 8.2], [7.6, 2.4, 4.0], [8.5, 2.7, 2.7]])
    return Scenario(
        id="mammal-query",
        title="Query vs keys: mammal and reptile",
        seed="000_68f6a7729c6e08bd.txt",
        story="Which animals does the query 'mammal' match? A query scored against five keys.",
        explanation=(
            "Two queries, **mammal** and **reptile**, are compared with the keys of five animals. "
            "Each dot product is divided by $\\sqrt{3}$ and turned into weights by a softmax over the keys; "
            "the output is the weighted mix of the animals' value rows (furry, scaly, slippery, huge, ferocious). "
            "Queries and keys here are different token sets, so the attention matrix is 2 x 5."
        ),
        query_tokens=("mammal", "reptile"),
        key_tokens=("kitten", "lizard", "salmon", "whale", "wolf"),
        Q=np.array([[8.7, 3.2, 4.1], [2.1, 9.9, 1.6]]),
        K=keys,
        V=np.array(
            [
                [3.4, 1.3, 0.4, 9.8],
                [7.5, 3.9, 4.1, 0.2],
                [8.3, 2.8, 2.3, 0.1],
                [1.6, 8.4, 9.9, 3.4],
                [2.2, 9.4, 8.7, 1.1],
            ]
        ),
        value_row_labels=("furry", "scaly", "slippery", "huge", "ferocious"),
    )


# The notebook prints V cut off after its first row. Its attention matrix A is lower-triangular with
# a non-zero diagonal and it prints new_v = A @ V, so V = solve(A, new_v), stored here to 10 decimals
# (A @ V then matches the printed new_v to 3e-11; tests/core recomputes the solve).
_RANDOM_CAUSAL_V = np.array(
    [
        [1.37933415, -0.10749346, -1.57829697, 1.22250701, -1.18933662, -0.12370067, -0.05942792, 0.01060972],
        [
            0.5446867721,
            -0.5319225621,
            1.2357420124,
            0.7492566315,
            1.1387057323,
            -0.9762345205,
            0.784435125,
            -0.5607462857,
        ],
        [
            1.4008101929,
            -0.9869555823,
            -1.6348294424,
            -0.2853146015,
            2.1937986241,
            -0.5018203676,
            -1.2863848909,
            0.5661001176,
        ],
        [
            -0.3342167945,
            -2.4951474005,
            0.7202622474,
            -1.2921657816,
            -1.2745396832,
            0.0895635468,
            -1.5258843389,
            0.2289981227,
        ],
    ]
)


def _random_causal() -> Scenario:
    tokens = ("t0", "t1", "t2", "t3")
    return Scenario(
        id="random-causal",
        title="Random Q, K, V with a causal mask",
        seed="001_02856d891cb48197.txt",
        story="Four random tokens, d_k = 8: scaling by 1/sqrt(d_k) and a causal mask, step by step.",
        explanation=(
            "Q, K and V are random normal draws (L = 4 tokens, d_k = d_v = 8), as printed in the notebook. "
            "The raw scores have variance about 7.2, roughly d_k times var(q) var(k), so they are divided "
            "by $\\sqrt{8}$. A causal mask adds $-\\infty$ above the diagonal: each token sees only itself "
            "and earlier tokens. The notebook's printout of V stops after the first row; the rest was "
            "recovered exactly from its printed attention matrix and output."
        ),
        query_tokens=tokens,
        key_tokens=tokens,
        default_mask="causal",
        Q=np.array(
            [
                [
                    1.81007476e00,
                    5.79714443e-01,
                    1.76340488e00,
                    -1.36508567e00,
                    -6.16563287e-01,
                    2.25550782e-01,
                    6.97932570e-01,
                    4.53068254e-01,
                ],
                [
                    4.40413862e-01,
                    1.41182465e00,
                    1.12179795e00,
                    2.55940040e00,
                    -6.11930195e-01,
                    -1.29197911e00,
                    4.35326619e-01,
                    5.87760655e-01,
                ],
                [
                    1.37479398e-01,
                    4.75943855e-01,
                    1.70270553e-01,
                    -2.99509648e-01,
                    -9.17416007e-01,
                    3.41058826e-02,
                    1.35763200e-01,
                    7.02759309e-04,
                ],
                [
                    -1.02789839e00,
                    -1.25648099e00,
                    -2.10596641e00,
                    8.53510939e-03,
                    -1.08815736e00,
                    2.73482192e-01,
                    -2.95768431e-01,
                    -1.63643952e00,
                ],
            ]
        ),
        K=np.array(
            [
                [0.23806166, 0.81478651, 0.1867359, -0.23954279, -0.43809154, 0.71938587, 0.32942035, -0.7737555],
                [1.30796644, 0.28949965, 0.46690281, -0.79771644, -0.23239687, 1.46718916, 0.96671762, 1.31305307],
                [-1.02961989, 0.32733656, 1.25499661, -1.8275007, 0.46145633, 0.21470431, 1.32039387, 0.97140891],
                [0.02289806, 0.28978226, 0.05236321, 0.60885248, 0.7258343, 1.19419763, -0.34371495, -1.39029048],
            ]
        ),
        V=_RANDOM_CAUSAL_V,
    )


APPLE_ORANGE_HEADS = (
    ("Head 1: fruit/category", (2,)),
    ("Head 2: preference/comparison", (1, 3)),
    ("Head 3: explanation/acidity", (4, 6, 7)),
    ("Head 4: pronoun/coreference", (2, 5)),
)


def _apple_orange() -> Scenario:
    X = np.array(
        [
            [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # I
            [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # prefer
            [0.0, 0.1, 1.0, 0.2, 0.0, 0.0, 0.1, 0.0],  # apple
            [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # over
            [0.0, 0.1, 1.0, 0.2, 0.0, 0.0, 0.3, 0.0],  # orange
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.1, 0.0],  # because
            [0.0, 0.0, 0.4, 0.0, 0.0, 1.0, 0.1, 0.0],  # it
            [0.0, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0],  # is
            [0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.4, 1.0],  # less
            [0.0, 0.0, 0.2, 0.0, 0.4, 0.0, 1.0, 0.0],  # acidic
        ]
    )
    tokens = ("I", "prefer", "apple", "over", "orange", "because", "it", "is", "less", "acidic")
    return Scenario(
        id="apple-orange",
        title="Apple vs orange: four hand-made heads",
        seed="002_02560aa648078fb2.txt",
        story="'I prefer apple over orange because it is less acidic': one head vs four specialised heads.",
        explanation=(
            "Each of the 10 tokens has an 8-dimensional embedding. With identity projections a single head "
            "compares whole embeddings. The four hand-made heads each look at a few dimensions only "
            "(fruit/category, preference/comparison, explanation/acidity, pronoun/coreference), so each "
            "finds a different pattern; their outputs are concatenated. In real models the projections "
            "are learned, not hand-made."
        ),
        query_tokens=tokens,
        key_tokens=tokens,
        X=X,
        heads=tuple(selection_head(dims, X.shape[1], name) for name, dims in APPLE_ORANGE_HEADS),
        single_head=identity_head(X.shape[1], "Single head (identity)"),
    )


def _emma_friend() -> Scenario:
    keys = np.array(
        [
            [1.2, 0.8, 1.0, 0],
            [0, 0, -0.5, 0],
            [0, 0, 1.0, -1],
            [0, 0, -1, 0],
            [1.0, 0.0, 0, -1],
            [0, 0, -0.5, 0],
            [0, 0, -1, 0],
            [0, 0, -1, 1.2],
            [0, 0, 1.0, 0],
        ]
    )
    tokens = ("Emma", "hates", "games", "but", "she", "is", "a", "great", "friend")
    return Scenario(
        id="emma-friend",
        title="Emma ... friend: interpretable dimensions",
        seed="003_772d8909e260d638.txt",
        story="'Emma hates games but she is a great friend': why does 'friend' attend to 'Emma'?",
        explanation=(
            "Every query and key lives in a 4-dimensional space with readable axes: Person, Animal, Noun, "
            "Adjective. The query of **friend** asks for persons, animals and adjectives "
            "(1.0, 0.9, 0.5, 1); the key of **Emma** offers (1.2, 0.8, 1.0, 0); their dot product is "
            "1.2·1.0 + 0.8·0.9 + 1.0·0.5 + 0·1 = 2.42, the largest in friend's row. The notebook shows "
            "the weights unscaled without a mask, then causal with scale $1/\\sqrt{4}$. It defines no "
            "values: here **V = K**, so each output is the mix of key features a token gathers."
        ),
        query_tokens=tokens,
        key_tokens=tokens,
        default_scale=1.0,
        Q=np.array(
            [
                [1.1, 0.7, 0.9, 0],
                [0, 0, 1, 0],
                [0, 0, 1, 0],
                [0, 0, 0, 0],
                [1.1, 0, 0, -1],
                [0, 0, 0, 0],
                [0.2, 0, 1, 0.5],
                [0.5, 0, 1, 0],
                [1, 0.9, 0.5, 1],
            ]
        ),
        K=keys,
        V=keys.copy(),
        dim_labels=("Pers", "Anim", "Noun", "Adj"),
    )


def _random_seed42() -> Scenario:
    rng = np.random.RandomState(42)  # the notebook's legacy np.random.seed(42) stream, reproduced
    X = rng.rand(3, 4)
    W_q, W_k, W_v = rng.rand(4, 4), rng.rand(4, 4), rng.rand(4, 4)
    return Scenario(
        id="random-seed42",
        title="Seeded random projections",
        seed="004_ab895bb7ebeb8173.txt",
        story="Three random 4-d embeddings projected by random W_Q, W_K, W_V (np.random.seed(42)).",
        explanation=(
            "The embeddings X (3 tokens x 4 dims) and the projections W_Q, W_K, W_V are uniform random "
            "numbers drawn after `np.random.seed(42)`, standing in for learned weights. "
            "Q = X W_Q, K = X W_K, V = X W_V, then scaled dot-product attention with $1/\\sqrt{4}$."
        ),
        query_tokens=("x0", "x1", "x2"),
        key_tokens=("x0", "x1", "x2"),
        X=X,
        heads=(Head(W_q, W_k, W_v, name="Head 1"),),
    )


SEEDS = {  # the five notebooks' scenarios, in their order
    "mammal-query": _mammal_query,
    "random-causal": _random_causal,
    "apple-orange": _apple_orange,
    "emma-friend": _emma_friend,
    "random-seed42": _random_seed42,
}


SEED_SCENARIOS = tuple(SEEDS)


def scenario_mask(kind: str, n_q: int, n_k: int) -> np.ndarray | None:
    """The bool mask for a mask kind ("none" or "causal")."""
    if kind not in MASK_KINDS:
        raise AttentionInputError(f"mask must be one of {', '.join(MASK_KINDS)}, not {kind!r}")
    return causal_mask(n_q, n_k) if kind == "causal" else None


def run_scenario(
    scenario: Scenario, *, mask: str | None = None, scale: object = SCENARIO_DEFAULT, temperature: float = 1.0
) -> MultiHeadResult:
    """Run a scenario as its notebook does; ``mask`` ("none"/"causal") and ``scale`` override its defaults."""
    scale = scenario.default_scale if scale is SCENARIO_DEFAULT else scale
    n_q, n_k = len(scenario.query_tokens), len(scenario.key_tokens)
    bool_mask = scenario_mask(scenario.default_mask if mask is None else mask, n_q, n_k)
    if scenario.direct:
        r = scaled_dot_product_attention(
            scenario.Q, scenario.K, scenario.V, mask=bool_mask, scale=scale, temperature=temperature
        )
        return MultiHeadResult((r,), ("Head 1",), r.output, r.output)
    return multi_head_attention(
        scenario.X, heads=scenario.heads, W_o=scenario.W_o, mask=bool_mask, scale=scale, temperature=temperature
    )
