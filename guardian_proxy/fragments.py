"""Values split across requests: half an e-mail, card number or SSN in one request, the rest in the next.

Each request to a tracker or an unknown third party leaves a few *fragment states* keyed by (client, registrable
domain), kept until the next request there (at most `WINDOW_S` seconds): never the values themselves, only what
is needed to tell whether the next request's fields complete one of them:

    digits    a bare run of 3–12 digits: its length, whether it can open a card number (its first digit is a card
              network's: 2–6) or an SSN (a valid area number), and its two Luhn partial sums
    e-mail    a local part that ends in `@` (or whose domain is not finished: `jane.doe@exa`), or a bare local part
              with a dot or underscore in it (`jane.doe`)

A field that joins several values in one string (`jane.doe@|41111111|536-22`, whatever joins them: `|`, `,`, `;`,
`&`, a JSON array's brackets and quotes, tabs, line ends, or spaces when nothing else does) leaves one state per
value, with its place in the string; a piece of a later string completes only the state at the same place of a
string with as many pieces (`example.com|11111111|1234`). Numbers under a key that names a measurement, a position
or a clock (`screen_width`, `u_h`, `event_index`, `blur_time_ms`: `_MEASURE_WORDS`) are never fragments.

A field of a later request completes a state when the two together are a valid card number (13–19 digits, Luhn,
a network's first digit), an SSN (3+6 or 5+4 digits, area/group/serial valid), or an e-mail (`jane.doe@` +
`example.com`, `jane.doe` + `@example.com`). The completing field then carries that value's span
(`fragment: true` in its flags): the request is decided as if the whole value were in it — rewritten, or
blocked for a tracker — and the decision log says `fragment_reassembly`. Only consecutive requests are paired (pairing any two
numbers sent to a busy API within minutes would find "cards" by chance: one in ten pass Luhn). Splits into three
or more requests, or halves with other requests between them, are not reassembled.

Built with the gateway's settings, the window lives in the shared scratch store (guardian_proxy/state/scratch.py:
<state_dir>/scratch.db, or a Redis key per hashed (client, destination) with a TTL of `WINDOW_S`), so the two
halves pair whichever worker process (or gateway of a fleet) serves each request; the key is a hash of the
client and the destination (an HMAC under the fleet's vault key with Redis), the value the states above.
Built without settings (unit tests), it is in memory. A store that cannot be reached (Redis down or slow) is not
asked again for `DOWN_RETRY_S`: meanwhile each process pairs the requests it serves itself (the in-memory window),
with one warning a minute — a request never waits on a dead store, and the value checks of every single request
are unaffected.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from dataclasses import astuple, dataclass

from .checksums import luhn_sum
from .state import StateUnavailable
from .types import ENTITIES, Action, RawRequest, Span, TextField

log = logging.getLogger("guardian_proxy")

WINDOW_S = 120.0
DOWN_RETRY_S = 5.0
#: recipients watched: the trackers and unknown third parties (a service provider's or AI service's own API is
#: not, and chats are pseudonymised by their session whatever they split)
WATCHED = ("analytics", "ad_network", "data_broker", "social", "unknown_third_party")
MAX_STATES = 32  # per (client, destination)
MAX_WINDOWS = 4096
MAX_FIELD_CHARS = 64
MAX_JOINED_CHARS = 256  # a field that joins several values in one string (`jane.doe@|41111111|536-22`)
MAX_PIECES = 12
_DIGITS = re.compile(r"\d[\d \-]{1,20}\d")
#: what joins values in one string: `|`, `,`, `;`, `&`, a JSON array's brackets and quotes, tabs and line ends
#: (a run of spaces too when no other separator is there; a single space inside a run of digits is the number's own)
# a match that begins with white space begins where its run begins, never inside it (linear on long white space)
_JOINERS = re.compile(r"""(?<!\s)\s+[|,;&\[\]{}"'\t\r\n]+\s*|[|,;&\[\]{}"'\t\r\n]+\s*""")
_PIECE = re.compile(r"""[^|,;&\[\]{}"'\t\r\n]+""")
_WORD = re.compile(r"\S+")
_LOCAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}")
_OPEN_EMAIL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9.\-]{0,60}")
_DOMAIN = re.compile(r"@?(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}")
_TAIL_DOMAIN = re.compile(r"[A-Za-z0-9.\-]{0,60}\.[A-Za-z]{2,24}")
_PROTOCOL_KEYS = re.compile(r"(?:w|h|width|height|x|y|ts|t|time|timestamp|v|ver|version|page|p|n|count|len|"
                            r"size|sz|seq|idx|index|z|rnd|random|cb|cachebuster|_)", re.I)
