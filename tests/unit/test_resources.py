"""guardian_proxy/resources.py: the shipped data is found inside the package (an installed wheel carries it),
`GUARDIAN_<NAME>_DIR` overrides it, and a checkout that still keeps a folder at the top level finds it there."""

from pathlib import Path

import pytest

from guardian_proxy import resources


def test_the_shipped_folders_are_inside_the_package(monkeypatch):
    for name in ("POLICIES", "FACTOR_TABLES", "MODELS"):
        monkeypatch.delenv(f"GUARDIAN_{name}_DIR", raising=False)
    pkg = resources.PACKAGE_DIR
    assert resources.policies_dir() == pkg / "policies" and (pkg / "policies" / "index.json").is_file()
    assert resources.factor_tables_dir() == pkg / "factor_tables"
    assert (pkg / "factor_tables" / "sensitivity.yaml").is_file()
    from guardian_proxy.likelihood import DEFAULT_MODEL

    assert resources.models_dir() == pkg / "models" and (pkg / "models" / DEFAULT_MODEL).is_file()


@pytest.mark.parametrize("name", ["policies", "factor_tables", "models"])
def test_an_environment_variable_points_elsewhere(monkeypatch, tmp_path, name):
    monkeypatch.setenv(f"GUARDIAN_{name.upper()}_DIR", str(tmp_path))
    assert getattr(resources, f"{name}_dir")() == Path(tmp_path)


def _layout(tmp_path: Path, inside: bool, top: bool, checkout: bool = True) -> Path:
    pkg = tmp_path / "guardian_proxy"
    pkg.mkdir()
    if checkout:
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    if inside:
        (pkg / "models").mkdir()
    if top:
        (tmp_path / "models").mkdir()
    return pkg


@pytest.mark.parametrize(("inside", "top", "checkout", "found"), [
    (True, True, True, "inside"),     # the package's copy wins
    (False, True, True, "top"),       # a checkout with the old layout
    (False, True, False, "inside"),   # an install (site-packages): never a folder that happens to sit beside it
    (False, False, True, "inside"),   # nothing anywhere: the package's path, for the error message
])
def test_inside_the_package_first_then_a_checkouts_top_level(monkeypatch, tmp_path, inside, top, checkout, found):
    monkeypatch.delenv("GUARDIAN_MODELS_DIR", raising=False)
    pkg = _layout(tmp_path, inside, top, checkout)
    monkeypatch.setattr(resources, "PACKAGE_DIR", pkg)
    monkeypatch.setattr(resources, "PROJECT_ROOT", tmp_path)
    assert resources.models_dir() == (pkg / "models" if found == "inside" else tmp_path / "models")
