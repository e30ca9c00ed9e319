"""Room codes, lecturer keys and student ids: made with ``secrets``, checked in constant time.

A room code is 6 characters from CODE_ALPHABET (no 0/O, 1/I/L, U): 30**6 = 729 million codes, so with at most
MAX_ROOMS live rooms a guessed code names one with probability under 1.4e-6. A code only lets a student follow and
answer; every lecturer action needs the lecturer key (token_urlsafe(24), 192 bits), kept only as its SHA-256.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from attention_rooms.errors import MISSING_KEY, WRONG_KEY, NoSuchClassError, NotLecturerError

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6
_SEPARATORS = " -_.\t"  # typed or read-aloud separators that normalise_code drops


def new_code() -> str:
    """A random room code: CODE_LENGTH characters of CODE_ALPHABET."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str) -> str:
    """The code a student typed, in canonical form: upper case, spaces, dashes, dots and underscores dropped."""
    code = "".join(ch for ch in str(text).upper() if ch not in _SEPARATORS)
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        shown = str(text)[:20]
        raise NoSuchClassError(
            f"{shown!r} is not a class code: a code has {CODE_LENGTH} letters and digits, like {format_code('K7P2QX')}."
        )
    return code


def format_code(code: str) -> str:
    """The code as shown and read aloud: two groups of three, ``K7P-2QX``."""
    return f"{code[:3]}-{code[3:]}"


def new_lecturer_key() -> str:
    """A new lecturer key (the secret that makes its holder the room's lecturer)."""
    return secrets.token_urlsafe(24)


def key_hash(key: str) -> str:
    """What a store keeps of a lecturer key: its SHA-256, hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def check_key(stored_hash: str, key: str | None) -> None:
    """Raise NotLecturerError unless ``key`` is the key whose hash the room stores (compared in constant time)."""
    if not isinstance(key, str) or not key:
        raise NotLecturerError(MISSING_KEY)
    if not hmac.compare_digest(key_hash(key), stored_hash):
        raise NotLecturerError(WRONG_KEY)


def new_student_id() -> str:
    """A random student id: a browser's seat in a class (22 URL-safe characters; classroom.seat_token keeps it)."""
    return secrets.token_urlsafe(16)


def new_secret() -> str:
    """A store's signal secret (Store.signal_secret): 256 random bits, hex."""
    return secrets.token_hex(32)


def signal_name(secret: str, code: str) -> str:
    """The name of room ``code``'s signal file: an HMAC of the code under the store's secret, so that no name can be
    made from a guessed code, and a name found says nothing about its code."""
    return hmac.new(secret.encode("ascii"), code.encode("ascii"), hashlib.sha256).hexdigest()[:32]


def is_lecturer(stored_hash: str, key: str | None) -> bool:
    """Whether ``key`` is the room's lecturer key (check_key without the refusal)."""
    try:
        check_key(stored_hash, key)
    except NotLecturerError:
        return False
    return True
