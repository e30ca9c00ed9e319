"""A byte-level BPE tokenizer (GPT-2 style) built from a GGUF file's vocabulary and merges.

SmolLM2's tokenizer (llama.cpp calls its pre-tokenizer ``smollm``) first splits every digit into
its own piece, then applies GPT-2's byte-level split (``'s|'t|... | ?\\p{L}+| ?\\p{N}+|...``); the
BPE merges then run inside each piece. No BOS/EOS token is added; the control tokens
(``<|im_start|>``, ...) are matched as whole tokens when they appear in the text, except by the
:func:`plain_text` copy, which reads them as the characters they are spelled with.
"""

from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from attention_models.errors import AttentionModelError

CONTROL = 3  # llama.cpp's token type for control tokens
DIGIT_SPLITTING = {"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"}


def build_tokenizer(tokens: list[str], merges: list[str], token_types: list[int], pre: str) -> Tokenizer:
    """The ``tokenizers`` Tokenizer for a GGUF ``gpt2`` vocabulary with pre-tokenizer ``pre``."""
    if pre not in DIGIT_SPLITTING | {"gpt2", "default"}:
        raise AttentionModelError(f"the pre-tokenizer {pre!r} of this file is not supported (only GPT-2 style ones)")
    vocab = {tok: i for i, tok in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    digits = [pre_tokenizers.Digits(individual_digits=True)] if pre in DIGIT_SPLITTING else []
    tok.pre_tokenizer = pre_tokenizers.Sequence([*digits, byte_level])
    tok.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, token_types, strict=True) if kind == CONTROL]
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    return tok


def plain_text(tok: Tokenizer) -> Tokenizer:
    """A copy of ``tok`` that reads typed control tokens as text: ``"<|im_start|>"`` -> ``<``, ``|``, ``im``, ...

    Its own object (not a flag flipped on ``tok``): sessions tokenize at the same time on several threads.
    """
    copy = Tokenizer.from_str(tok.to_str())
    copy.encode_special_tokens = True
    return copy


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet back to bytes: each of the 256 bytes is spelled by one printable character."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    spelling = {b: chr(b) for b in printable} | {b: chr(256 + i) for i, b in enumerate(others)}
    return {ch: b for b, ch in spelling.items()}


BYTE_DECODER = _byte_decoder()


def readable_token(token: str) -> str:
    """A vocabulary entry as text: ``'ĠMary' -> ' Mary'``; bytes that are not whole UTF-8 characters
    show as ``\\xe6``; control tokens (``<|im_start|>``) stay as they are."""
    if not all(ch in BYTE_DECODER for ch in token):
        return token
    return bytes(BYTE_DECODER[ch] for ch in token).decode("utf-8", errors="backslashreplace")
