"""Where the shipped data lives: `policies/`, `factor_tables/`, `models/` and `data/`, all inside the package
(guardian_proxy/), so a built wheel (`pip install`, `pipx install .`) carries them and finds them from any
directory. `GUARDIAN_POLICIES_DIR`, `GUARDIAN_FACTOR_TABLES_DIR` and `GUARDIAN_MODELS_DIR` point elsewhere.
A folder missing from the package but present next to it (a checkout with the old layout) is found there."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: the checkout's root in an editable install (scripts, tests); in an installed wheel it is site-packages
PROJECT_ROOT = PACKAGE_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"


def _shipped(name: str) -> Path:
    env = os.environ.get(f"GUARDIAN_{name.upper()}_DIR")
    if env:
        return Path(env)
    inside = PACKAGE_DIR / name
    if not inside.is_dir() and (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / name).is_dir():
        return PROJECT_ROOT / name  # a checkout that still keeps it at the top level
    return inside


def policies_dir() -> Path:
    return _shipped("policies")


def factor_tables_dir() -> Path:
    return _shipped("factor_tables")


def models_dir() -> Path:
    return _shipped("models")


def default_state_dir() -> Path:
    """`$GUARDIAN_STATE_DIR`, else `$XDG_STATE_HOME/guardian-proxy`, else `~/.local/state/guardian-proxy`."""
    env = os.environ.get("GUARDIAN_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "guardian-proxy"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and its missing parents, each 0700 (guardian_proxy/private.py), and make the leaf 0700."""
    from .private import make_dirs

    make_dirs(path)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    return path
