"""The decision log: JSON Lines, one object per evaluated request, appended and flushed per line.

Fields (see docs/decision-log.md): ts, id, method, scheme, host, path (no query values), recipient,
categories ({name: count}), purposes, basis, evidence (statement ids), L, l_path, u, Sd, Seff, MT,
R, tier, action, start_level, final_level, rounds, latency_ms, explanation, override, rule, flags,
spans ({entity: count}), found (provenance: which recognizer found each span and why, per entity and field path,
never the value), app (the program that sent it: name, pid, exe, kind; or `remote` / `unknown` with why —
guardian_proxy/procinfo.py), plus stage extras (session, turn, cpe …). Never raw values: on top of what it
leaves out, every string of a record passes the one masking function (guardian_proxy/logmask.py), which puts
`[TYPE]` for each value the pattern recognisers find (hosts, paths, query keys, explanations …).

What is written is what was done: a line that could not be written is never kept to be written later; the
caller writes the final decision instead (`defer`: a log-error block is logged as `deny`, with its rule,
once the log can be written again).

Rotation by size: when a line would take the file past `max_bytes`, `decisions.jsonl` becomes
`decisions.jsonl.1` (older ones shift to `.2` … `.<backups>`; the oldest beyond that is deleted), and
rotated files older than `retention_days` are deleted. `read_all` reads the rotated files oldest first.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

from . import logmask
from .logmask import mask
from .private import make_dirs
from .types import Action, Decision, RawRequest

_DATA_SEGMENT = re.compile(r"[%@=+~]|\d{6}")  # encoded text, e-mail, key=value, long numbers
_QUERY_KEY = re.compile(r"[\w.\-\[\]$:]{1,40}")  # a query key that reads as a name (`uid`, `ev`, `a[b]`)
_MASKED_ALREADY = logmask.OWN_FIELDS | {"path"}  # safe_path masks each segment and query key itself
MAX_PENDING = 10_000  # final decisions kept while the log cannot be written (oldest dropped past this)
#: ends a line a short write left torn, so that no reader takes it for a record (even one cut just before "\n")
TORN_END = b"<torn>\n"

logmask.install_console_mask()  # every console line of the package is masked like a log line


def safe_path(url: str, action: Action | None = None) -> str:
    """Path with query keys kept and values dropped: `/collect?uid=&ev=`. With the decision's action, the
    personal values found in the path become their type (`/u/[EMAIL_ADDRESS]/orders`) and segments that
    look like data rather than route names (percent-encoded text, `@`, `=`, runs of 6+ digits) become `…`;
    a path that was not inspected (no `path:` field: extraction failed or did not finish, or the body was
    unreadable) keeps only its first segment (`/u/…`)."""
    s = urlsplit(url)
    path = s.path or "/"
    if action is not None and len(path) > 1:
        field = next((f for f in action.fields if f.path == "path:"), None)
        if field is None or field.text != s.path:
            head = path.split("/", 2)[1]
            path = "/…" if _DATA_SEGMENT.search(head) or len(head) > 40 else \
                f"/{mask(head)}/…" if path.count("/") > 1 else mask(path)
        else:
            for sp in sorted((x for x in action.spans if x.path == "path:"), key=lambda x: -x.start):
                path = path[: sp.start] + f"[{sp.entity}]" + path[sp.end:]
            path = "/".join("…" if _DATA_SEGMENT.search(seg) else mask(seg) for seg in path.split("/"))
    else:
        path = mask(path)
    if not s.query:
        return path
    return path + "?" + "&".join(_query_key(k) + "=" for k, _ in parse_qsl(s.query, keep_blank_values=True))


def _query_key(key: str) -> str:
    """A query key as logged: masked, and `…` unless it reads as a name (a key-less value `?jane@x.com`, a JSON
    query string `?{"email": …}` are data, not keys)."""
    k = mask(key)
    return quote(k, safe="[]$:") if _QUERY_KEY.fullmatch(k) else "…"


MAX_FOUND = 40  # provenance records per decision (the rest are counted in the last one)


def provenance(a: Action) -> list[dict]:
    """Which recognizer found each span and why, one record per (entity, field path, recognizer, reason) with a
    count: `{"entity": "EMAIL_ADDRESS", "at": "json:$.user.email", "by": "key", "why": "key:email+validator",
    "n": 1}`. Never the value: the field path (keys, not values), the recognizer's stable name and its short reason;
    every string still passes the log's masking like the rest of the record."""
    groups: dict[tuple, int] = {}
    for sp in a.spans:
        k = (sp.entity, sp.path[:80], sp.recognizer or "unrecorded", (sp.reason or "")[:80])
        groups[k] = groups.get(k, 0) + 1
    out = [{"entity": e, "at": p, "by": r, "why": w, "n": n} for (e, p, r, w), n in groups.items()]
    if len(out) > MAX_FOUND:
        rest = sum(x["n"] for x in out[MAX_FOUND - 1:])
        out = out[: MAX_FOUND - 1] + [{"entity": "…", "at": "…", "by": "…", "why": "more spans", "n": rest}]
    return out


