"""The top level of the command line: `--version`, `-V`, `-h` (docs/cli.md)."""

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.cli.app import version


def test_version_from_the_installed_distribution():
    for flag in ("--version", "-V"):
        r = CliRunner().invoke(app, [flag])
        assert r.exit_code == 0, r.output
        assert r.output.strip() == f"guardian-proxy {version()}"
    assert version()[0].isdigit()


def test_short_help_at_the_top_and_on_commands():
    top = CliRunner().invoke(app, ["-h"])
    assert top.exit_code == 0 and "Usage" in top.output and "log" in top.output
    sub = CliRunner().invoke(app, ["log", "-h"])
    assert sub.exit_code == 0 and "--action" in sub.output


def test_the_installed_script_answers_version():
    exe = Path(sys.executable).with_name("guardian-proxy")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("guardian-proxy "), out.stderr
