"""The experience log: leaks the guard caught although the agent had been given guidance (CDI's
experience-based optimisation collects exactly these: the context cut at the first leaking action).

Stored at `<state_dir>/experience/cases.jsonl.enc`, one Fernet token per line (key in a 0600 file
next to it), because the context is conversation text. `guardian-proxy experience export OUT.jsonl`
decrypts it for training (scripts/train_instructor.py). A decrypted case:

    {"ts": 1764460800.0, "api": "openai_chat",
     "context": [...messages up to and including the latest tool result, as sent upstream...],
     "guidance": "the guidance the agent had", "relationship": "coworker",
     "withheld": ["sentence the norms withheld", ...], "shareable": ["sentence fine to share", ...],
     "leaking_action": {"tool": "GmailSendEmail", "arguments": "{...}"},
     "guarded_action": {"tool": "GmailSendEmail", "arguments": "{...}"},
     "removed": 2, "types": ["health"]}
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from ..resources import ensure_private_dir


def _context(kind: str, data: dict) -> list:
    if kind == "openai_responses":
        return list(data.get("input") or []) if isinstance(data.get("input"), list) else [data.get("input")]
    msgs = list(data.get("messages") or [])
    if kind == "anthropic" and data.get("system"):
        msgs = [{"role": "system", "content": data["system"]}] + msgs
    return msgs


class ExperienceLog:
    """Nothing is written until the first case: the directory and its key are made then (a library caller's
    Gateway with default settings must not write under ~/.local/state by being constructed)."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.path = self.dir / "cases.jsonl.enc"
        self._fernet: Fernet | None = None
        self._lock = threading.Lock()

    @property
    def fernet(self) -> Fernet:
        """The log's key, made (0600, in a private directory) the first time it is needed."""
        with self._lock:
            if self._fernet is None:
                ensure_private_dir(self.dir)
                key_file = self.dir / "key"
                if not key_file.exists():  # written whole, then linked: another process never reads half a key
                    tmp = self.dir / f".key.{os.getpid()}.{threading.get_ident()}"
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    with os.fdopen(fd, "wb") as f:
                        f.write(Fernet.generate_key())
                    try:
                        os.link(tmp, key_file)
                    except FileExistsError:
                        pass  # another process made it just now: theirs is the key
                    finally:
                        tmp.unlink()
                self._fernet = Fernet(key_file.read_bytes().strip())
            return self._fernet

    def record(self, kind: str, context: dict, guidance, tool: str, arguments: str, result) -> None:
        case = {"ts": round(time.time(), 3), "api": kind, "context": _context(kind, context),
                "guidance": guidance.text, "relationship": guidance.relationship,
                "withheld": [j.item.text for j in guidance.withhold], "shareable": [j.item.text for j in guidance.share],
                "leaking_action": {"tool": tool, "arguments": arguments},
                "guarded_action": {"tool": tool, "arguments": result.arguments},
                "removed": result.removed, "types": result.types}
        token = self.fernet.encrypt(json.dumps(case, ensure_ascii=False).encode())
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "ab") as f:
                f.write(token + b"\n")

    def cases(self) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_bytes().splitlines():
            try:
                out.append(json.loads(self.fernet.decrypt(line.strip())))
            except (InvalidToken, ValueError):
                continue  # a torn last line after a crash
        return out
