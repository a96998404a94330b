"""The user's policies on one machine (state.backend local): `<state_dir>/policies`, shared by every process of
the gateway (the proxy, its worker processes, the CLI).

    index.json                  domain → name, domains, documents, statement count (guardian_proxy/policies/README.md)
    statements/<domain>.jsonl   the policy's statements, one JSON object a line
    learned.jsonl               the automatic ingestions (domains and counts, no page text)
    .lock                       writers' lock (flock)

Writes are atomic (a 0600 temporary file and a rename; the statements before the index).
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from pathlib import Path

from ..private import open_append, write_atomic
from ..types import Statement
from .filelock import exclusive
from .policies import Policy, index_json, load_index, statement_json


class LocalPolicies:
    """`<state_dir>/policies`: index.json and statements/<domain>.jsonl, written atomically under `.lock`.
    The change check is the index's (inode, size, mtime): one stat per lookup."""

    check_s = 0.0

    def __init__(self, user_dir: Path):
        self.user_dir = Path(user_dir)
        self.where = str(self.user_dir)
        self._index = os.fspath(self.user_dir / "index.json")

    def stamp(self) -> object:
        try:
            st = os.stat(self._index)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def load(self) -> dict[str, Policy]:
        return load_index(self.user_dir, "user")

    def writing(self) -> AbstractContextManager:
        return exclusive(self.user_dir / ".lock", wait_s=None)

    def statements_file(self, domain: str) -> Path:
        return self.user_dir / "statements" / f"{domain}.jsonl"

    def save(self, policy: Policy, statements: list[Statement], users: dict[str, Policy]) -> None:
        write_atomic(policy.file, "".join(statement_json(s) + "\n" for s in statements))  # before the index
        write_atomic(self.user_dir / "index.json", index_json(list(users.values())))

    def append_log(self, record: dict) -> None:
        with self.writing(), os.fdopen(open_append(self.user_dir / "learned.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
