"""The guardian's mitmproxy options (`guardian_*`, declared in `load`, read in `configure`) and the rules that make
mitmproxy fail closed at start-up: a bad value, an eager upstream connection, a listen address beyond loopback
without the permissions (guardian_proxy/listen.py) each stop it in one line naming the option."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mitmproxy import ctx, exceptions

from ..domains import split_hostport
from ..listen import MITM_FLAGS, Listen, bind_problem, listen_addresses

log = logging.getLogger("guardian_proxy")


class GuardianOptionsError(exceptions.OptionsError):
    """A guardian option (or a mitmproxy option the guardian needs: listen address, connection strategy) that
    cannot be used; the message names the option and the fix, in one line."""


class _OneLine(logging.Filter):
    """mitmproxy logs an addon's OptionsError at script load as "error in script …" with a traceback; a
    GuardianOptionsError is said in one line instead (the message is the whole story)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, GuardianOptionsError):
            record.msg, record.args, record.exc_info, record.exc_text = "guardian-proxy cannot start: %s", (str(exc),), \
                None, None
        return True


def _one_line_option_errors() -> None:
    script_log = logging.getLogger("mitmproxy.addons.script")
    if not any(isinstance(f, _OneLine) for f in script_log.filters):
        script_log.addFilter(_OneLine())



#: the guardian's options that are numbers: (lowest, highest, what is expected)
NUMBER_OPTIONS = {"guardian_dashboard_port": (0, 65535, "a port number, 0 to 65535 (0: no dashboard)"),
                  "guardian_workers": (0, 256, "a number of worker processes, 0 to 256 (0: threads of this process)")}
#: the guardian's options that are switches
SWITCH_OPTIONS = ("guardian_allow_remote",)
_TRUE, _FALSE = ("true", "1", "yes", "on", ""), ("false", "0", "no", "off")


def option_problem(name: str, value) -> str | None:
    """None when `value` is a good value of the guardian option `name`, else one line naming the option, the value
    and what it takes. `value` as mitmproxy holds it: a list of `--set` strings not converted yet, a string, or
    a value already typed (a number from mitmproxy's config.yaml)."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            return f"{name} given {len(value)} times ({', '.join(map(str, value))}): give it once"
        value = value[0] if value else ""
    if name in NUMBER_OPTIONS:
        low, high, what = NUMBER_OPTIONS[name]
        if value is None or value == "":
            return None if name == "guardian_workers" else f"{name}: expected {what}"
        if isinstance(value, bool):
            return f"{name}={value}: expected {what}"
        try:
            n = int(str(value).strip())
        except ValueError:
            return f"{name}={value}: expected {what}"
        return None if low <= n <= high else f"{name}={value}: expected {what}"
    if name in SWITCH_OPTIONS and not isinstance(value, bool):
        if value is None or str(value).strip().lower() in _TRUE + _FALSE:
            return None
        return f"{name}={value}: expected true or false"
    return None


def listen_rule(specs: list[str], host: str, port: int, allow_remote: bool,
                proxyauth: str | None) -> tuple[str | None, str | None]:
    """The loopback rule (guardian_proxy/listen.py) for mitmproxy's own options: (a listen host to put in place of
    mitmproxy's default, or None; one line refusing to start, or None). mitmproxy listens on every interface by
    default (`listen_host` empty): with no permission to go beyond loopback that becomes 127.0.0.1, as
    `guardian-proxy run`'s default; an address the user gave beyond loopback without the permissions is refused."""
    try:
        addrs = listen_addresses(list(specs), host, port)
    except ValueError:  # a spec mitmproxy itself refuses
        return None, None
    problem = bind_problem(addrs, allow_remote, proxyauth, MITM_FLAGS)
    if problem is None:
        return None, None
    if host == "" and not allow_remote and bind_problem(listen_addresses(list(specs), "127.0.0.1", port), False,
                                                        None, MITM_FLAGS) is None:
        return "127.0.0.1", None
    return None, problem


def bound_problem(bound: list[tuple[str, int]], allow_remote: bool, proxyauth: str | None, wireguard: bool) -> str | None:
    """The loopback rule once more on the addresses mitmproxy really bound (None: it holds)."""
    addrs = [Listen(str(h), int(p), "wireguard" if wireguard else "regular", None) for h, p in bound]
    return bind_problem(addrs, allow_remote, proxyauth, MITM_FLAGS)


def ca_cert_path(confdir: str) -> Path:
    """mitmproxy's CA certificate in its `confdir`."""
    return Path(os.path.expanduser(confdir)) / "mitmproxy-ca-cert.pem"


