"""Long texts go through spaCy in pieces (the lock is taken per piece): offsets stay right."""

import random

import pytest

from guardian_proxy.extract.detector import Detector
from guardian_proxy.extract.ner import CHUNK, chunks
from guardian_proxy.types import TextField


def test_chunks_cover_the_text_exactly_and_cut_at_line_or_sentence_ends():
    rnd = random.Random(1)
    for _ in range(100):
        t = "".join(rnd.choice("ab. \nXY") for _ in range(rnd.randint(0, 3 * CHUNK)))
        parts = list(chunks(t))
        assert "".join(p for _, p in parts) == t
        assert all(len(p) <= CHUNK and t[o:o + len(p)] == p for o, p in parts)
    text = ("A sentence here. " * 600)[: 2 * CHUNK]
    assert all(p.endswith(". ") for _, p in list(chunks(text))[:-1])


@pytest.mark.slow
def test_entity_in_a_later_piece_keeps_its_offset():
    filler = "The weather was mild and the meeting went on as planned. " * 300  # > 2 pieces
    text = filler + "Please call Margaret Thompson or write to john.smith@example.com about it."
    spans = Detector().detect([TextField(path="text:", text=text)])
    email = [s for s in spans if s.entity == "EMAIL_ADDRESS"]
    assert email and text[email[0].start:email[0].end] == "john.smith@example.com"
    person = [s for s in spans if s.entity == "PERSON" and s.start > len(filler)]  # found by NER in the last piece
    assert person and text[person[0].start:person[0].end] == "Margaret Thompson"