#: a word of a key that names a measurement, a position or a clock, not a value a person has (`screen_width`,
#: `dsp__windowWidth`, `event_index`, `local_time`, `blur_time_ms`, `u_ah`): its numbers are never fragments
_MEASURE_WORDS = frozenset(
    "w h x y z ah aw width height size sz len length depth dpr ratio screen viewport window scroll offset left top "
    "time ts timestamp date duration elapsed ms sec secs seconds millis latency delay ttl age expires "
    "index idx seq sequence count cnt total page pages version ver v rnd random cb cachebuster nonce "
    "price amount qty quantity difficulty score rank level percent pct".split())
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+\d*|[A-Z]+(?![a-z])\d*")  # `dsp__windowWidth` → dsp window Width; `x1` is one


@dataclass(frozen=True)
class _State:
    kind: str  # "digits" | "email_at" | "local"
    n: int = 0  # digits
    card: bool = False  # the run can open a card number
    ssn: bool = False  # the run can open an SSN (3 or 5 digits, valid area/group)
    luhn0: int = 0  # Luhn sum of the run when its last digit is not doubled
    luhn1: int = 0  # … when it is
    at: float = 0.0
    slot: int = -1  # a piece of a joined string: its place (0, 1 …); -1: the whole field
    of: int = 0  # … and how many pieces that string has


@dataclass(frozen=True)
class _Piece:
    """A field's text, or one value of a field that joins several in one string."""

    text: str
    start: int  # where it starts in the field's text
    key: str | None
    slot: int = -1
    of: int = 0


def _luhn_sums(digits: str) -> tuple[int, int]:
    return luhn_sum(digits), luhn_sum(digits, last_doubled=True)


def _ssn_area(d: str) -> bool:
    return d[:3] not in ("000", "666") and d[0] != "9"


def _measure_key(key: str | None) -> bool:
    if not key:
        return False
    k = key.strip()
    return bool(_PROTOCOL_KEYS.fullmatch(k)) or any(w.lower() in _MEASURE_WORDS for w in _KEY_WORDS.findall(k))


def _digits_of(f) -> str | None:
    text = f.text.strip()
    if not _DIGITS.fullmatch(text) or _measure_key(f.key):
        return None
    d = re.sub(r"\D", "", text)
    return d if 3 <= len(d) <= 16 else None


def _pieces(f: TextField) -> list[_Piece]:
    """The field as one piece, or, when it joins several values in one string (`jane.doe@|41111111|536-22`,
    `["jane.doe@", "41111111"]`, `a;b`, `a b` when no other separator is there), each value with its place."""
    text = f.text
    stripped = text.strip()
    if not stripped:
        return []
    whole = [_Piece(stripped, len(text) - len(text.lstrip()), f.key)] if len(stripped) <= MAX_FIELD_CHARS else []
    if len(text) > MAX_JOINED_CHARS or _DIGITS.fullmatch(stripped):
        return whole
    if _JOINERS.search(stripped):
        found = [(m.start(), m.group()) for m in _PIECE.finditer(text)]
        found = [(i + len(v) - len(v.lstrip()), v.strip()) for i, v in found if v.strip()]
    else:
        found = [(m.start(), m.group()) for m in _WORD.finditer(text)]
    if not 2 <= len(found) <= MAX_PIECES:
        return whole
    return [_Piece(v, i, f.key, k, len(found)) for k, (i, v) in enumerate(found)]


