"""The errors attention_models raises, each with a message a student (or the page) can show as is."""

from __future__ import annotations


class AttentionModelError(ValueError):
    """A model cannot be loaded or run on this input; the message says why and how to fix it."""


class ModelNotInstalledError(AttentionModelError):
    """The model's file is not installed; the message gives the command that installs it."""


class SequenceTooLongError(AttentionModelError):
    """The text has more tokens than the model runs here (see ``Model.max_tokens``)."""