def record(req: RawRequest, d: Decision) -> dict:
    a = d.six
    lk, rk = d.likelihood, d.risk
    rec = {
        "ts": round(d.ts, 3),
        "id": d.id,
        "method": req.method,
        "scheme": req.scheme,
        "host": req.host,
        "path": safe_path(req.url, a),
        "recipient": a.recipient,
        "role": a.role,
        "site": a.site,  # the registrable domain of the page that made the request (the dashboard's Sites view)
        "categories": dict(a.categories),
        "purposes": list(a.purposes),
        "basis": a.basis,
        "evidence": [s.statement.id for s in d.evidence.statements],
        "transparency": d.evidence.transparency,
        "L": round(lk.value, 4) if lk else None,
        "l_path": lk.path if lk else None,
        "u": round(lk.u, 4) if lk and lk.u is not None else None,
        "Sd": rk.Sd if rk else None,
        "Seff": round(rk.Seff, 4) if rk else None,
        "MT": rk.MT if rk else None,
        "R": round(rk.R, 4) if rk else None,
        "tier": rk.tier if rk else None,
        "action": d.action,
        "start_level": d.start_level,
        "final_level": d.final_level,
        "rounds": d.rounds,
        "latency_ms": round(d.latency_ms, 2),
        "explanation": d.explanation,
        "override": d.override,
        "rule": d.rule,
        "flags": list(a.flags),
        "spans": dict(d.rewrite.span_counts) if d.rewrite else {},
        "found": provenance(a),
    }
    if req.app:  # which program sent it (guardian_proxy/procinfo.py): its name and executable, never its arguments
        rec["app"] = dict(req.app)
    rec.update(d.extra)
    return logmask.mask_record(rec, keep=_MASKED_ALREADY)