class Options:
    """`GuardianAddon`'s options (a mixin of mitm/hooks.py `GuardianAddon`): `standalone`, `gateway`, `upstream`
    (mitm/redirect.py), `_running`, `_bad_values` and `_fail` are the addon's."""

    def load(self, loader) -> None:
        """The guardian's mitmproxy options: `--set guardian_…=…` for mitmdump/mitmweb and for
        `guardian-proxy run` alike (which also has its own flags for them)."""
        loader.add_option("guardian_config", str | None, None, "guardian-proxy settings file (YAML).")
        loader.add_option("guardian_state_dir", str | None, None,
                          "State directory: decision log, vault, overrides, learned policies "
                          "(default $GUARDIAN_STATE_DIR or ~/.local/state/guardian-proxy).")
        loader.add_option("guardian_log", str | None, None, "Decision log file (default <state dir>/decisions.jsonl).")
        loader.add_option("guardian_dashboard_port", int, 8081, "Live dashboard on 127.0.0.1:N (0: off).")
        loader.add_option("guardian_redirect_upstream", str | None, None,
                          "Send every request to HOST:PORT, keeping its Host and SNI (tests, benchmarks).")
        loader.add_option("guardian_workers", int | None, None,
                          "Evaluation worker processes (default: the settings' `workers`, one per core; "
                          "0: in threads of this process).")
        loader.add_option("guardian_allow_remote", bool, False,
                          "Listen beyond loopback (needs proxyauth; WireGuard peers authenticate with their keys).")
        if self.standalone:
            _one_line_option_errors()
            self._take_bad_values(loader.master.options)

    def _take_bad_values(self, options) -> None:
        """mitmproxy converts a deferred `--set guardian_…=…` right after `load`, and a value it cannot convert
        (`guardian_workers=abc`) aborts loading the script there, silently: mitmproxy would run without the guardian
        and forward every request undecided. Such a value is taken out of the deferred ones here, kept, and said by
        `configure` (OptionsError), which stops mitmproxy at start-up."""
        deferred = getattr(options, "deferred", None)
        if not isinstance(deferred, dict):
            return
        for name in [k for k in deferred if str(k).startswith("guardian_")]:
            value = deferred[name]
            why = option_problem(name, getattr(value, "val", value))
            if why:
                self._bad_values[name] = why
                del deferred[name]

    def configure(self, updated: set[str]) -> None:
        """Options are read once: the redirect whenever it changes; the rest build the gateway in `running`
        (standalone) and cannot change afterwards (a new state dir mid-run would split the log and the vault).
        A bad value is an OptionsError naming the option: at start-up it stops mitmproxy (one line, see
        `_one_line_option_errors`) and nothing passes meanwhile; later mitmproxy keeps the old value."""
        try:
            self._configure(updated)
        except exceptions.OptionsError as e:
            if self.standalone and not self._running and self.gateway is None:
                self._fail(str(e), log_it=False)  # mitmproxy logs it (one line) and exits at its start-up check
            raise

    def _configure(self, updated: set[str]) -> None:
        o = ctx.options
        if "connection_strategy" in updated and o.connection_strategy != "lazy":
            self._lazy(o)
        if self.standalone and {"listen_host", "listen_port", "mode", "proxyauth", "guardian_allow_remote"} & updated:
            self._loopback(o)
        bad = [why for name, why in self._bad_values.items() if name in updated]
        if bad:
            raise GuardianOptionsError(bad[0])
        if self.standalone:
            self._guardian_values(o, updated)

    def _lazy(self, o) -> None:
        """Eager opens the upstream connection (the tracker sees the user's address and the host name) before the
        request is decided: at start-up it is switched to lazy, later a change is refused."""
        if self._running:
            raise GuardianOptionsError("connection_strategy=eager: guardian-proxy decides a request before its "
                                       "upstream connection opens, it needs connection_strategy=lazy")
        o.update(connection_strategy="lazy")
        log.info("guardian-proxy: connection_strategy=lazy (a request is decided before its upstream connection "
                 "opens)")

    def _loopback(self, o) -> None:
        """The loopback rule on mitmproxy's listen options (`listen_rule`)."""
        host, problem = listen_rule(o.mode, o.listen_host, o.listen_port, o.guardian_allow_remote,
                                    getattr(o, "proxyauth", None) or None)
        if problem:
            raise GuardianOptionsError(problem)
        if host is not None:
            if self._running:  # mitmproxy's default is every interface; it is not put back while running
                raise GuardianOptionsError("refusing to listen on every interface: that needs "
                                           "--set guardian_allow_remote=true and --proxyauth USER:PASS")
            o.update(listen_host=host)
            log.info("guardian-proxy: listening on loopback only (%s); beyond it needs --set "
                     "guardian_allow_remote=true and --proxyauth USER:PASS", host)

    def _guardian_values(self, o, updated: set[str]) -> None:
        """Loaded by mitmproxy: the `guardian_*` values checked, the redirect's address set (mitm/redirect.py), and
        the options the gateway was built from fixed once it is."""
        for name in sorted({"guardian_dashboard_port", "guardian_workers", "guardian_allow_remote"} & updated):
            why = option_problem(name, getattr(o, name))
            if why:
                raise GuardianOptionsError(why)
        if "guardian_redirect_upstream" in updated:
            value = o.guardian_redirect_upstream
            try:
                self.upstream.address = split_hostport(value) if value else None
            except ValueError as e:
                raise GuardianOptionsError(f"guardian_redirect_upstream: {e}") from None
        fixed = {"guardian_config", "guardian_state_dir", "guardian_log", "guardian_dashboard_port",
                 "guardian_workers", "guardian_allow_remote"} & updated
        if fixed and self.gateway is not None:
            raise GuardianOptionsError(f"{', '.join(sorted(fixed))} cannot change while the proxy runs; restart it")
