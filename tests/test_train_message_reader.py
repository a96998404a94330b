"""The message reader's trainer reproduces the shipped reader from the labelled prompt sets (the same threshold, the
same readings): the file in guardian_proxy/models/ is what the script makes, retrained whenever a set is scored."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import bench_prompts as BP  # noqa: E402
import train_message_reader as T  # noqa: E402

from guardian_proxy.session.message_reader import load, message_reader  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_trainer_reproduces_the_shipped_reader(tmp_path, capsys):
    out = tmp_path / "reader.npz"
    assert T.main(["--out", str(out)]) == 0
    assert "threshold" in capsys.readouterr().out
    mine, shipped = load(out), message_reader()
    # one grid step apart at most: another BLAS may move an out-of-fold reading across a step's edge
    assert mine.threshold == pytest.approx(shipped.threshold, abs=0.011)
    texts = [c["text"] for s in ("dev", "holdout22") for c in BP.load(s)]
    assert np.allclose([mine.private(t) for t in texts], [shipped.private(t) for t in texts], atol=0.02)
    with np.load(out) as z:
        assert not set(str(z["sets"]).split(",")) & set(BP.UNSCORED)  # sets not yet scored stay out of training


def test_an_unknown_set_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        T.main(["--hold-out", "no-such-set", "--out", str(tmp_path / "r.npz")])
