"""`guardian-proxy sweep`: the published context sweep on a fixed sample of 30 PANORAMA texts.

Full-size numbers (200 texts) and how they were calibrated: factor_tables/README.md.
"""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app

BENCH = Path(__file__).resolve().parents[4] / "shared" / "data" / "bench" / "panorama531.dev.subjects.jsonl"
runner = CliRunner()
FIELDS = {"R_mean", "allow", "transform", "deny", "start_level_mean", "final_level_mean"}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    if not BENCH.exists():
        pytest.skip(f"benchmark data not found at {BENCH}")
    state = tmp_path_factory.mktemp("state")
    sample = state / "sample.jsonl"
    sample.write_text("".join(BENCH.read_text(encoding="utf-8").splitlines(keepends=True)[:30]))
    r = runner.invoke(app, ["sweep", "--input", str(sample), "--likelihood", "0.35", "--likelihood", "0.7",
                            "--likelihood", "0.95"], env={"GUARDIAN_STATE_DIR": str(state)})
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.slow
def test_output_shape(sweep):
    assert set(sweep) == {"0.35", "0.7", "0.95"}
    for by_context in sweep.values():
        assert set(by_context) == {"mild", "medium", "severe"}
        for stats in by_context.values():
            assert FIELDS <= set(stats) and stats["n"] == 30
            assert stats["errors"] == 0, stats  # no stage failed (a fail-mode decision is not the sweep's)
            assert stats["allow"] + stats["transform"] + stats["deny"] == pytest.approx(1, abs=0.002)


@pytest.mark.slow
def test_published_sweep_at_l_07(sweep):
    mild, medium, severe = (sweep["0.7"][c] for c in ("mild", "medium", "severe"))
    # shares (the critical tier, published 0.10 / 0.55, rewrites in mild and denies in medium by design)
    assert mild["allow"] >= 0.9 and medium["transform"] >= 0.9 and severe["deny"] >= 0.995
    for tier, counts in mild["tiers"].items():
        assert counts["allow"] == sum(counts.values()) or tier == "critical", (tier, counts)
    for tier, counts in medium["tiers"].items():
        assert counts["transform"] == sum(counts.values()) or tier == "critical", (tier, counts)
    # mean risk: published 0.119 / 0.413 / 0.909
    assert 0.10 <= mild["R_mean"] <= 0.15
    assert 0.36 <= medium["R_mean"] <= 0.50
    assert severe["R_mean"] == pytest.approx(0.909, abs=0.01)
    assert mild["R_mean"] / medium["R_mean"] == pytest.approx(0.7 * 0.65 * 0.8 * 0.8, abs=0.01)  # no saturation
    assert medium["start_level_mean"] is not None and 2 <= medium["start_level_mean"] <= 4
    assert medium["final_level_mean"] >= medium["start_level_mean"]


@pytest.mark.slow
def test_start_level_rises_across_the_band(sweep):
    levels = [sweep[lk]["medium"]["start_level_mean"] for lk in ("0.35", "0.7", "0.95")]
    assert levels == sorted(levels) and levels[0] <= 2.0 and levels[-1] >= 3.5, levels
    assert sweep["0.35"]["medium"]["transform"] >= 0.9  # near the allow ceiling: still rewritten, gently


@pytest.mark.slow
def test_progress_goes_to_stderr_and_stdout_stays_one_json_object(tmp_path):
    sample = tmp_path / "t.jsonl"
    sample.write_text("".join(json.dumps({"text": f"Jane Doe, jane{i}@example.com, called"}) + "\n" for i in range(3)))
    r = CliRunner().invoke(app, ["sweep", "--input", str(sample), "--context", next(iter(_contexts())), "--progress"],
                           env={"GUARDIAN_STATE_DIR": str(tmp_path)})
    assert r.exit_code == 0, r.output
    assert isinstance(json.loads(r.stdout), dict)
    assert "sweep: 3/3 evaluations" in r.stderr


def _contexts():
    from guardian_proxy.config import load_factor_tables, load_settings

    return load_factor_tables(load_settings().factor_tables_dir).contexts
