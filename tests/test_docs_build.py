"""The documentation site builds with `mkdocs build --strict` (mkdocs.yml: every warning — a broken link or anchor,
a page left out of the navigation — is an error), and the README stays a short entry whose links resolve."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 200


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], capture_output=True, text=True, timeout=120)


def test_site_builds_without_a_warning(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "config" / "index.html").is_file()


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is what catches a dead link: a copy of the site with one must not build."""
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    page = tmp_path / "docs" / "limits.md"
    page.write_text(page.read_text() + "\nSee [a page that is not there](no-such-page.md).\n")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_readme_is_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        if "://" in target or target.startswith("#"):
            continue
        assert (ROOT / target.split("#")[0]).exists(), target
