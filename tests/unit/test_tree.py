"""tests/unit mirrors guardian_proxy: a reader finds the tests of a module beside its path.

The rule, checked on the real tree and on made-up ones:

- every directory under tests/unit mirrors a package: tests/unit/a/b is guardian_proxy/a/b, which holds an
  __init__.py; the directory holds an __init__.py itself (test modules of the same name in two directories
  then cannot collide);
- every tests/unit/<dirs>/test_<name>.py names something in the mirrored package guardian_proxy/<dirs>:
  <name> is a module (<name>.py) or a subpackage (<name>/__init__.py) there, or <module>_<aspect> for one of
  them (test_detector_badinput.py), or the package's own name, alone or with an aspect (tests/unit/bodies/
  test_bodies_formats.py); a top-level module guardian_proxy/<module>.py has its tests in tests/unit/;
- this file is the one exception: it checks the tree and tests no module.

End-to-end tests (real processes, browsers, servers of tests/support) stay in tests/ and are not checked here.
"""

from pathlib import Path

import guardian_proxy

UNIT = Path(__file__).resolve().parent
SRC = Path(guardian_proxy.__file__).resolve().parent


def _names(package: Path) -> set[str]:
    """What a test file in the mirror of `package` may be named after: its modules, its subpackages."""
    names = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    return names | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}


def _names_something(name: str, names: set[str]) -> bool:
    return any(name == n or name.startswith(n + "_") for n in names)


def mismatches(unit: Path, src: Path, exempt: frozenset[Path] = frozenset()) -> list[str]:
    """Each place where `unit` does not mirror the package at `src`, in words (empty: it mirrors)."""
    out = []
    for d in sorted([unit, *(p for p in unit.rglob("*") if p.is_dir() and p.name != "__pycache__")]):
        rel = d.relative_to(unit)
        package, here, there = src / rel, "/".join([unit.name, *rel.parts]), "/".join([src.name, *rel.parts])
        if not (package / "__init__.py").is_file():
            out.append(f"{here}: {there} is no package")
            continue
        if not (d / "__init__.py").is_file():
            out.append(f"{here}: no __init__.py")
        own = {package.name} if rel.parts else set()
        for f in sorted(d.glob("test_*.py")):
            if f in exempt:
                continue
            name = f.stem.removeprefix("test_")
            if not _names_something(name, _names(package) | own):
                out.append(f"{here}/{f.name}: names no module or subpackage of {there}")
    return out


def test_the_unit_tests_mirror_the_source_tree():
    assert mismatches(UNIT, SRC, frozenset({Path(__file__).resolve()})) == []


def _tree(root: Path, files: list[str]) -> None:
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("")


def test_a_made_up_test_file_or_directory_is_named(tmp_path):
    src, unit = tmp_path / "pkg", tmp_path / "unit"
    _tree(src, ["__init__.py", "codec.py", "flow_norms.py", "bodies/__init__.py", "bodies/files.py",
                "bodies/dialects/__init__.py", "bodies/dialects/gemini.py"])
    good = ["__init__.py", "test_codec.py", "test_codec_bomb.py", "test_flow_norms.py", "test_bodies.py",
            "bodies/__init__.py", "bodies/test_files.py", "bodies/test_bodies_formats.py",
            "bodies/test_dialects.py", "bodies/dialects/__init__.py", "bodies/dialects/test_gemini_web.py"]
    _tree(unit, good)
    assert mismatches(unit, src) == []

    _tree(unit, ["test_made_up.py", "test_codecs.py", "test_flow.py", "bodies/test_pkg.py",
                 "nowhere/__init__.py", "nowhere/test_codec.py", "bodies/dialects/deep/__init__.py"])
    (unit / "bodies" / "dialects" / "__init__.py").unlink()
    assert mismatches(unit, src) == [
        "unit/test_codecs.py: names no module or subpackage of pkg",
        "unit/test_flow.py: names no module or subpackage of pkg",
        "unit/test_made_up.py: names no module or subpackage of pkg",
        "unit/bodies/test_pkg.py: names no module or subpackage of pkg/bodies",
        "unit/bodies/dialects: no __init__.py",
        "unit/bodies/dialects/deep: pkg/bodies/dialects/deep is no package",
        "unit/nowhere: pkg/nowhere is no package",
    ]


def test_a_module_that_moved_away_leaves_its_test_named(tmp_path):
    src, unit = tmp_path / "pkg", tmp_path / "unit"
    _tree(src, ["__init__.py", "addon.py"])
    _tree(unit, ["__init__.py", "test_addon.py"])
    assert mismatches(unit, src) == []
    (src / "addon.py").unlink()
    assert mismatches(unit, src) == ["unit/test_addon.py: names no module or subpackage of pkg"]