class FragmentWindow:
    """Per (client, destination) window of fragment states; thread-safe, bounded in keys, states and age.
    `settings`: the states go to the shared scratch store of `settings.state` (opened on first use)."""

    def __init__(self, settings=None, window_s: float = WINDOW_S):
        self.window_s = window_s
        self.settings = settings
        self._scratch = None
        self._down_until = 0.0  # monotonic time until which the shared store is not asked again (it failed)
        self._warned = -1e9
        self._windows: OrderedDict[tuple[str, str], list[_State]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, req: RawRequest, action: Action) -> list[Span]:
        """Spans of values this request completes (added to `action` with their categories and the flag
        `fragment_reassembly`); then this request's own fragments join the window."""
        if action.recipient not in WATCHED or (action.site and action.site == action.domain):
            return []
        covered = {s.path for s in action.spans}
        fields = [f for f in action.fields if f.path not in covered and 0 < len(f.text.strip()) <= MAX_JOINED_CHARS
                  and f.path not in ("path:", "host:") and not f.path.startswith("cookie:")]
        if not fields:
            return []
        key = (req.client or "", action.domain)
        found = self._shared(key, fields) if self.settings is not None else self._local(key, fields)
        if found:
            action.spans.extend(found)
            for sp in found:
                action.categories[sp.category] = action.categories.get(sp.category, 0) + 1
            if "fragment_reassembly" not in action.flags:
                action.flags.append("fragment_reassembly")
        return found

    def _pair(self, before: list[_State], fields: list[TextField], now: float) -> tuple[list[Span], list[_State]]:
        """The spans this request's fields complete with the states before it, and the states it leaves: only
        the previous request's fragments are kept (halves are sent one after the other, and pairing any two
        numbers of a busy API within the window would find "cards" by chance: 1 in 10 pass Luhn)."""
        states = [s for s in before if now - s.at <= self.window_s]
        found: list[Span] = []
        for f in fields:
            for piece in _pieces(f):
                entity = self._completes(piece, states)
                if entity is not None:
                    found.append(self._span(f, piece, entity))
        done = {sp.path for sp in found}
        return found, [s for f in fields if f.path not in done for s in self._states(f, now)][-MAX_STATES:]

    def _local(self, key: tuple[str, str], fields: list[TextField]) -> list[Span]:
        now = time.monotonic()
        with self._lock:
            found, states = self._pair(self._windows.get(key, []), fields, now)
            if states:
                self._windows[key] = states
                self._windows.move_to_end(key)
            else:
                self._windows.pop(key, None)
            while len(self._windows) > MAX_WINDOWS:
                self._windows.popitem(last=False)
        return found

    def _shared(self, key: tuple[str, str], fields: list[TextField]) -> list[Span]:
        """One atomic swap: this request's states in, the previous request's out; a second write only when a
        field completed a value (its states are then not kept)."""
        if self._scratch is None:
            from .state import fleet_key, open_scratch

            with self._lock:
                if self._scratch is None:
                    self._mac = fleet_key(self.settings) or b"guardian-fragments"  # a fleet's keys: keyed hashes
                    self._scratch = open_scratch(self.settings, "fragments")
        if time.monotonic() < self._down_until:  # the store failed a moment ago: this process's own window
            return self._local(key, fields)
        try:
            return self._swap(key, fields)
        except StateUnavailable:
            self._down_until = time.monotonic() + DOWN_RETRY_S
            if time.monotonic() - self._warned > 60:
                self._warned = time.monotonic()
                log.warning("guardian-proxy: the shared store does not answer; split values are paired within "
                            "this process only (retrying every %.0f s)", DOWN_RETRY_S)
            return self._local(key, fields)

    def _swap(self, key: tuple[str, str], fields: list[TextField]) -> list[Span]:
        hkey = hmac.new(self._mac, "\x1f".join(key).encode(), hashlib.sha256).hexdigest()[:32]
        now = time.time()
        mine = [s for f in fields for s in self._states(f, now)][-MAX_STATES:]
        before = _decode(self._scratch.swap(hkey, _encode(mine), self.window_s))
        found, states = self._pair(before, fields, now)
        if found:
            self._scratch.put(hkey, _encode(states), self.window_s)
        return found

    @staticmethod
    def _states(f: TextField, now: float) -> list[_State]:
        return [s for p in _pieces(f) for s in FragmentWindow._piece_states(p, now)][-MAX_STATES:]

    @staticmethod
    def _piece_states(p: _Piece, now: float) -> list[_State]:
        text = p.text
        d = _digits_of(p)
        if d is not None and len(d) <= 12:
            s0, s1 = _luhn_sums(d)
            return [_State("digits", len(d), card=d[0] in "23456" and len(d) >= 4,
                           ssn=(len(d) == 3 and _ssn_area(d)) or (len(d) == 5 and _ssn_area(d) and d[3:5] != "00"),
                           luhn0=s0, luhn1=s1, at=now, slot=p.slot, of=p.of)]
        if _OPEN_EMAIL.fullmatch(text) and not _DOMAIN.fullmatch(text.split("@", 1)[1] or "-"):
            return [_State("email_at", at=now, slot=p.slot, of=p.of)]
        if _LOCAL.fullmatch(text) and re.search(r"[A-Za-z]", text) and ("." in text or "_" in text):
            return [_State("local", at=now, slot=p.slot, of=p.of)]
        return []

    @staticmethod
    def _completes(p: _Piece, states: list[_State]) -> str | None:
        """The value `p` completes with one of `states`: a whole field with a whole field's state, a piece of a
        joined string only with the piece at the same place of a string with as many pieces (a tracker that
        splits values in one string sends the rest in the same places; pairing every piece with every other
        would find "cards" by chance)."""
        text = p.text
        d = _digits_of(p)
        for s in reversed(states):
            if (s.slot, s.of) != (p.slot, p.of):
                continue
            if s.kind == "digits" and d is not None:
                n = s.n + len(d)
                if s.card and 13 <= n <= 19:
                    b0, b1 = _luhn_sums(d)
                    head = s.luhn0 if len(d) % 2 == 0 else s.luhn1  # the run's last digit sits len(d)+1 from the end
                    if (head + b0) % 10 == 0:
                        return "CREDIT_CARD"
                if s.ssn and n == 9 and ((s.n == 3 and d[:2] != "00" and d[2:] != "0000")
                                         or (s.n == 5 and d != "0000")):
                    return "US_SSN"
            elif s.kind == "email_at" and _TAIL_DOMAIN.fullmatch(text) and "@" not in text:
                return "EMAIL_ADDRESS"
            elif s.kind == "local" and text.startswith("@") and _DOMAIN.fullmatch(text):
                return "EMAIL_ADDRESS"
        return None

    @staticmethod
    def _span(f: TextField, p: _Piece, entity: str) -> Span:
        cat, direct = ENTITIES[entity]
        return Span(path=f.path, start=p.start, end=p.start + len(p.text), entity=entity, category=cat, score=0.85,
                    text=p.text, direct=direct)


def _encode(states: list[_State]) -> bytes | None:
    return json.dumps([astuple(s) for s in states], separators=(",", ":")).encode() if states else None


def _decode(raw: bytes | None) -> list[_State]:
    if not raw:
        return []
    try:
        return [_State(str(k), int(n), bool(c), bool(ssn), int(l0), int(l1), float(at), int(slot), int(of))
                for k, n, c, ssn, l0, l1, at, slot, of in json.loads(raw)]
    except (ValueError, TypeError):
        return []  # not ours (another version's): no states
