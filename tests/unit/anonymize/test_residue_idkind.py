"""anonymize/residue.py: the name of a kind of identifier right before its value ("IBAN GB55…") is no rare-word
residue; the same acronym with no value after it, or another acronym, stays a cue."""

from guardian_proxy.anonymize.residue import scan


def _rare(text: str) -> list[str]:
    return [c.value for c in scan(text) if c.kind == "rare"]


def test_a_kind_of_identifier_before_its_value_is_no_residue():
    assert _rare("Transfer the refund to IBAN GB55ZZZZ51578782240427 in the name of Lisa Harris.") == []
    assert _rare("Transfer the refund to IBAN [IBAN_CODE_1] before the end of the month.") == []
    assert _rare("Her SSN: 995-30-9829 was on the form.") == []


def test_the_acronym_alone_or_another_acronym_stays_a_cue():
    assert _rare("An IBAN is needed for the transfer.") == ["IBAN"]
    assert _rare("He was a member of the PKK 1990 cell.") == ["PKK"]
