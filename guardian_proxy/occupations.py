"""Job nouns: generic English vocabulary for occupations, shared by the narrative recognizers
(extract/quasi_lexicon.py re-exports them) and the self-disclosure rules (self_disclosure.py), which the anonymizer's
guesser reads too and which may not import the extract stage. General knowledge only: no names taken from any
benchmark."""

from __future__ import annotations

OCCUPATIONS = {
    "accountant", "actor", "actress", "administrator", "adviser", "advisor", "agent", "analyst", "architect",
    "artist", "assistant", "attorney", "auditor", "baker", "banker", "barber", "barrister", "bookkeeper",
    "breadwinner", "builder", "butcher", "businessman", "businesswoman", "carpenter", "cashier", "chef",
    "chemist", "cleaner", "clerk", "coach", "consultant", "contractor", "cook", "counsellor", "counselor",
    "courier", "dancer", "dentist", "designer", "developer", "director", "doctor", "driver", "economist",
    "editor", "electrician", "employee", "engineer", "entrepreneur", "executive", "farmer", "firefighter",
    "fisherman", "gardener", "guard", "hairdresser", "herder", "imam", "inspector", "instructor", "janitor",
    "journalist", "judge", "labourer", "laborer", "lawyer", "lecturer", "librarian", "lorry driver",
    "machinist", "manager", "mechanic", "midwife", "miner", "musician", "nanny", "nurse", "officer",
    "operator", "paramedic", "pharmacist", "photographer", "physician", "physiotherapist", "pilot", "plumber",
    "policeman", "policewoman", "politician", "priest", "professor", "programmer", "psychiatrist",
    "psychologist", "publisher", "receptionist", "researcher", "retiree", "sailor", "salesman", "saleswoman",
    "scientist", "secretary", "shopkeeper", "singer", "soldier", "solicitor", "student", "surgeon",
    "tailor", "teacher", "technician", "therapist", "trader", "translator", "tutor", "veterinarian", "waiter",
    "waitress", "watchman", "welder", "worker", "writer", "pupil", "apprentice", "intern", "freelancer",
    "housewife", "homemaker", "caregiver", "carer", "bartender", "barista", "vet", "ceo", "cfo",
    "cto", "rn", "emt", "paralegal", "notary", "bailiff", "gendarme", "conscript", "sergeant", "lieutenant",
    "captain", "colonel", "general", "major", "corporal", "private", "constable", "detective", "mayor",
    "headmaster", "headteacher", "advocate", "practitioner", "principal", "dean", "rector", "curator", "clergyman", "monk", "nun",
}
#: words that only count as an occupation with a modifier in front ("police officer", "research assistant")
WEAK_OCCUPATIONS = {"agent", "assistant", "officer", "operator", "worker", "employee", "director", "general",
                    "major", "private", "principal", "judge", "guard", "executive", "developer", "designer",
                    "captain", "dean", "coach", "trader", "vet"}
