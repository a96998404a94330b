"""The titles of public offices ("Officer", "Inspector", "Procurator", "Registrar" …): an office named by its title
alone ("his Commanding Officer", "the Procurator General") is a function in the story, not a body or a person.

Shared by the NER hit filter (extract/hit_filter.py: such an ORGANIZATION hit is no span) and the anonymizer's residue
scan (anonymize/residue.py: a rare office word, "Procurator", is a public office's vocabulary, not a rare name), which
may not import each other's stage.
"""

from __future__ import annotations

OFFICE_TITLES = frozenset({
    "officer", "officers", "inspector", "counsel", "procurator", "director", "secretary", "secretaries",
    "commissioner", "commander", "governor", "attorney", "advocate", "solicitor", "registrar", "ombudsman", "general",
    "chief", "head",
})