class DecisionLog:
    """Append-only JSONL writer; one unbuffered `os.write` per line so a killed process leaves whole lines.

    `max_bytes` 0 never rotates; `backups` rotated files are kept (0: the file is truncated instead);
    `retention_days` (None: no age limit) deletes rotated files by age.

    A write that fails (disk full, `/dev/full`, a removed file) raises and keeps nothing: no buffer holds the
    line to flush it later, so a decision changed because it could not be logged is never written in its
    first form. `defer(rec)` is for that final decision: written now if the log can be written, else kept
    (at most MAX_PENDING, oldest dropped and counted in `dropped`) and written, in order, before the next
    line once writing works again. After a failure the file is reopened by name on the next attempt; a torn
    line left by a short write is ended before the next one (readers skip it)."""

    def __init__(self, path: Path, max_bytes: int = 0, backups: int = 5, retention_days: float | None = None):
        self.path = Path(path)
        self.max_bytes = max(0, int(max_bytes))
        self.backups = max(0, int(backups))
        self.retention_days = retention_days
        make_dirs(self.path.parent)  # a new directory is 0700 (guardian_proxy/private.py)
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._torn = False  # the last write stopped mid-line
        self._pending: list[bytes] = []  # final decisions not yet written
        self.dropped = 0
        self._open()
        self._expire()

    def _open(self) -> None:
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(self._fd)
        self._size = st.st_size
        self._regular = stat.S_ISREG(st.st_mode)  # a device (`--log /dev/null`) is never rotated
        if self._regular and self._size:  # a line torn by a crash: end it, so the next record is a line of its own
            with open(self.path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    self._size += os.write(self._fd, b"\n")

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    @staticmethod
    def _line(rec: dict) -> bytes:
        return (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

    def write(self, rec: dict) -> None:
        """Write one line (after any deferred ones); raises OSError when it cannot, keeping nothing."""
        line = self._line(rec)
        with self._lock:
            self._drain()
            self._put(line)

    def defer(self, rec: dict) -> bool:
        """Write `rec` now if the log can be written, else keep it for the next successful write. Never raises;
        True when it was written now."""
        line = self._line(rec)
        with self._lock:
            try:
                self._drain()
                self._put(line)
                return True
            except OSError:
                self._pending.append(line)
                if len(self._pending) > MAX_PENDING:
                    del self._pending[0]
                    self.dropped += 1
                return False

    def _drain(self) -> None:
        while self._pending:
            self._put(self._pending[0])
            del self._pending[0]

    def _put(self, line: bytes) -> None:
        if self._fd is None:
            self._open()
        if self.max_bytes and self._regular and self._size and self._size + len(line) > self.max_bytes:
            self._rotate()
        data = (TORN_END + line) if self._torn else line
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                if n <= 0:
                    raise OSError(28, "No space left on device")
                view = view[n:]
                self._size += n
                self._torn = len(view) > 0
        except OSError:
            self._close_fd()  # reopened by name on the next attempt
            raise

    def _rotate(self) -> None:
        self._close_fd()
        if self.backups == 0:
            os.truncate(self.path, 0)
        else:
            for f in rotated_files(self.path):  # oldest first: .N → .N+1, dropping those past `backups`
                i = int(f.name.rsplit(".", 1)[1])
                if i >= self.backups:
                    f.unlink(missing_ok=True)
                else:
                    os.replace(f, self._numbered(i + 1))
            os.replace(self.path, self._numbered(1))
        self._torn = False
        self._open()
        self._expire()

    def _numbered(self, i: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{i}")

    def _expire(self) -> None:
        if self.retention_days is None:
            return
        cutoff = time.time() - self.retention_days * 86400
        for f in rotated_files(self.path):
            try:
                if f.stat().st_mtime < cutoff:
                    f.unlink()
            except OSError:
                continue

    def close(self) -> None:
        with self._lock:
            try:
                self._drain()
            except OSError:
                pass
            self._close_fd()


def rotated_files(path: Path) -> list[Path]:
    """`decisions.jsonl.N` … `decisions.jsonl.1` (oldest first), those that exist."""
    path = Path(path)
    found = []
    for f in path.parent.glob(path.name + ".*"):
        suffix = f.name[len(path.name) + 1:]
        if suffix.isdigit():
            found.append((int(suffix), f))
    return [f for _, f in sorted(found, reverse=True)]


def read_all(path: Path) -> Iterator[dict]:
    """The rotated files oldest first, then the live file."""
    for f in [*rotated_files(path), Path(path)]:
        try:
            yield from read(f)
        except FileNotFoundError:
            continue


def read(path: Path) -> Iterator[dict]:
    """Every complete line of a log (a torn last line from a crash is skipped)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue


def tail_lines(path: Path, stop: threading.Event | None = None, poll: float = 0.25) -> Iterator[bytes]:
    """The complete lines appended to a log from now on (raw bytes, newline included); follows the log across a
    rotation or truncation (the new file is read from its start). A partial last line waits for its newline."""
    f = open(path, "rb")
    f.seek(0, 2)
    ino = os.fstat(f.fileno()).st_ino
    buf = b""
    try:
        while stop is None or not stop.is_set():
            chunk = f.readline()
            if chunk:
                buf += chunk
                if not buf.endswith(b"\n"):
                    continue
                line, buf = buf, b""
                yield line
                continue
            try:
                st = os.stat(path)
            except FileNotFoundError:
                time.sleep(poll)
                continue
            if st.st_ino != ino or st.st_size < f.tell():  # rotated or truncated: start the new file
                f.close()
                f = open(path, "rb")
                ino, buf = os.fstat(f.fileno()).st_ino, b""
                continue
            time.sleep(poll)
    finally:
        f.close()
