"""The modern-attention lessons as scenarios: small hand-made numbers that make each lesson visible.

Unlike the five seed scenarios (:mod:`attention_core.scenarios`) these come from no notebook
(``seed == ""``); each opens the page that teaches it. The numbers are chosen, not learned: every
one is written here so a lecturer can read what the page will show.
"""

from __future__ import annotations

import numpy as np

from attention_core.multihead import Head
from attention_core.scenarios import Scenario

_I4 = np.eye(4)


def positions_order() -> Scenario:
    """'the cat saw the dog': the two 'the' have the same embedding, so without positions they attend alike."""
    the, cat, saw, dog = [1.0, 0.0, 0.6, 0.0], [0.0, 1.0, 0.0, 0.6], [0.6, 0.0, 1.0, 0.0], [0.0, 0.8, 0.3, 1.0]
    return Scenario(
        id="positions-order",
        title="Where am I? Positional encodings",
        seed="",
        story="'the cat saw the dog': without positions both 'the' rows are the same. Add positions and see.",
        explanation=(
            "Attention compares contents only: the two **the** tokens have the same embedding, so with no "
            "positional encoding their rows of weights are identical, wherever they stand. Add sinusoidal or "
            "learned encodings to X, rotate Q and K with RoPE, or bias the scores with ALiBi, and the two rows "
            "differ. Then shift every position by k: RoPE and ALiBi depend only on the distance between two "
            "tokens, so their scores do not move; absolute encodings do."
        ),
        query_tokens=("the", "cat", "saw", "the", "dog"),
        key_tokens=("the", "cat", "saw", "the", "dog"),
        X=np.array([the, cat, saw, the, dog]),
        heads=(Head(_I4.copy(), _I4.copy(), _I4.copy(), name="Head 1"),),
    )


def kv_cache() -> Scenario:
    """Five tokens decoded one at a time through a cache; projections mix the dims so every row differs."""
    X = np.array(
        [
            [1.0, 0.2, 0.0, 0.5],
            [0.1, 1.0, 0.4, 0.0],
            [0.0, 0.3, 1.0, 0.2],
            [0.6, 0.0, 0.2, 1.0],
            [0.9, 0.4, 0.1, 0.3],
        ]
    )
    W_q = np.array([[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.5, 0.0], [0.0, 0.0, 1.0, 0.5], [0.5, 0.0, 0.0, 1.0]])
    W_k = np.array([[1.0, 0.0, 0.0, 0.5], [0.5, 1.0, 0.0, 0.0], [0.0, 0.5, 1.0, 0.0], [0.0, 0.0, 0.5, 1.0]])
    W_v = np.array([[1.0, 0.0, 0.2, 0.0], [0.0, 1.0, 0.0, 0.2], [0.2, 0.0, 1.0, 0.0], [0.0, 0.2, 0.0, 1.0]])
    return Scenario(
        id="kv-cache",
        title="Generating one token at a time: the KV cache",
        seed="",
        story="Decode 'I think therefore I am' token by token: each step adds one key and one value to a cache.",
        explanation=(
            "A decoder generates one token at a time. At step t the new token needs only **its own query**; "
            "the keys and values of the earlier tokens have not changed, so they are kept in a cache and the "
            "new token's key and value are appended. Its output row is exactly row t of full causal attention, "
            "at a fraction of the multiply-adds. The price is memory: the cache grows with every token."
        ),
        query_tokens=("I", "think", "therefore", "I", "am"),
        key_tokens=("I", "think", "therefore", "I", "am"),
        default_mask="causal",
        X=X,
        heads=(Head(W_q, W_k, W_v, name="Head 1"),),
    )


def online_softmax() -> Scenario:
    """Three queries over eight keys; the largest score sits in a late block, so the running maximum moves."""
    K = np.array(
        [
            [0.2, 0.1, 0.0, 0.3],
            [0.5, 0.0, 0.2, 0.1],
            [0.0, 0.4, 0.1, 0.0],
            [0.3, 0.3, 0.3, 0.3],
            [1.0, 0.2, 0.0, 0.1],
            [0.1, 1.2, 0.3, 0.0],
            [2.5, 0.0, 0.5, 0.2],
            [0.0, 0.1, 2.0, 1.5],
        ]
    )
    V = np.array(
        [
            [1.0, 0.0],
            [0.8, 0.2],
            [0.6, 0.4],
            [0.5, 0.5],
            [0.4, 0.6],
            [0.2, 0.8],
            [0.0, 1.0],
            [0.5, 0.0],
        ]
    )
    return Scenario(
        id="online-softmax",
        title="FlashAttention's trick: online softmax",
        seed="",
        story="Softmax over eight keys read in blocks: a running maximum and a rescaled running sum, never the row.",
        explanation=(
            "FlashAttention never holds a whole row of scores. It reads the keys in blocks; for each block it "
            "updates a **running maximum** m and a **running sum** of exp(score − m), and when m grows it "
            "multiplies what it has so far by exp(m_old − m_new). After the last block, dividing the "
            "accumulated output by the running sum gives exactly softmax(QKᵀ/√d_k)·V. The biggest scores here "
            "sit in the last blocks, so the maximum moves and the rescaling shows."
        ),
        query_tokens=("q0", "q1", "q2"),
        key_tokens=tuple(f"k{j}" for j in range(8)),
        Q=np.array([[2.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.5, 0.0], [0.5, 0.0, 1.5, 1.0]]),
        K=K,
        V=V,
    )


