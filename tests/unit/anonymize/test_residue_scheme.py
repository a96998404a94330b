"""anonymize/residue.py: a public scheme's name is no rare-word residue; a name before a fund's is."""

from guardian_proxy.anonymize.residue import scan


def _rare(text: str) -> list[str]:
    return [c.value for c in scan(text) if c.kind == "rare"]


def test_a_public_schemes_name_is_no_residue():
    assert _rare("The authorities refused to grant him Widow's Bereavement Allowance or equivalent.") == []
    assert _rare("He was not entitled to a Bereavement Payment on that ground.") == []


def test_a_name_before_a_scheme_word_stays_a_cue():
    assert _rare("He met the trustees of the Kowalski Pension Fund in May.") == ["Kowalski"]
    assert _rare("The Kowalski family received a pension.") == ["Kowalski"]
