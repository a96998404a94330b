"""An overrides file that goes bad while the proxy runs (docs/security.md): the last good list keeps applying
(a deny stays a deny), one warning per change of the file, and the CLI says what is wrong in one line."""

import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import Override, load_settings
from guardian_proxy.errors import ConfigError
from guardian_proxy.overrides import OverrideStore
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import RawRequest

runner = CliRunner()
TRACKER = RawRequest(method="POST", url="https://api.tracker.example/collect",
                     body=json.dumps({"email": "jane.doe@mail.example"}).encode(),
                     headers=[("content-type", "application/json")])


def _gateway(tmp_path: Path) -> Gateway:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
    return Gateway.from_settings(load_settings(cfg), with_log=False)


def _bump(path: Path) -> None:
    """A new mtime even when the edit lands in the same clock tick."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _bad_bytes(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"# \xff\n")
    _bump(path)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _yaml(path: Path) -> None:
    path.write_text("overrides: [{action: deny, domain: tracker.example}\n")
    _bump(path)


def _invalid(path: Path) -> None:
    path.write_text("overrides: [{action: maybe, domain: tracker.example}]\n")
    _bump(path)


def _nested(path: Path) -> None:
    path.write_text("overrides: " + "[" * 5000 + "]" * 5000 + "\n")
    _bump(path)


@pytest.mark.parametrize("corrupt", [_bad_bytes, _directory, _yaml, _invalid, _nested],
                         ids=["bad-bytes", "directory", "yaml", "invalid", "nested"])
def test_a_deny_override_survives_a_corrupted_file(tmp_path, caplog, corrupt):
    gw = _gateway(tmp_path)
    assert gw.evaluate(TRACKER, likelihood=0.2).override is None
    r = runner.invoke(app, ["deny", "tracker.example", "--config", str(tmp_path / "config.yaml")])
    assert r.exit_code == 0, r.output
    d = gw.evaluate(TRACKER, likelihood=0.2)
    assert d.action == "deny" and d.override and d.rule != "extract-error-fail-open"

    corrupt(tmp_path / "overrides.yaml")
    with caplog.at_level(logging.WARNING, logger="guardian_proxy.overrides"):
        for _ in range(3):
            d = gw.evaluate(TRACKER, likelihood=0.2)
            assert d.action == "deny" and d.override == "always deny (domain=tracker.example)", d.explanation
            assert not any(f.startswith("error:") for f in d.six.flags), d.six.flags
    warned = [r for r in caplog.records if "keeping the previous overrides" in r.getMessage()]
    assert len(warned) == 1 and "\n" not in warned[0].getMessage()

    r = runner.invoke(app, ["overrides", "--state-dir", str(tmp_path)])  # the CLI says what is wrong
    assert r.exit_code == 2 and "Traceback" not in r.output and "overrides.yaml" in r.output
    assert len([x for x in r.output.splitlines() if x.strip()]) == 1, r.output


def test_permission_denied_keeps_the_last_good_list(tmp_path, monkeypatch):
    path = tmp_path / "overrides.yaml"
    store = OverrideStore(path)
    store.add(Override(action="deny", domain="tracker.example"))
    assert [o.domain for o in store.current()] == ["tracker.example"]
    if os.geteuid() == 0:  # root reads a 0000 file: make the read fail the way it does for a user
        real = Path.read_bytes

        def denied(self):
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", denied)
    path.chmod(0)
    _bump(path)
    try:
        assert [o.domain for o in store.current()] == ["tracker.example"]
        with pytest.raises(ConfigError, match="Permission denied"):
            OverrideStore(path).listing()
    finally:
        path.chmod(0o600)


def test_a_repaired_file_applies_again(tmp_path):
    path = tmp_path / "overrides.yaml"
    store = OverrideStore(path)
    store.add(Override(action="deny", domain="a.example"))
    assert len(store.current()) == 1
    _bad_bytes(path)
    assert [o.domain for o in store.current()] == ["a.example"]
    path.write_text("overrides: [{action: deny, domain: b.example}]\n")
    _bump(path)
    assert [o.domain for o in store.current()] == ["b.example"]


def test_errors_at_load_are_one_line_naming_the_file(tmp_path):
    path = tmp_path / "overrides.yaml"
    path.write_bytes(b"overrides: [{action: deny, domain: \xff.example}]\n")
    with pytest.raises(ConfigError) as e:
        OverrideStore.for_settings(load_settings(None, state_dir=tmp_path))
    assert str(path) in str(e.value) and "\n" not in str(e.value)
    path.write_text("overrides: [{action: deny, domain: x.example}, {action: level, domain: y.example}]\n")
    with pytest.raises(ConfigError) as e:
        OverrideStore.for_settings(load_settings(None, state_dir=tmp_path))
    assert "entry 2" in str(e.value) and "\n" not in str(e.value)
