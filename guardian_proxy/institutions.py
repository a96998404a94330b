"""The vocabulary of public bodies: the words that say what kind of body a name is (its head: "Court",
"Ministry"), its rank or field ("Supreme", "Administrative", "Labour"), never its place or name.

Shared by the NER hit filter (extract/hit_filter.py: an institution named only by its function is the setting of
any case, not personal data) and the anonymizer's generalization (anonymize/generalize.py: a named body keeps
these words and loses its name, "the Warsaw Regional Court" → "the [LOCATION] Regional Court").
"""

from __future__ import annotations

INSTITUTION_HEADS = {
    "court", "courts", "tribunal", "government", "governments", "ministry", "minister", "chamber", "section",
    "commission", "commissioner", "board", "office", "prosecutor", "prosecutors", "parliament", "republic",
    "kingdom", "state", "states", "treasury", "council", "committee", "department", "agency", "authority",
    "authorities", "assembly", "house", "lords", "commons", "police", "army", "service", "services", "convention",
    "union", "administration", "inspectorate", "ombudsman", "registry", "registrar", "directorate", "cabinet",
    "senate", "congress", "judiciary", "bar", "embassy", "consulate", "municipality", "prefecture", "governor",
    "presidency", "president", "secretariat", "procuracy", "prosecution", "gendarmerie", "rules", "law", "act",
    "code", "protocol", "charter", "treaty", "constitution", "division", "bench", "panel", "grand",
}

#: what qualifies an institution by its function or rank, never by its place or name
INSTITUTION_WORDS = {
    "supreme", "administrative", "military", "constitutional", "federal", "regional", "district", "high", "higher",
    "appeal", "appeals", "cassation", "instance", "criminal", "civil", "public", "principal", "chief", "general",
    "national", "local", "labour", "labor", "social", "security", "foreign", "affairs", "interior", "internal",
    "justice", "defence", "defense", "finance", "financial", "health", "education", "european", "international",
    "human", "rights", "immigration", "magistrates", "magistrates’", "magistrates'", "county", "provincial",
    "municipal", "assize", "assizes", "crown", "youth", "family", "juvenile", "penal", "penitentiary", "enforcement",
    "central", "lower", "upper", "superior", "ordinary", "special", "disciplinary", "martial", "tax", "customs",
    "commercial", "economic", "economy", "trade", "industry", "agriculture", "environment", "transport", "welfare",
    "pensions", "pension", "insurance", "employment", "work", "legal", "aid", "freedoms", "fundamental",
    "protection", "protocol", "procedure", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
    "eighth", "ninth", "tenth", "grand", "united", "nations", "council", "europe", "secretary", "deputy", "acting",
    "attorney", "solicitor", "advocate", "advocate-general", "prosecutor", "prosecutor’s", "prosecutor's",
    "state", "government", "office", "commonwealth", "federation", "union", "community", "communities",
    "parliamentary", "legislative", "executive", "judicial", "electoral", "election", "elections", "audit",
    "statistics", "statistical", "registration", "land", "lands", "surveys", "planning", "housing", "police",
    "prison", "prisons", "probation", "parole", "review", "inquiry", "investigation", "investigations",
    "constitution", "treaty", "minister", "ministers", "president", "presidential", "prime", "cabinet",
}

#: the field of a specialised body: it says what the person's affair is about (their job, health, pension,
#: military service, school …), so a body named by it is a quasi-identifier, not the setting
SPECIALISED = {
    "military", "martial", "army", "labour", "labor", "insurance", "health", "education", "employment", "defence",
    "defense", "pension", "pensions", "welfare", "social", "tax", "customs", "agriculture", "housing", "prison",
    "prisons", "penitentiary", "probation", "parole", "youth", "juvenile", "family", "commercial", "trade", "industry",
    "transport", "environment", "land", "lands", "audit", "electoral", "election", "elections", "finance",
    "consulate", "embassy", "university", "school",
}
