"""`guardian-proxy` command line. Each module registers its commands on `app`."""

from . import check, doctor, env, logs, risk, run, stats  # noqa: F401  (registers commands)
from .anonymize import anonymize as _anonymize  # noqa: F401  (registers anonymize)
from .app import app
from .dashboard import dashboard_cmd as _dashboard  # noqa: F401  (registers dashboard)
from .experience import experience_app  # noqa: F401  (registers experience list|export)
from .policy import policy_app  # noqa: F401  (registers policy add|list|show)
from .sessions import sessions_app  # noqa: F401  (registers sessions list|wipe)
from .state import state_app  # noqa: F401  (registers state new-key|status)

__all__ = ["app"]
