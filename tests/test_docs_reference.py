"""The generated references and the rules page follow the code: docs/reference/{config,cli}.md equal what
scripts/gen_reference.py renders from the pydantic settings and the typer app, and every rule docs/rules.md lists
points at code that still defines it, while every stated rule the code writes to the log has an id there."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "rules.md"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_references_are_current():
    stale = [str(p.relative_to(ROOT)) for p, text in _gen().rendered().items()
             if not p.exists() or p.read_text(encoding="utf-8") != text]
    assert not stale, f"stale: {stale}; run .venv/bin/python scripts/gen_reference.py"


def test_config_reference_names_every_setting():
    from guardian_proxy.config import LimitSettings, Settings

    text = (ROOT / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        assert f"| `{name}` |" in text, name
    for name in LimitSettings.model_fields:
        assert f"| `limits.{name}` |" in text, name


def _rule_rows() -> list[list[str]]:
    rows = []
    for line in RULES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| `R-") and len(cells) == 4:
            rows.append(cells)
    return rows


def test_rule_ids_are_unique_and_well_formed():
    ids = [row[0].strip("`") for row in _rule_rows()]
    assert len(ids) >= 20
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"R-[A-Z0-9]+(-[A-Z0-9]+)*", i) for i in ids), ids


def test_every_rule_points_at_code_that_defines_it():
    missing = []
    for row in _rule_rows():
        where = row[3].strip("`")
        path, _, symbol = where.partition(":")
        target = ROOT / path
        if not target.exists():
            missing.append(f"{row[0]}: {path} does not exist")
            continue
        if symbol and not re.search(rf"^\s*(def|class|async def)\s+{re.escape(symbol)}\b|^{re.escape(symbol)}\s*=",
                                    target.read_text(encoding="utf-8"), re.M):
            missing.append(f"{row[0]}: {path} defines no {symbol}")
    assert not missing, "docs/rules.md points at code that moved: " + "; ".join(missing)


def _stated_rules_in_code() -> set[str]:
    """String constants the package assigns as a decision's `rule` (`rule="…"`, `x.rule = "…"`, also in a tuple
    assignment, or a `{"rule": "…"}` a decision is built from); guardian_proxy/testing.py holds the fakes tests use,
    not rules."""
    found: set[str] = set()
    for path in (ROOT / "guardian_proxy").rglob("*.py"):
        if path.name == "testing.py" and path.parent.name == "guardian_proxy":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "rule":
                values = [node.value]
            elif isinstance(node, ast.Dict):
                values = [v for k, v in zip(node.keys, node.values, strict=True)
                          if isinstance(k, ast.Constant) and k.value == "rule"]
            elif isinstance(node, ast.Assign):
                values = []
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and target.attr == "rule":
                        values.append(node.value)
                    elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        values += [v for t, v in zip(target.elts, node.value.elts, strict=False)
                                   if isinstance(t, ast.Attribute) and t.attr == "rule"]
            else:
                continue
            for v in values:
                if isinstance(v, ast.IfExp):
                    values += [v.body, v.orelse]
                elif isinstance(v, ast.Constant) and isinstance(v.value, str):
                    found.add(v.value)
    return found


def test_every_stated_rule_in_the_code_has_an_id():
    logged = " ".join(row[2] for row in _rule_rows())
    found = _stated_rules_in_code()
    assert {"unparsed-high-risk", "chat-session"} <= found  # the scan itself sees the rules
    undocumented = sorted(v for v in found if f"`{v}`" not in logged)
    assert not undocumented, f"stated rules without an id in docs/rules.md: {undocumented}"


def test_files_the_docs_name_exist():
    """A page that names a module, script or test by its path names one that is there (a move updates the docs);
    `*.local.*` files are what a documented command writes (git-ignored), not files of the tree."""
    pages = [p for p in (ROOT / "docs").rglob("*.md") if "reference" not in p.parts] + [ROOT / "README.md"]
    cited = r"(?<![\w/.])((?:guardian_proxy|scripts|tests|contrib)/[\w/.-]*\w\.(?:py|sh|yaml|jsonl|json|md|service)(?:\.gz)?)(?!\w)"
    missing = sorted({f"{page.relative_to(ROOT)}: {path}" for page in pages
                      for path in re.findall(cited, page.read_text(encoding="utf-8"))
                      if ".local." not in path and not (ROOT / path).exists()})
    assert not missing, missing
