"""Who receives a message (`Norms.relationship`): a partner is an intimate only after a possessive."""

import pytest

from guardian_proxy.agents import default_norms


@pytest.mark.parametrize(("instruction", "relationship"), [
    ("Send my partner a note about the weekend.", "intimate"),
    ("Reply to her partner about the dinner.", "intimate"),
    ("Send my business partner Mark Harrison an email with our insights.", "unknown"),
    ("Send an update to TechVenture Partners about our latest projects.", "unknown"),
    ("Message my wife about the plans.", "intimate"),
])
def test_partner_is_intimate_only_after_a_possessive(instruction, relationship):
    assert default_norms().relationship(instruction) == relationship
