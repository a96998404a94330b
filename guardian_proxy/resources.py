"""Where the shipped data lives: `policies/`, `factor_tables/`, `models/` at the project root and
`guardian_proxy/data/` inside the package. The project is installed editable (`pip install -e .`),
so the top-level folders are found next to the package."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"


def _top(name: str) -> Path:
    env = os.environ.get(f"GUARDIAN_{name.upper()}_DIR")
    return Path(env) if env else PROJECT_ROOT / name


def policies_dir() -> Path:
    return _top("policies")


def factor_tables_dir() -> Path:
    return _top("factor_tables")


def models_dir() -> Path:
    return _top("models")


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
