"""What the real-model page runs and how it writes a token: the token ids of a ModelView, a token in quotes.

Pure functions of the model and the view (no Streamlit), shared by the real-model page and the class's
questions about it (``askable``), so both see the same run.
"""

from __future__ import annotations

import attention_models as am
from attention_views.pure.lab import ModelView

REPEAT_LENGTH = 30  # the induction preset: this many random tokens, then the same again


def text_ids(model: am.Model, text: str) -> list[int]:
    """The token ids of text a person typed (the text box, the answers, the patching prompts): typed text is text,
    so a control token spelled in it (``<|im_start|>``) is read as its characters."""
    return model.tokenize(text, control_tokens=False)


def shown_token(token: str) -> str:
    """A token as the page writes it, in quotes with its whitespace visible: ``' Mary'``, ``'\\n'``, ``'\\xa0'``,
    ``'\\u202e'`` (whitespace but the space, and invisible characters, as Python's escapes). A byte fragment
    already reads ``\\xe2`` (``readable_token``): its backslash is not doubled."""

    def visible(ch: str) -> str:
        return ch if ch == " " or (ch.isprintable() and not ch.isspace()) else repr(ch)[1:-1]

    return "'" + "".join(map(visible, token)) + "'"


def input_ids(model: am.Model, view: ModelView) -> list[int]:
    """The tokens the page runs: the preset's (or the typed text's), then those generated."""
    if view.preset == "induction":
        base = am.repeated_random_tokens(model.vocab_size, length=REPEAT_LENGTH)
    else:
        base = text_ids(model, view.text)
    return base + list(view.generated)
