"""Raw TCP and UDP (not HTTP): a connection is decided on its destination before it opens, each client message
like an opaque body; a blocked one is never sent and its connection is closed (rules `raw-stream-tracker`,
`raw-stream-data`)."""

from __future__ import annotations

import logging

from mitmproxy import ctx
from mitmproxy.proxy import server_hooks

from .flows import WS_KEEP, raw_scheme, stream_raw

log = logging.getLogger("guardian_proxy")


def worth_a_line(decision) -> bool:
    """A raw message's decision is logged (and shown) when it carries personal data or is not allowed; binary
    messages that pass are not one line each (a fail-rule decision is logged whatever: guardian_proxy/evaluator.py)."""
    return decision.action != "allow" or bool(decision.six.personal())


class RawStreams:
    """`GuardianAddon`'s raw-stream hooks (a mixin of mitm/hooks.py `GuardianAddon`): `gateway`, `evaluator`,
    `_refused`, `_until_ready` and `_publish` are the addon's."""

    async def tcp_start(self, flow) -> None:
        """A raw connection is decided on its destination before it opens (one decision line): a tracker's host
        is refused (`raw-stream-tracker`); mitmproxy then never connects (`server_connect`)."""
        if self.gateway is None and not await self._until_ready():  # nothing passes undecided
            self._refused.add(flow.client_conn.id)
            return
        raw = stream_raw(flow)
        decision = await self.evaluator.evaluate(raw)
        if decision.action == "deny":
            self._refused.add(flow.client_conn.id)
        self._publish(raw, decision)

    udp_start = tcp_start

    async def tcp_message(self, flow) -> None:
        """Each client message of a raw connection is read like an opaque body (its readable strings go through
        detection). Raw bytes have no framing to rewrite in: a message that would be rewritten or blocked is not
        sent and the connection is closed (`raw-stream-data`). Logged: messages that carry personal data or are
        blocked; binary messages that pass are not one line each."""
        msg = flow.messages[-1]
        try:
            if not msg.from_client or not msg.content:
                return
            if flow.client_conn.id in self._refused:
                msg.content = b""
                return
            raw = stream_raw(flow, msg.content)
            decision = await self.evaluator.evaluate(raw, log=worth_a_line)
            if worth_a_line(decision):
                self._publish(raw, decision)
            if decision.action != "allow":
                msg.content = b""
                self._refused.add(flow.client_conn.id)
                self._close(flow)
        except Exception as e:  # an undecided message never leaves
            log.warning("guardian: raw %s message to %s not sent (%s)", raw_scheme(flow), flow.server_conn.address,
                        type(e).__name__)
            msg.content = b""
        finally:
            if len(flow.messages) > WS_KEEP:
                del flow.messages[:-WS_KEEP]

    udp_message = tcp_message

    @staticmethod
    def _close(flow) -> None:
        """Close a raw connection (mitmproxy 11 has no kill for TCP flows in transit): cancel its handler."""
        try:
            handler = ctx.master.addons.get("proxyserver").connections.get(flow.client_conn.id)
            if handler is not None:
                task = handler.transports[handler.client].handler
                if task is not None:
                    task.cancel("blocked by guardian-proxy")
        except Exception:  # best effort: every later message of the flow is dropped anyway
            pass

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if data.client.id in self._refused:
            data.server.error = "blocked by guardian-proxy"  # before mitm/redirect.py's hook: it leaves it

    def client_disconnected(self, client) -> None:
        self._refused.discard(client.id)
