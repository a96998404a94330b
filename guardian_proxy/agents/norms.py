"""The contextual-integrity norms table (guardian_proxy/data/norms.yaml) and the item classifier.

An *item* is one piece of information an agent observed (a sentence of a tool result). `Norms.classify`
gives its data types with a cue weight each; `Norms.relationship` names who receives a message from the
user's instruction, the tool and its arguments; `Norms.withhold` applies the table: a third party's
information of a sensitive type may only flow to the relationships the table allows for that type.

Information returned to its data subject (`Norms.subjects_own`, `returns_to`): what a record's sender or data
subject (`items.parties_of`: the `from`, `customer`, `name` … of a JSON object, the `From:` line of a block) wrote or
is told about themselves may go back to them, whatever its types: a support agent quoting or answering a customer's
ticket to that customer. The sentences that are about someone else (they name another person or refer to one with a
pronoun, and a sentence after such a one unless it is in the first or second person) are not theirs and stay under
the table. The recipient is them when every recipient of the message is named by one of the party's identities
(the same e-mail address, or the same name of at least two words).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError
from ..placeholders import EMAIL
from ..resources import DATA_DIR

NORMS_FILE = DATA_DIR / "norms.yaml"
_PRONOUN = re.compile(r"\b(he|she|him|her|his|hers|they|them|their)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|i'm|i've)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)
# a text that opens by calling someone by name ("Jane, …", "Hey John, …", "Good morning Mark!"): a message to them
_VOCATIVE = re.compile(r"^\W*(?:(?:hi|hey|hello|dear|good (?:morning|afternoon|evening))\s+)?([A-Z][a-z]+)\s*[,!:]",
                       re.I)
_TITLED = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof)\.?\s+[A-Z][a-z]+")
_CAPITAL = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_PAIR = re.compile(r"\b([A-Z][a-z]+)\s+(?=([A-Z][a-z]+)\b)")  # overlapping: "Thursday Emily Carter" holds a pair
_CALENDAR = re.compile(r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|"
                       r"august|september|october|november|december)$", re.I)
_NAME_WORD = re.compile(r"[^\W\d_][^\W\d_'.-]*(?:['.-][^\W\d_]+)*")
_TOOL_RELATIONSHIP = [
    (re.compile(r"(CreatePost|Tweet|PublishPost|Post$)", re.I), "public"),
]


class DataType(BaseModel):
    model_config = ConfigDict(extra="forbid")
    weight: float = Field(gt=0)
    cues: list[str]


class NormsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int
    threshold: float = Field(gt=0)
    personal_threshold: float = Field(gt=0)
    always: list[str] = Field(default_factory=list)
    strong: list[str] = Field(default_factory=list)
    data_types: dict[str, DataType]
    relationships: dict[str, list[str]]
    allow: dict[str, list[str]]
    own_data: dict[str, list[str]]


def _given(word: str) -> bool:
    """A given name of Faker's English person providers ("Jane", "Mark"; not "However" or "Thursday")."""
    from ..person_names import ENGLISH, faker_names

    return word[:1].isupper() and word.casefold() in faker_names("first_names", locales=ENGLISH)


def vocative(text: str) -> bool:
    """The text opens by calling someone by a given name, after an optional greeting: "Jane, I've updated the
    list", "Hey John, are we still on?", "Dear Mark," ("However, …" names no one)."""
    m = _VOCATIVE.match(text)
    return bool(m) and _given(m.group(1))


def heuristic_persons(text: str) -> int:
    """Cheap count of named people: titled names, capitalised words inside a sentence that are rare as English
    words (wordfreq Zipf < 3.5: "Smithson" — not "Monday" or "Team"), and capitalised pairs after the first character
    ("Emily Carter", also a proper name such as "Harmony Alliance") with no day or month in them ("Thursday The"
    where a subject line meets its body)."""
    from wordfreq import zipf_frequency

    n = len(_TITLED.findall(text)) + sum(
        1 for m in _PAIR.finditer(text[1:]) if not (_CALENDAR.match(m.group(1)) or _CALENDAR.match(m.group(2))))
    for m in _CAPITAL.finditer(text):
        if m.start() > 0 and zipf_frequency(m.group(1).lower(), "en") < 3.5:
            n += 1
    return n


def identities(value: str) -> frozenset[str]:
    """How a text names a person, for `returns_to`: its e-mail addresses and its name, case-folded ("Maria Lopez
    <maria.lopez@example.com>" → both). A name is what is left without the addresses, two to five words of letters
    and nothing else (a first name alone, "Maria", names no one for sure; "Room 4B" is no name)."""
    out = {m.casefold().strip(".") for m in EMAIL.findall(value)}
    rest = re.sub(r"[<>()\[\]\"“”,]|mailto:", " ", EMAIL.sub(" ", value)).split()
    if 2 <= len(rest) <= 5 and all(_NAME_WORD.fullmatch(w) for w in rest):
        out.add(" ".join(w.casefold() for w in rest))
    return frozenset(out)


def addressed(text: str) -> list[frozenset[str]]:
    """The recipients a text (the user's instruction) names by e-mail address, as `identities`."""
    return [frozenset({m.casefold().strip(".")}) for m in dict.fromkeys(EMAIL.findall(text))]


