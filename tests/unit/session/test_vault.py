"""The vault: encrypted at rest, key file 0600, survives a restart, wipes, expiry, a lost key."""

import os
import stat
import time

from guardian_proxy.session.registry import SessionState
from guardian_proxy.session.store import SessionStore
from guardian_proxy.session.vault import Vault


def fill(v: Vault, sid="a" * 32):
    s = SessionState(sid=sid, turn=2)
    e = s.add("PERSON", "Quentin Zarkowsky", 1)
    e.surrogate = "Alex Smith"
    s.names["quentin"] = "Alex"
    v.save(sid, s.created, time.time(), s.meta(), [e.to_dict()])
    return s


def test_encrypted_at_rest_and_key_mode(tmp_path):
    v = Vault(tmp_path)
    fill(v)
    v.add_alias("resp_123", "a" * 32)
    v.close()
    assert stat.S_IMODE(os.stat(tmp_path / "vault.key").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "sessions.db").st_mode) == 0o600
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("sessions.db"))
    for secret in (b"Zarkowsky", b"Quentin", b"quentin", b"Alex Smith", b"PERSON", b"resp_123"):
        assert secret not in raw


def test_restart_reads_back_and_wipe(tmp_path):
    v = Vault(tmp_path)
    fill(v)
    v.close()
    v2 = Vault(tmp_path)
    created, last_seen, meta, ents = v2.load("a" * 32)
    assert ents[0]["o"] == "Quentin Zarkowsky" and ents[0]["s"] == "Alex Smith" and meta["names"] == {"quentin": "Alex"}
    assert v2.entity_types("a" * 32) == {"PERSON": 1}
    fill(v2, "b" * 32)
    assert v2.wipe("bbbb") == 1 and v2.load("b" * 32) is None
    assert v2.wipe("%") == 0 and v2.wipe(older_than=time.time() + 1) == 1 and v2.sessions() == []


def test_tampered_rows_are_skipped(tmp_path):
    v = Vault(tmp_path)
    fill(v)
    v._db.execute("UPDATE entities SET blob = X'00112233445566778899AABBCCDDEEFF00'")
    assert v.load("a" * 32)[3] == []


def test_lost_key_moves_the_unreadable_database_aside(tmp_path):
    v = Vault(tmp_path)
    fill(v)
    v.close()
    (tmp_path / "vault.key").unlink()
    v2 = Vault(tmp_path)
    assert v2.sessions() == [] and any(p.name.startswith("sessions.db.unreadable-") for p in tmp_path.iterdir())


def test_store_expiry(tmp_path):
    store = SessionStore(tmp_path, idle_expiry_s=60)
    st = store.state("c" * 32)
    e = st.add("PERSON", "Quentin Zarkowsky", 1)
    st.set_surrogate(e, "Alex Smith")
    store.persist(st)
    assert store.demasker("c" * 32).full("Alex Smith") == "Quentin Zarkowsky"
    st.last_seen -= 120  # idle past the expiry
    assert store.state("c" * 32).entities == {} and store.vault.load("c" * 32) is None
