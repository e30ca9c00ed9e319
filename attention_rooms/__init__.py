"""Live classes: a lecturer's room that students follow, with questions they answer before the reveal.

No Streamlit, pandas or plotly here: the app's pages draw what this package stores. The state lives in a Store
(SQLite by default, Redis when ``LAB_STORE=redis://...``; open_store chooses), never in a process's memory.
Design, bounds and security model: docs/classroom.md.
"""

from attention_rooms.codes import format_code, new_student_id, normalise_code
from attention_rooms.errors import LimitError, NoSuchClassError, NotLecturerError, RefusedError, RoomError
from attention_rooms.links import qr_svg, student_link
from attention_rooms.questions import (
    Question,
    QuestionKind,
    Tally,
    choice_question,
    key_question,
    number_question,
)
from attention_rooms.store import Room, Store, open_store

__all__ = [
    "LimitError",
    "NoSuchClassError",
    "NotLecturerError",
    "Question",
    "QuestionKind",
    "RefusedError",
    "Room",
    "RoomError",
    "Store",
    "Tally",
    "choice_question",
    "format_code",
    "key_question",
    "new_student_id",
    "normalise_code",
    "number_question",
    "open_store",
    "qr_svg",
    "student_link",
]
