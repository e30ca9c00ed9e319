"""How often one client may try codes and start classes (limits.CODE_TRIES, limits.ROOM_STARTS): fixed windows
counted in the store, so every process of the app sees one count, per session and per client address."""

from __future__ import annotations

from collections.abc import Mapping

from attention_rooms.limits import CODE_TRIES, ROOM_STARTS
from attention_rooms.store import Store

RULES = {"code": CODE_TRIES, "room": ROOM_STARTS}
REFUSED = {
    "code": "Too many class codes that name no class were tried from here; wait a minute and check the code.",
    "room": "Too many classes were started from here; try again in an hour, or go on with a class you started.",
}


def _key(kind: str, per: str, who: Mapping[str, str], window_s: int) -> str:
    return f"{kind}:{per}:{who.get(per) or 'unknown'}:{window_s}"


def refused(store: Store, kind: str, who: Mapping[str, str]) -> str:
    """ "" while the client ``who`` ({"session": ..., "address": ...}) may do ``kind`` ("code", "room") again; else
    what it is told."""
    for per, most, window_s in RULES[kind]:
        if store.count(_key(kind, per, who, window_s), window_s, 0) >= most:
            return REFUSED[kind]
    return ""


def spend(store: Store, kind: str, who: Mapping[str, str]) -> None:
    """Count one ``kind`` for the client ``who`` in each of its windows."""
    for per, _, window_s in RULES[kind]:
        store.count(_key(kind, per, who, window_s), window_s, 1)
