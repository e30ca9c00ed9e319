"""The Redis store (``LAB_STORE=redis://host:port/db``): one Redis server shared by every app process.

Keys of room CODE (prefix ``lab:``): ``room:CODE`` (hash: name, key_hash, created, last_active, version,
view_version, bring_back, n_questions), ``room:CODE:view`` (the payload), ``room:CODE:questions`` (hash: id ->
question JSON), ``room:CODE:revealed`` (set of ids), ``room:CODE:stages`` (hash: id -> round and shown rounds,
questions.stage_text; absent: round 1, nothing shown), ``room:CODE:answers:ID`` (hash: student id -> answer in
round 1; ``...:ID:2`` in round 2),
``room:CODE:seats`` (set of student ids), ``room:CODE:locked`` (present while locked), and
``rooms`` (sorted set: code -> last_active, for the live-room bound). Every write is one Lua script, so its checks
(room live, lecturer key, bounds, not revealed) and its writes are atomic across processes. Every write also sets
each key of the room to expire ROOM_TTL_S later (Redis's own clock), which deletes an idle room's data; the store's
clock decides liveness. A single Redis node (the scripts derive a room's keys from its code).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import redis

from attention_rooms import codes, questions
from attention_rooms.errors import (
    DISK_FULL,
    LAST_ROUND,
    LOCKED,
    MOVED_ON,
    REVEALED,
    SHOWN,
    UNWRITABLE,
    WRONG_KEY,
    NotLecturerError,
    RefusedError,
    RoomError,
    StoreUnavailableError,
    no_question,
    no_such_class,
    too_many,
)
from attention_rooms.limits import MAX_QUESTIONS, MAX_ROOMS, MAX_SEATS, ROOM_TTL_S
from attention_rooms.questions import Question, Tally, Value
from attention_rooms.store import Clock, Room, Store, check_name, check_payload

PREFIX = "lab:"
FAULTS = (redis.ConnectionError, redis.TimeoutError)  # the server is not there (or too slow): not a refusal
CONNECT_TIMEOUT_S = 2.0  # a server that does not answer is a fault after this long, not a page that hangs
REPLY_TIMEOUT_S = 5.0
ROOMS = PREFIX + "rooms"
SECRET = PREFIX + "signal_secret"  # Store.signal_secret: set once (SET NX), never expires

# KEYS[1] = the room's hash; ARGV[1] = now, ARGV[2] = ROOM_TTL_S, then each script's own.
_LUA_PRELUDE = """
local room = KEYS[1]
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local code = string.sub(room, string.len('$ROOM_PREFIX') + 1)
local function live()
  local last = redis.call('HGET', room, 'last_active')
  if not last or tonumber(last) < now - ttl then error({err = 'NOCLASS'}) end
end
local function lecturer(hash)
  live()
  if redis.call('HGET', room, 'key_hash') ~= hash then error({err = 'NOTLECTURER'}) end