def attention_sinks() -> Scenario:
    """A start token whose key matches every query a little: the heads park their spare attention on it."""
    X = np.array(
        [
            [1.0, 1.0, 1.0, 1.0],  # <s>: a bit like everything
            [0.0, 1.0, 0.0, 0.2],
            [0.2, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.2, 1.0],
            [1.0, 0.0, 0.0, 0.3],
            [0.0, 0.3, 1.0, 0.0],
        ]
    )
    return Scenario(
        id="attention-sinks",
        title="Attention sinks",
        seed="",
        story="'<s> the cat sat on it': the start token catches the attention no other token needs.",
        explanation=(
            "Softmax must give out a total weight of 1 in every row, even when a query finds nothing relevant. "
            "Real models learn to park that spare weight on the first token, an **attention sink**. Here the "
            "start token <s> matches every query a little, so every row leans on it. Two fixes to compare: "
            "**softmax + 1** (an extra zero logit, so a row may give out less than 1 in total) and the "
            "**StreamingLLM** mask, which keeps the first few tokens plus a sliding window when the context is long."
        ),
        query_tokens=("<s>", "the", "cat", "sat", "on", "it"),
        key_tokens=("<s>", "the", "cat", "sat", "on", "it"),
        default_mask="causal",
        X=X,
        heads=(Head(_I4.copy() * 1.5, _I4.copy() * 1.5, _I4.copy(), name="Head 1"),),
    )


def cross_attention() -> Scenario:
    """French target tokens (queries) over English source tokens (keys and values): 3 x 4, no causal mask."""
    # dims: article, animal, colour, verb
    source_keys = np.array([[1.0, 0.0, 0.0, 0.1], [0.0, 0.2, 1.0, 0.0], [0.1, 1.0, 0.2, 0.0], [0.0, 0.0, 0.0, 1.0]])
    return Scenario(
        id="cross-attention",
        title="Cross-attention: a translation looks at its source",
        seed="",
        story="'le chat noir' (queries) attends over 'the black cat sleeps' (keys, values): 3 x 4, no mask.",
        explanation=(
            "In an encoder-decoder model the decoder's queries come from the **target** sentence being written "
            "and the keys and values from the **source** sentence: two token lists, two tables, and a 3 x 4 "
            "weight matrix. No causal mask: the whole source is known. Each French word finds its English "
            "counterpart even though the order differs (noir after chat, black before cat)."
        ),
        query_tokens=("le", "chat", "noir"),
        key_tokens=("the", "black", "cat", "sleeps"),
        Q=np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.2, 0.0], [0.0, 0.2, 2.0, 0.0]]),
        K=source_keys,
        V=source_keys.copy(),
        dim_labels=("article", "animal", "colour", "verb"),
    )


def gqa_heads() -> Scenario:
    """Four query heads over an 8-d embedding, for the multi-head page's key/value-head slider."""
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(6, 8)), 2)  # (6, 8)
    W = [np.round(rng.normal(size=(8, 8)) / np.sqrt(8), 2) for _ in range(3)]
    return Scenario(
        id="gqa-heads",
        title="Heads that share keys: MHA, GQA, MQA",
        seed="",
        story="Four query heads; slide from four key/value heads (MHA) to two (GQA) to one (MQA).",
        explanation=(
            "Grouped-query attention keeps every query head but lets a group of them share one key head and "
            "one value head: the KV cache shrinks by the group size. With as many key/value heads as query "
            "heads it is ordinary multi-head attention (MHA); with one for all it is multi-query attention "
            "(MQA). SmolLM2-135M uses 9 query heads on 3 key/value heads. Watch which heads' patterns merge."
        ),
        query_tokens=("we", "share", "keys", "to", "save", "memory"),
        key_tokens=("we", "share", "keys", "to", "save", "memory"),
        default_mask="causal",
        X=X,
        heads=(Head(W[0], W[1], W[2], name="Head 1"),),
    )


LESSONS = {
    "positions-order": positions_order,
    "kv-cache": kv_cache,
    "gqa-heads": gqa_heads,
    "online-softmax": online_softmax,
    "attention-sinks": attention_sinks,
    "cross-attention": cross_attention,
}
