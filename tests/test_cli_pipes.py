"""The CLI in pipes, through the real `guardian-proxy` executable with stdout (and stderr) a pipe or a pty:
data on stdout, messages and progress on stderr; `log`/`stats` never wrapped when piped; JSON one object a
line; flags render and parse as flags; Presidio's unmapped-entity warnings stay off the console."""

from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import httpx
import pytest
import typer.main
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.cli.check import request_url
from guardian_proxy.cli.common import json_line, one_line
from guardian_proxy.cli.progress import BatchProgress

BIN = Path(sys.executable).parent / "guardian-proxy"
#: variables that would change what a console thinks it writes to
_CONSOLE_ENV = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE")
COLOUR_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def env(**extra) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in _CONSOLE_ENV}
    e.update(HF_HUB_OFFLINE="1", TERM="xterm-256color", **extra)
    return e


def cli(*args, stdin: bytes | None = None, timeout: float = 300, **extra_env) -> subprocess.CompletedProcess:
    """The real CLI with stdout and stderr two separate pipes."""
    return subprocess.run([str(BIN), *map(str, args)], input=stdin, capture_output=True, env=env(**extra_env),
                          timeout=timeout)


def cli_tty(*args, tty: str, columns: int = 70, timeout: float = 300) -> tuple[int, bytes, bytes]:
    """The real CLI with `tty` ("stdout" or "stderr") a pseudo-terminal `columns` wide and the other a pipe;
    returns (exit code, what the pipe got, what the terminal got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, tty: slave}
    proc = subprocess.Popen([str(BIN), *map(str, args)], stdin=subprocess.DEVNULL, env=env(), **streams)
    os.close(slave)
    got = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            got.extend(chunk)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    piped = (proc.stderr if tty == "stdout" else proc.stdout).read()
    proc.wait(timeout)
    t.join(10)
    os.close(master)
    return proc.returncode, piped, bytes(got)


def colours(data: bytes) -> set[str]:
    """The colour parameters (30–37, 38;…, 90–97) of the SGR escape codes in `data`."""
    out = set()
    for params in COLOUR_SGR.findall(data.decode("utf-8", "replace")):
        for p in params.split(";"):
            if p and (30 <= int(p) <= 38 or 90 <= int(p) <= 97):
                out.add(p)
    return out


LONG_PATH = "/v1/" + "segment/" * 30 + "end"
LONG_EXPLANATION = "deny by fixture: " + "a reason that goes on and on " * 6 + "to the end"
LONG_HOST = "a-very-long-subdomain-name-for-testing.tracking.example-analytics-provider.com"
RECORDS = [
    {"ts": time.time() - 60, "id": "r1", "action": "deny", "host": LONG_HOST, "method": "POST", "path": LONG_PATH,
     "recipient": "ad_network", "categories": {"financial": 1}, "R": 0.91, "final_level": None,
     "explanation": LONG_EXPLANATION},
    {"ts": time.time() - 30, "id": "r2", "action": "allow", "host": "evil\x1b[2Jhost.example", "method": "GET",
     "path": "/a\nb", "recipient": "first_party", "categories": {}, "R": None,
     "explanation": "first line\u2028second line, café"},
]


@pytest.fixture
def log_path(tmp_path) -> Path:
    p = tmp_path / "decisions.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return p


# ------------------------------------------------------------------------------------------ log and stats


def test_log_piped_is_one_line_per_record_never_wrapped(log_path):
    r = cli("log", "--log", log_path)
    assert r.returncode == 0 and r.stderr == b""
    lines = r.stdout.decode().splitlines()  # splitlines also breaks at U+2028 and \x1c-\x1e, \x85
    assert len(lines) == 2, lines
    assert LONG_HOST + LONG_PATH in lines[0] and LONG_EXPLANATION in lines[0]
    assert "\x1b" not in r.stdout.decode()  # no colour, and the host's escape sequence is shown escaped
    assert "\\x1b[2J" in lines[1] and "/a\\nb" in lines[1] and "first line\\u2028second line, café" in lines[1]


def test_log_json_is_one_object_per_line(log_path):
    r = cli("log", "--log", log_path, "--json")
    assert r.returncode == 0 and r.stderr == b""
    text = r.stdout.decode()
    assert "café" in text  # non-ASCII stays readable
    lines = text.splitlines()
    assert [json.loads(x) for x in lines] == json.loads(json.dumps(RECORDS))


def test_stats_piped_rows_are_never_wrapped(log_path):
    r = cli("stats", "--log", log_path, "--since", "all")
    assert r.returncode == 0 and r.stderr == b""
    rows = [x for x in r.stdout.decode().splitlines() if LONG_HOST in x]
    assert len(rows) == 2  # the destination row and the blocked row, each whole on one line
    assert "ad network" in rows[0] and "0.91" in rows[0] and "financial×1" in rows[1]
    assert "\x1b" not in r.stdout.decode() and "\\x1b[2J" in r.stdout.decode()
    s = cli("stats", "--log", log_path, "--since", "all", "--json")
    assert s.returncode == 0 and len(s.stdout.splitlines()) == 1 and json.loads(s.stdout)["total"] == 2


def test_terminal_keeps_the_pretty_view_and_color_flags_choose(log_path):
    code, err, term = cli_tty("log", "--log", log_path, tty="stdout", columns=70)
    assert code == 0 and err == b""
    shown = term.decode()
    assert colours(term) and LONG_HOST in shown.replace("\r\n", "")
    width = max(len(COLOUR_SGR.sub("", x)) for x in shown.split("\r\n"))
    assert width <= 70  # wrapped at the terminal's width
    code, _, term = cli_tty("stats", "--log", log_path, "--since", "all", tty="stdout", columns=70)
    assert code == 0 and "━" in term.decode() and max(len(COLOUR_SGR.sub("", x)) for x in
                                                       term.decode().split("\r\n")) <= 70
    code, _, term = cli_tty("log", "--log", log_path, "--no-color", tty="stdout")
    assert code == 0 and not colours(term)
    forced = cli("log", "--log", log_path, "--color")  # piped into `less -R`
    assert forced.returncode == 0 and colours(forced.stdout) and len(forced.stdout.splitlines()) == 2


def test_experience_list_prints_its_data_on_stdout(tmp_path):
    r = cli("experience", "list", "--state-dir", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == "0 case(s)" and r.stderr == b""
    j = cli("experience", "list", "--state-dir", tmp_path, "--json")
    assert j.returncode == 0 and json.loads(j.stdout) == []


def test_one_line_and_json_line():
    assert one_line("a\nb\tc\x1b[0m\u2028\x85") == "a\\nb\\tc\\x1b[0m\\u2028\\x85"
    assert one_line("café ✓") == "café ✓"
    line = json_line({"t": "a\u2028b\u2029c\x85d é"})
    assert len(line.splitlines()) == 1 and json.loads(line) == {"t": "a\u2028b\u2029c\x85d é"} and "é" in line


# ------------------------------------------------------------------------------------------ flags in help


def _commands(cmd, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_command_help_renders_flags_as_flags():
    root = typer.main.get_command(app)
    seen = 0
    for path, cmd in _commands(root):
        r = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0, (path, r.output)
        assert "<bool>" not in r.output, (path, r.output)
        for p in cmd.params:  # every bool option is a flag: it takes no value
            if getattr(p, "type_descriptor", None) is not None and p.type_descriptor.annotation is bool:
                assert p.is_flag, (path, p.opts)
        seen += 1
    assert seen >= 20


@pytest.mark.parametrize("args", [[], ["check"], ["log"], ["stats"], ["anonymize"], ["sessions", "wipe"]])
def test_help_through_the_real_cli(args):
    r = cli(*args, "--help", COLUMNS="160")
    assert r.returncode == 0 and r.stderr == b""
    text = r.stdout.decode()
    assert "<bool>" not in text and "--help " in text
    if args in (["log"], ["stats"], ["check"]):
        assert re.search(r"--color\s+--no-color\s+Colour", text) and re.search(r"--json\s+Print", text)
    if args == ["anonymize"]:
        assert re.search(r"--progress\s+--no-progress\s+Show progress", text)


def test_a_flag_takes_no_value(log_path):
    r = cli("log", "--log", log_path, "--json", "true")
    assert r.returncode == 2 and r.stdout == b"" and b"true" in r.stderr


# ------------------------------------------------------------------------------------------ check (fast part)


def test_check_url_positional_or_option():
    assert request_url("https://x.example/a", None) == "https://x.example/a"
    assert request_url(None, "https://x.example/a") == "https://x.example/a"
    assert request_url("x.example/a", "x.example/a") == "http://x.example/a"  # like curl: no scheme is http
    both = cli("check", "https://a.example/", "--url", "https://b.example/")
    assert both.returncode == 2 and both.stdout == b"" and b"two different URLs" in both.stderr
    none = cli("check", "-d", "x")
    assert none.returncode == 2 and none.stdout == b"" and b"give the request URL" in none.stderr


# ------------------------------------------------------------------------------------------ progress (unit)


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_batch_progress_only_on_a_terminal_or_when_asked():
    quiet = _Stream(tty=False)
    with BatchProgress("job", "texts", total=5, stream=quiet) as p:
        for _ in range(5):
            p.advance()
    assert quiet.getvalue() == ""
    asked = _Stream(tty=False)
    with BatchProgress("job", "texts", total=5, show=True, every=2, stream=asked) as p:
        for _ in range(5):
            p.advance()
    got = [re.sub(r", [0-9.]+/s$", "", x) for x in asked.getvalue().splitlines()]
    assert got == ["job: 2/5 texts", "job: 4/5 texts", "job: 5/5 texts"]
    off = _Stream(tty=True)
    with BatchProgress("job", total=3, show=False, stream=off) as p:
        p.advance(3)
    assert off.getvalue() == ""


# ------------------------------------------------------------------------------------------ Presidio noise


def test_presidio_unmapped_entity_warnings_are_filtered():
    import guardian_proxy.extract.ner  # noqa: F401  (installs the filter)

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    lg = logging.getLogger("presidio-analyzer")
    h = Keep()
    lg.addHandler(h)
    try:
        lg.warning("Entity CARDINAL is not mapped to a Presidio entity, but keeping anyway. Add to ...")
        lg.warning("Entity %s is not mapped to a Presidio entity, but keeping anyway.", "MONEY")
        lg.warning("Model en_core_web_lg is not installed. Downloading...")
    finally:
        lg.removeHandler(h)
    assert seen == ["Model en_core_web_lg is not installed. Downloading..."]


# ------------------------------------------------------------------------------------------ slow: models load

TEXTS = [{"id": "a", "text": "Please call Quentin Zarkowsky at +44 20 7946 0958 about the 3 invoices."},
         {"id": "b", "text": "The committee met twice to discuss 12 budget lines."},
         {"id": "c", "text": "Write to q.zarkowsky@example.com before 3 March 2021."}]


@pytest.mark.slow
def test_check_verdict_on_stdout_url_positional_like_curl():
    body = json.dumps({"email": "jane.doe@example.com", "name": "Jane Doe", "note": "3 items, 12 people"})
    r = cli("check", "https://api.example.com/v1/users", "-d", body)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines and lines[0].split()[0] in ("ALLOW", "TRANSFORM", "DENY")
    assert any(x.startswith("categories:") for x in lines)
    assert r.stderr == b""  # no verdict, no Presidio warning, no spinner (stderr is not a terminal)


@pytest.mark.slow
def test_check_json_is_one_line_on_stdout_data_from_stdin():
    body = json.dumps({"email": "jane.doe@example.com"}).encode()
    r = cli("check", "--url", "api.example.com/v1/users", "-d", "@-", "--json", "-H", "content-type: application/json",
            stdin=body)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"" and len(r.stdout.splitlines()) == 1
    out = json.loads(r.stdout)
    assert out["request"] == {"method": "POST", "url": "http://api.example.com/v1/users"}  # -d means POST
    assert out["decision"] in ("allow", "transform", "deny") and "contact" in out["action"]["categories"]


def _anonymize_input(tmp_path) -> Path:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(t) + "\n" for t in TEXTS))
    return src


@pytest.mark.slow
def test_anonymize_progress_on_stderr_when_asked_stdout_only_json(tmp_path):
    r = cli("anonymize", "-i", _anonymize_input(tmp_path), "-o", "-", "--level", "2", "--seed", "t", "--progress")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert [x["id"] for x in rows] == ["a", "b", "c"]
    err = r.stderr.decode()
    assert re.search(r"^anonymize: 3/3 texts, [0-9.]+/s$", err, re.M), err
    assert "is not mapped" not in err


@pytest.mark.slow
def test_anonymize_progress_on_a_terminal_stderr(tmp_path):
    code, out, term = cli_tty("anonymize", "-i", _anonymize_input(tmp_path), "-o", "-", "--level", "2", "--seed", "t",
                              tty="stderr", columns=100)
    assert code == 0, term
    assert [json.loads(x)["id"] for x in out.decode().splitlines()] == ["a", "b", "c"]  # stdout: data only
    assert "anonymize" in term.decode() and "3 texts anonymized" in term.decode()


@pytest.mark.slow
def test_run_console_has_no_presidio_unmapped_entity_warnings(tmp_path):
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port)
    try:
        r = httpx.post("http://support.zendesk.com/api/tickets", proxy=px.url, timeout=120,
                       json={"text": "John Smith has 3 dogs, paid 300 dollars, the 2nd time, 50% of 12 people"})
        assert r.status_code in (200, 403)
        deadline = time.time() + 10
        while not px.log_lines() and time.time() < deadline:
            time.sleep(0.2)
        assert px.log_lines()
    finally:
        px.stop()
        up.close()
    console = px.output.read_text(errors="replace")
    assert "listening on" in console and "is not mapped to a Presidio entity" not in console