end
local function room_keys()
  local keys = {room, room .. ':view', room .. ':questions', room .. ':revealed', room .. ':seats', room .. ':locked',
    room .. ':stages'}
  local n = tonumber(redis.call('HGET', room, 'n_questions') or '0')
  for i = 1, n do
    keys[#keys + 1] = room .. ':answers:' .. i
    keys[#keys + 1] = room .. ':answers:' .. i .. ':2'
  end
  return keys
end
local function seat(student, most)
  local seats = room .. ':seats'
  if redis.call('SISMEMBER', seats, student) == 1 then return end
  if redis.call('EXISTS', room .. ':locked') == 1 then error({err = 'LOCKED'}) end
  if redis.call('SCARD', seats) >= most then error({err = 'SEATS'}) end
  redis.call('SADD', seats, student)
end
local function touch(changed)
  redis.call('HSET', room, 'last_active', ARGV[1])
  if changed then redis.call('HINCRBY', room, 'version', 1) end
  redis.call('ZADD', '$ROOMS', now, code)
  for _, key in ipairs(room_keys()) do redis.call('PEXPIRE', key, math.floor(ttl * 1000)) end
end
"""

_LUA = {
    # ARGV[3] = MAX_ROOMS, ARGV[4] = name, ARGV[5] = key hash -> 1 made, 0 the code is taken
    "create": """
redis.call('ZREMRANGEBYSCORE', '$ROOMS', '-inf', '(' .. (now - ttl))
if redis.call('ZCARD', '$ROOMS') >= tonumber(ARGV[3]) then error({err = 'LIMIT'}) end
local ok = pcall(live)
if ok then return 0 end
redis.call('DEL', unpack(room_keys()))
redis.call('HSET', room, 'name', ARGV[4], 'key_hash', ARGV[5], 'created', ARGV[1], 'last_active', ARGV[1],
  'version', 0, 'view_version', 0, 'bring_back', 0, 'n_questions', 0)
redis.call('SET', room .. ':view', '')
touch(false)
return 1
""",
    # ARGV[3] = key hash, ARGV[4] = payload -> view_version
    "set_view": """
lecturer(ARGV[3])
redis.call('SET', room .. ':view', ARGV[4])
local v = redis.call('HINCRBY', room, 'view_version', 1)
touch(true)
return v
""",
    # ARGV[3] = key hash -> bring_back generation
    "bring_back": """
lecturer(ARGV[3])
local v = redis.call('HINCRBY', room, 'bring_back', 1)
touch(true)
return v
""",
    # ARGV[3] = key hash, ARGV[4] = MAX_QUESTIONS, ARGV[5] = question JSON -> its id
    "ask": """
lecturer(ARGV[3])
local n = tonumber(redis.call('HGET', room, 'n_questions'))
if n >= tonumber(ARGV[4]) then error({err = 'LIMIT'}) end
redis.call('HSET', room .. ':questions', n + 1, ARGV[5])
redis.call('HSET', room, 'n_questions', n + 1)
touch(true)
return n + 1
""",
    # ARGV[3] = student id, ARGV[4] = MAX_SEATS
    "join": """
live()
seat(ARGV[3], tonumber(ARGV[4]))
touch(false)
return 1
""",
    # ARGV[3] = key hash, ARGV[4] = 1 to lock, 0 to unlock
    "lock": """
lecturer(ARGV[3])
if ARGV[4] == '1' then redis.call('SET', room .. ':locked', '1') else redis.call('DEL', room .. ':locked') end
touch(false)
return 1
""",
    # ARGV[3] = question id, ARGV[4] = student id, ARGV[5] = answer, ARGV[6] = MAX_SEATS, ARGV[7] = the stage the
    # answer was checked against (questions.stage_text): another stage meanwhile is a refusal, answered again
    "answer": """
live()
if redis.call('HEXISTS', room .. ':questions', ARGV[3]) == 0 then error({err = 'NOQUESTION'}) end
if redis.call('SISMEMBER', room .. ':revealed', ARGV[3]) == 1 then error({err = 'REVEALED'}) end
if (redis.call('HGET', room .. ':stages', ARGV[3]) or '1:') ~= ARGV[7] then error({err = 'STAGE'}) end
seat(ARGV[4], tonumber(ARGV[6]))
local round = string.match(ARGV[7], '^(%d+)')
local answers = room .. ':answers:' .. ARGV[3] .. (round == '1' and '' or ':' .. round)
redis.call('HSET', answers, ARGV[4], ARGV[5])
touch(false)
return 1
""",
    # ARGV[3] = key hash, ARGV[4] = question id, ARGV[5] = the stage read, ARGV[6] = the stage to set
    "stage": """
lecturer(ARGV[3])
if redis.call('HEXISTS', room .. ':questions', ARGV[4]) == 0 then error({err = 'NOQUESTION'}) end
if redis.call('SISMEMBER', room .. ':revealed', ARGV[4]) == 1 then error({err = 'REVEALED'}) end
if (redis.call('HGET', room .. ':stages', ARGV[4]) or '1:') ~= ARGV[5] then error({err = 'STAGE'}) end
redis.call('HSET', room .. ':stages', ARGV[4], ARGV[6])
touch(true)
return 1
""",
    # ARGV[3] = key hash, ARGV[4] = question id
    "reveal": """
lecturer(ARGV[3])
if redis.call('HEXISTS', room .. ':questions', ARGV[4]) == 0 then error({err = 'NOQUESTION'}) end
if redis.call('SADD', room .. ':revealed', ARGV[4]) == 1 then touch(true) end
return 1
""",
    # ARGV[3] = key hash
    "close": """
lecturer(ARGV[3])
redis.call('DEL', unpack(room_keys()))
redis.call('ZREM', '$ROOMS', code)
return 1
""",
}


class RedisStore(Store):
    def __init__(self, client: redis.Redis, clock: Clock = time.time) -> None:
        """``client`` must decode responses (``decode_responses=True``)."""
        self._r = client
        self._clock = clock
        self._scripts = {
            name: client.register_script(
                (_LUA_PRELUDE + body).replace("$ROOM_PREFIX", PREFIX + "room:").replace("$ROOMS", ROOMS)
            )
            for name, body in _LUA.items()
        }

    @classmethod
    def from_url(cls, url: str, clock: Clock = time.time) -> RedisStore:
        client = redis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=REPLY_TIMEOUT_S
        )
        return cls(client, clock)

    def _run(self, script: str, code: str, *args: object, question_id: object = "") -> int:
        try:
            return self._scripts[script](keys=[_room(code)], args=[self._clock(), ROOM_TTL_S, *args])
        except redis.ResponseError as e:
            raise _refusal(str(e).split(" ", 1)[0], script, code, question_id) from None

    def _live(self, code: str, last_active: str | None) -> None:
        """Raise NoSuchClassError unless the room's last_active (None: no room) is within ROOM_TTL_S of now."""
        if last_active is None or float(last_active) < self._clock() - ROOM_TTL_S:
            raise no_such_class(codes.format_code(code))

    def create_room(self, name: str = "") -> tuple[Room, str]:
        name = check_name(name)
        key = codes.new_lecturer_key()
        code = codes.new_code()
        while not self._run("create", code, MAX_ROOMS, name, codes.key_hash(key)):
            code = codes.new_code()
        return self.room(code), key

    def room(self, code: str) -> Room:
        code = codes.normalise_code(code)
        with self._r.pipeline(transaction=True) as p:
            p.hgetall(_room(code)).scard(f"{_room(code)}:seats").exists(f"{_room(code)}:locked")
            h, n_seats, locked = p.execute()
        self._live(code, h.get("last_active"))
        return Room(
            code,
            h["name"],
            float(h["created"]),
            float(h["last_active"]),
            *(int(h[f]) for f in ("version", "view_version", "bring_back", "n_questions")),
            n_seats,
            bool(locked),
        )

    def join(self, code: str, student_id: str) -> Room:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        self._run("join", code, student_id, MAX_SEATS)
        return self.room(code)

    def lock(self, code: str, key: str, locked: bool) -> None:
        code = codes.normalise_code(code)
        self._run("lock", code, _key_arg(key), int(bool(locked)))

    def version(self, code: str) -> int:
        code = codes.normalise_code(code)
        version, last = self._r.hmget(_room(code), "version", "last_active")
        self._live(code, last)
        return int(version)

    def view(self, code: str) -> tuple[int, str]:
        code = codes.normalise_code(code)
        with self._r.pipeline(transaction=True) as p:
            p.hmget(_room(code), "view_version", "last_active").get(_view(code))
            (view_version, last), payload = p.execute()
        self._live(code, last)
        return int(view_version), payload

    def set_view(self, code: str, key: str, payload: str) -> int:
        code, payload = codes.normalise_code(code), check_payload(payload)
        return self._run("set_view", code, _key_arg(key), payload)

    def check_lecturer(self, code: str, key: str) -> None:
        self._lecturer_only(codes.normalise_code(code), key)

    def bring_back(self, code: str, key: str) -> int:
        code = codes.normalise_code(code)
        return self._run("bring_back", code, _key_arg(key))

    def ask(self, code: str, key: str, question: Question) -> Question:
        code = codes.normalise_code(code)
        hash_ = _key_arg(key)
        self._lecturer_only(code, key)  # a student's bad question is refused as "not the lecturer" first
        question = questions.check_question(question)
        qid = self._run("ask", code, hash_, MAX_QUESTIONS, questions.question_to_json(question))
        return replace(question, id=qid)

    def _lecturer_only(self, code: str, key: str | None) -> None:
        stored, last = self._r.hmget(_room(code), "key_hash", "last_active")
        self._live(code, last)
        codes.check_key(stored, key)

    def _question(self, code: str, question_id: int) -> Question:
        """Question ``question_id`` of a live room (one round trip)."""
        question_id = questions.check_question_id(question_id)
        with self._r.pipeline(transaction=True) as p:
            p.hget(_room(code), "last_active").hget(_questions(code), question_id)
            p.sismember(_revealed(code), question_id).hget(_stages(code), question_id)
            last, body, revealed, stage = p.execute()
        self._live(code, last)
        if body is None:
            raise no_question(question_id)
        return questions.question_from_json(body, question_id, bool(revealed), stage)

    def questions(self, code: str, key: str | None = None) -> list[Question]:
        code = codes.normalise_code(code)
        with self._r.pipeline(transaction=True) as p:
            p.hmget(_room(code), "key_hash", "last_active").hgetall(_questions(code)).smembers(_revealed(code))
            (stored, last), bodies, revealed, stages = p.hgetall(_stages(code)).execute()
        self._live(code, last)
        found = sorted(
            (
                questions.question_from_json(body, int(qid), qid in revealed, stages.get(qid))
                for qid, body in bodies.items()
            ),
            key=lambda q: q.id,
        )
        lecturer = codes.is_lecturer(stored, key)
        return [q if lecturer or q.revealed else questions.hidden(q) for q in found]

    def answer(self, code: str, question_id: int, student_id: str, value: Value) -> None:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        q = self._question(code, question_id)  # checks the room is live, in the same round trip
        if not q.open:
            raise RefusedError(REVEALED if q.revealed else SHOWN)
        value = questions.check_answer(q, value)
        stage = questions.stage_text(q.round, q.shown)
        encoded = questions.encode_value(value)
        self._run("answer", code, q.id, student_id, encoded, MAX_SEATS, stage, question_id=question_id)

    def my_answer(self, code: str, question_id: int, student_id: str, round_: int | None = None) -> Value | None:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        round_ = questions.check_round(self._question(code, question_id), round_)
        value = self._r.hget(_answers(code, question_id, round_), student_id)
        return None if value is None else questions.decode_value(value)

    def tally(self, code: str, question_id: int, key: str | None = None, round_: int | None = None) -> Tally:
        code = codes.normalise_code(code)
        stored, last = self._r.hmget(_room(code), "key_hash", "last_active")
        self._live(code, last)
        q = self._question(code, question_id)
        round_ = questions.check_round(q, round_)
        if not q.readable(round_):
            codes.check_key(stored, key)
        values = [questions.decode_value(v) for v in self._r.hvals(_answers(code, question_id, round_))]
        return questions.tally_of(q, values, round_)

    def _stage(self, code: str, key: str, question_id: int, moved: Callable[[Question], tuple[int, frozenset]]) -> None:
        """Set question ``question_id``'s stage to ``moved(question)`` (round, shown rounds), unless it is that."""
        code, hash_ = codes.normalise_code(code), _key_arg(key)
        self._lecturer_only(code, key)
        q = self._question(code, question_id)
        if q.revealed:
            raise RefusedError(REVEALED)
        now, then = questions.stage_text(q.round, q.shown), questions.stage_text(*moved(q))
        if now != then:
            self._run("stage", code, hash_, q.id, now, then, question_id=question_id)

    def show(self, code: str, key: str, question_id: int) -> Tally:
        try:
            self._stage(code, key, question_id, lambda q: (q.round, q.shown | {q.round}))
        except RefusedError as err:
            if str(err) != REVEALED:
                raise
        return self.tally(code, question_id, key)

    def vote_again(self, code: str, key: str, question_id: int) -> Question:
        def next_round(q: Question) -> tuple[int, frozenset]:
            if q.round >= questions.ROUNDS:
                raise RefusedError(LAST_ROUND)
            return q.round + 1, q.shown

        self._stage(code, key, question_id, next_round)
        return self._question(codes.normalise_code(code), question_id)

    def reveal(self, code: str, key: str, question_id: int) -> Tally:
        code = codes.normalise_code(code)
        hash_ = _key_arg(key)
        self._lecturer_only(code, key)  # as in ask: "not the lecturer" comes before a bad question id
        question_id = questions.check_question_id(question_id)
        self._run("reveal", code, hash_, question_id, question_id=question_id)
        return self.tally(code, question_id)

    def close(self, code: str, key: str) -> None:
        code = codes.normalise_code(code)
        self._run("close", code, _key_arg(key))

    def count(self, key: str, window_s: int, add: int) -> int:
        start = int(self._clock() // window_s * window_s)
        bucket = f"{PREFIX}count:{key}@{start}"
        if not add:
            return int(self._r.get(bucket) or 0)
        with self._r.pipeline(transaction=True) as p:
            n, _ = p.incrby(bucket, add).expire(bucket, window_s + 1).execute()
        return n

    def signal_secret(self) -> str:
        self._r.set(SECRET, codes.new_secret(), nx=True)
        return self._r.get(SECRET)

    def disconnect(self) -> None:
        self._r.close()


def _room(code: str) -> str:
    return f"{PREFIX}room:{code}"


def _view(code: str) -> str:
    return f"{_room(code)}:view"


def _questions(code: str) -> str:
    return f"{_room(code)}:questions"


def _revealed(code: str) -> str:
    return f"{_room(code)}:revealed"


def _answers(code: str, question_id: int, round_: int = 1) -> str:
    return f"{_room(code)}:answers:{question_id}" + ("" if round_ == 1 else f":{round_}")


def _stages(code: str) -> str:
    return f"{_room(code)}:stages"


def _key_arg(key: str | None) -> str:
    """What the scripts compare with the stored hash: equal SHA-256 digests (a timing leak of a digest's prefix
    does not help find a key), after check_key's refusal of a missing key."""
    if not isinstance(key, str) or not key:
        codes.check_key("", key)
    return codes.key_hash(key)


def _refusal(reply: str, script: str, code: str, question_id: object) -> RoomError:
    """The exception for a script's error reply (its first word)."""
    if reply == "NOCLASS":
        return no_such_class(codes.format_code(code))
    if reply == "NOTLECTURER":
        return NotLecturerError(WRONG_KEY)
    if reply == "NOQUESTION":
        return no_question(question_id)
    if reply == "REVEALED":
        return RefusedError(REVEALED)
    if reply == "STAGE":
        return RefusedError(MOVED_ON)
    if reply == "LOCKED":
        return RefusedError(LOCKED)
    if reply == "SEATS":
        return too_many("seats", MAX_SEATS)
    if reply == "LIMIT":
        return too_many(*{"create": ("rooms", MAX_ROOMS), "ask": ("questions", MAX_QUESTIONS)}[script])
    if reply in ("READONLY", "MISCONF", "OOM"):  # a replica, a disk that cannot persist, memory full
        return StoreUnavailableError(UNWRITABLE if reply == "READONLY" else DISK_FULL)
    return RoomError(f"The class store refused: {reply[:40]}")
