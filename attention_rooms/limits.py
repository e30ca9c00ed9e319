"""Every bound of a class, in one place. Actions that would pass one raise LimitError."""

from __future__ import annotations

ROOM_TTL_S = 12 * 60 * 60  # a room expires 12 hours after its last write (any lecturer action or answer)
MAX_ROOMS = 1000  # live (not expired, not closed) rooms in one store
MAX_VIEW_BYTES = 256 * 1024  # the lecturer's view payload, UTF-8 bytes (the app's largest view is 200 kB of JSON)
MAX_QUESTIONS = 100  # questions asked in one room
MAX_SEATS = 500  # students seated in one room (a seat answers each question once; no cap on answers beyond it)
MAX_NAME_CHARS = 100  # a room's name
MAX_PROMPT_CHARS = 300  # a question's prompt
MAX_OPTIONS = 64  # options of a key or choice question (a key question lists up to 64 token labels)
MAX_OPTION_CHARS = 100  # one option (the app's labels are cut at 100 characters)
MAX_STUDENT_ID_CHARS = 64  # a student id (the app makes 22-character ones: codes.new_student_id)
NUMBER_BINS = 10  # a number question's spread: bins of width 0.1 over [0, 1]
DEFAULT_TOLERANCE = 0.05  # a number answer is right when |answer - correct| <= tolerance
MAX_TOLERANCE = 0.5
BUSY_TIMEOUT_S = 10.0  # SQLite: how long a write waits for another process's transaction

# How often one client may try a code of no class, and start a class: (per, most, window_s), counted in the store
# per session (the browser's seat) and per client address (attention_rooms.throttle). A code that names a class is
# never counted: a hall of 200 behind one address joins at once. A guessing address gets 600 codes an hour: with
# MAX_ROOMS live rooms of 30**6 codes, under 0.1 % of finding one a hour.
SESSION, ADDRESS = "session", "address"
CODE_TRIES = ((SESSION, 5, 60), (SESSION, 30, 3600), (ADDRESS, 60, 60), (ADDRESS, 600, 3600))
ROOM_STARTS = ((SESSION, 3, 3600), (ADDRESS, 20, 3600))  # 20 an hour: one address holds at most 240 of MAX_ROOMS
