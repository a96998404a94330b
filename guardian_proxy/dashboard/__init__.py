"""The live dashboard: a loopback-only HTTP server started by `guardian-proxy run` (see service.py, server.py).

Modules: service (Dashboard: lifecycle, publish), server (routes, SSE), security (token, Host/Origin rules),
hub (recent decisions, details, subscribers), stats (aggregates, also used by `guardian-proxy stats`),
detail (the log-safe detail view), block_actions (the block page's buttons), apps (per program), sites, query,
wording (decisions in words), components (model status); overrides set from the page: ../overrides/.
"""

from .service import Dashboard, pac_text

__all__ = ["Dashboard", "pac_text"]