def returns_to(owners: Iterable[str], recipients: list[frozenset[str]]) -> bool:
    """The message goes back to the data subject only: every recipient (each one the `identities` of an address
    value of the call) is named by one of `owners` (a record's sender or subject, the same e-mail address or the same
    name). No recipient, or a recipient that is named otherwise (a channel, another person beside them), is not."""
    owners = frozenset(owners)
    return bool(owners) and bool(recipients) and all(r & owners for r in recipients)


@dataclass
class Classified:
    types: dict[str, float] = field(default_factory=dict)  # data type -> cue weight
    third_party: bool = False  # names another person or refers to one with a pronoun
    own: bool = False  # first person and nobody else: the author's own information
    addressed: bool = False  # speaks to someone ("you", or opens with their name): a message between two people

    @property
    def personal(self) -> bool:
        return self.third_party or self.own


def _compile(words: list[str]) -> re.Pattern:
    return re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{w})" for w in words) + ")", re.I)


class Norms:
    def __init__(self, spec: NormsFile):
        self.spec = spec
        self.threshold = spec.threshold
        self.strong = set(spec.strong)
        unknown = set(spec.allow) - set(spec.data_types)
        if unknown:
            raise ConfigError(f"norms: allow lists unknown data types {sorted(unknown)}")
        self._cues = {name: [re.compile(r"(?<![\w])(?:" + c + ")", re.I) for c in dt.cues]
                      for name, dt in spec.data_types.items()}
        self._rel = {name: _compile(words) for name, words in spec.relationships.items()}

    @classmethod
    def load(cls, path: Path | None = None) -> Norms:
        path = path or NORMS_FILE
        try:
            return cls(NormsFile.model_validate(yaml.safe_load(Path(path).read_text())))
        except (OSError, yaml.YAMLError, ValidationError, re.error) as e:
            raise ConfigError(f"norms table {path}: {e}") from e

    def classify(self, text: str, persons: int = 0) -> Classified:
        """Cue weights per data type (each distinct cue counts once) and whether the text is about a
        person: one it names (`persons` from the detector), one a pronoun refers to, or its author."""
        c = Classified()
        for name, pats in self._cues.items():
            hits = sum(1 for p in pats if p.search(text))
            if hits:
                c.types[name] = hits * self.spec.data_types[name].weight
        c.third_party = persons > 0 or bool(_PRONOUN.search(text))
        c.own = not c.third_party and bool(_FIRST_PERSON.search(text))
        c.addressed = bool(_SECOND_PERSON.search(text)) or vocative(text)
        return c

    def relationship(self, instruction: str, tool: str = "", arguments: str = "") -> str:
        for pat, rel in _TOOL_RELATIONSHIP:
            if pat.search(tool):
                return rel
        text = f"{instruction} {arguments}"
        best, pos = "unknown", None
        for name, pat in self._rel.items():
            m = pat.search(text)
            if m and (pos is None or m.start() < pos):
                best, pos = name, m.start()
        return best

    def withhold(self, c: Classified, relationship: str, personal: bool | None = None) -> list[str]:
        """The data types of an item that must not flow to this relationship. Information about a person
        counts from `personal_threshold`; impersonal text (general knowledge, announcements) only for the
        `always` types (identifiers, credentials) from `threshold`."""
        personal = c.personal if personal is None else personal
        if personal:
            types = [t for t, w in c.types.items() if w >= self.spec.personal_threshold]
        else:
            types = [t for t, w in c.types.items() if t in self.spec.always and w >= self.threshold]
        if not types:
            return []
        if c.own and not c.third_party and relationship in self.spec.own_data.get("allow", []):
            return []
        return [t for t in types if relationship not in self.spec.allow.get(t, [])]

    def subjects_own(self, texts: list[str], parties: Iterable[str],
                     persons: Callable[[str], int] = heuristic_persons) -> list[bool]:
        """Per sentence of a record that `parties` sent or that is about them: is it theirs, so that it may go back
        to them (`returns_to`)? Not when it is about someone else: it names a person other than them (their own
        names do not count) or refers to one with a pronoun; nor a sentence after such a one, unless it speaks in
        the first or second person ("Carlos has cancer. The chemo is on Tuesdays." is Carlos's)."""
        # their names: the capitalised words of a party value of at most five words ("Maria Lopez <maria@…>")
        names = {w for p in parties for w in _NAME_WORD.findall(EMAIL.sub(" ", p))
                 if w[:1].isupper() and len(w) > 1 and len(EMAIL.sub(" ", p).split()) <= 5}
        mine = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b") if names else None
        out, other = [], False
        for text in texts:
            scrubbed = mine.sub(" ", text) if mine else text
            c = self.classify(scrubbed, persons(scrubbed))
            other = other or c.third_party
            out.append(not c.third_party and (not other or bool(_FIRST_PERSON.search(text) or
                                                                 _SECOND_PERSON.search(text))))
        return out


@lru_cache(maxsize=4)
def default_norms(path: str | None = None) -> Norms:
    return Norms.load(Path(path) if path else None)
