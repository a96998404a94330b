"""Settings for either state back end (guardian_proxy/state), for tests that run one body over both:
`backend_settings(request, "local"|"redis", tmp_path)` (the redis one takes the `redis_server` and
`redis_prefix` fixtures, so it skips, saying why, where redis-server is missing)."""

from __future__ import annotations

from pathlib import Path

from guardian_proxy.config import load_settings
from guardian_proxy.state import new_key


def key_file(path: Path) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new_key() + "\n")
        path.chmod(0o600)
    return path


def backend_settings(request, backend: str, tmp_path: Path, name: str = "state", suffix: str = "", **extra):
    """Settings whose state dir is tmp_path/<name>; redis: prefix `redis_prefix + suffix`, the key file
    tmp_path/fleet.key (one per test: every store of the test shares it)."""
    if backend == "local":
        return load_settings(state_dir=tmp_path / name, **extra)
    server = request.getfixturevalue("redis_server")
    prefix = request.getfixturevalue("redis_prefix") + suffix
    state = {"backend": "redis", "url": server.url, "prefix": prefix, "key_file": str(key_file(tmp_path / "fleet.key"))}
    state.update(extra.pop("state", {}))
    return load_settings(state_dir=tmp_path / name, state=state, **extra)


def unreachable_settings(tmp_path: Path, timeout_s: float = 0.2):
    """A Redis back end at a port where nothing listens."""
    from tests.support.redis_server import free_port

    return load_settings(state_dir=tmp_path / "state", state={
        "backend": "redis", "url": f"redis://127.0.0.1:{free_port()}/0", "prefix": "down", "timeout_s": timeout_s,
        "key_file": str(key_file(tmp_path / "fleet.key"))})
