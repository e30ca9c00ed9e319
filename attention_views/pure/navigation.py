"""The app's pages, in one place: the navigation's sections and pages (app.py builds its st.navigation from
:data:`NAVIGATION`), the prefix of every page's widget keys, and the page each scenario's lecture opens on."""

from __future__ import annotations

NAVIGATION = {  # section -> (file in pages/, title, Material icon); home is the default page
    "Lectures": (
        ("home", "Home", "home"),
        ("playground", "Playground", "grid_on"),
        ("multi_head", "Multi-head", "view_module"),
        ("step_by_step", "Step by step", "calculate"),
        ("scaling", "Scaling", "show_chart"),
        ("similarity", "Similarity", "explore"),
        ("exercises", "Exercises", "school"),
    ),
    "Modern attention": (
        ("positions", "Positions", "pin_drop"),
        ("kv_cache", "KV cache", "stacks"),
        ("online_softmax", "Online softmax", "view_column"),
        ("sinks", "Attention sinks", "anchor"),
        ("cross_attention", "Cross-attention", "translate"),
        ("real_model", "Real model", "memory"),
        ("learning", "A head learns", "model_training"),
    ),
}
PAGES = tuple(name for entries in NAVIGATION.values() for name, _, _ in entries)  # every page, in navigation order
PAGE_PREFIXES = tuple(f"{name}_" for name in PAGES)  # every widget key starts with its page's name and "_"
NATURAL_PAGE = {  # the page each seed notebook's lecture opens on
    "mammal-query": "playground",
    "random-causal": "playground",
    "apple-orange": "multi_head",
    "emma-friend": "step_by_step",
    "random-seed42": "playground",
    "positions-order": "positions",  # and each lesson's
    "kv-cache": "kv_cache",
    "gqa-heads": "multi_head",
    "online-softmax": "online_softmax",
    "attention-sinks": "sinks",
    "cross-attention": "cross_attention",
}
