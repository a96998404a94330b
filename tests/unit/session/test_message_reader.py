"""The message reader: its words, the shipped model's reading of a question against a message about the user's
people, and a bad file refused by name."""

import numpy as np
import pytest

from guardian_proxy.errors import ModelLoadError
from guardian_proxy.session.message_reader import MessageReader, grams, load, message_reader, words


def test_names_acronyms_and_numbers_are_read_as_their_kind_never_as_themselves():
    assert words("Who were Hakaru Hashimoto and I? NHS rules from 1948.\nExplain") == [
        "who", "were", "NAMEX", "NAMEX", "and", "i", "?", "ACRO", "rules", "from", "NUM", "explain"]
    assert "were NAMEX" in grams("Who were Hakaru Hashimoto")


def test_the_shipped_reader_tells_a_question_about_the_world_from_a_message_about_the_users_people():
    r = message_reader()
    assert 0.0 < r.threshold < 1.0
    assert r.about_the_world("And while you're at it, who were Hakaru Hashimoto and Robert Graves, and what's the "
                             "difference between Hashimoto's thyroiditis and Graves' disease?")
    assert not r.about_the_world("Draft a thank-you note to Liam Byrne for the flowers he sent after the funeral, "
                                 "and ask him to send the invoice for the catering.")
    assert r.private("same text") == r.private("same text")


def test_a_bad_file_is_refused_by_name(tmp_path):
    with pytest.raises(ModelLoadError, match="missing.npz"):
        load(tmp_path / "missing.npz")
    bad = tmp_path / "nan.npz"
    MessageReader(np.zeros(1 << 4, dtype=np.float32), 0.0, 4, 0.3).save(bad)
    with np.load(bad) as z:
        parts = dict(z)
    parts["weight"] = np.full(1 << 4, np.nan, dtype=np.float16)
    np.savez(bad, **parts)
    with pytest.raises(ModelLoadError, match="nan.npz"):
        load(bad)
    with pytest.raises(ValueError):
        MessageReader(np.zeros(8, dtype=np.float32), 0.0, 4, 0.3)  # 8 weights for 16 buckets
    with pytest.raises(ValueError):
        MessageReader(np.zeros(16, dtype=np.float32), 0.0, 4, 1.5)  # a threshold outside (0, 1)
