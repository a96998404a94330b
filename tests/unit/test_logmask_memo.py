"""logmask's memo (a dict of masked texts, emptied when full) answers exactly as the recognisers do, never keeps a
raw value, and stays bounded; a record's nested strings pass it as they passed `mask`."""

from guardian_proxy import logmask

TEXTS = ["mail jane.doe@example.com now", "/u/415-555-0187/orders", "plain route words", "ssn 123-45-6789",
         "card 4111.1111.1111.1111", "x" * 600 + " jane@example.com", ""]


def _direct(text: str) -> str:
    """What the recognisers make of `text`, no memo in between."""
    return logmask._mask(text, False) if text and logmask._MAYBE.search(text) else text


def test_memo_answers_as_the_recognisers_and_stays_bounded(monkeypatch):
    monkeypatch.setattr(logmask, "_MEMO_MAX", 3)
    logmask._MEMO.clear()
    first = [logmask.mask(t) for t in TEXTS]
    assert first == [_direct(t) for t in TEXTS]
    assert [logmask.mask(t) for t in TEXTS] == first  # answered from the memo (or after it was emptied)
    assert len(logmask._MEMO) <= 3
    assert all("jane" not in v and "555-0187" not in v and "6789" not in v and "4111" not in v
               for v in logmask._MEMO.values())
    assert first[2] == "plain route words"


def test_record_strings_nested_and_keys_pass_the_same_masking():
    logmask._MEMO.clear()
    rec = {"id": "keep@example.com", "host": "shop.example.com", "n": 3, "ok": True, "none": None,
           "explanation": "mail jane.doe@example.com now",
           "found": [{"entity": "EMAIL_ADDRESS", "at": "json:$.jane.doe@example.com", "n": 1}],
           "categories": {"contact 415-555-0187": 2}}
    for _ in range(2):  # the second pass reads the memo the first filled
        out = logmask.mask_record(rec)
        assert out["id"] == "keep@example.com"  # the proxy's own id, kept
        assert (out["n"], out["ok"], out["none"]) == (3, True, None)
        assert out["explanation"] == _direct(rec["explanation"]) != rec["explanation"]
        assert out["found"] == [{"entity": "EMAIL_ADDRESS", "at": _direct("json:$.jane.doe@example.com"), "n": 1}]
        assert list(out["categories"]) == [_direct("contact 415-555-0187")]
        assert "555-0187" not in str(out) and "jane.doe" not in str(out)
