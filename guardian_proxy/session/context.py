"""Which detected values of a chat request are a person's data, judged by the part of the message each
text sits in and the words around it (docs/design/conversations.md: "pseudonymise identifiers of people, not the facts a
question is about").

The detector (stage 1) sees texts; the dialects know where each text sits: user text, system prompt or
instructions, tool-call arguments, tool results. `PartContext(chat).keep(slot, hit)` drops a hit that is
part of the request's machinery rather than a value a person disclosed. Stated rules (each a property of
the value, its part or its surroundings, never of one service):

1. Hard-rule values (SSN, card, bank account, IBAN) are always kept, except a number-shaped type whose
   text holds no digit at all (`[[ ## question ## ]]` is not an amount).
2. JSON texts (tool-call arguments, JSON tool results): only what lies inside a string *value* can be a
   person's data; keys and the JSON's own syntax are never rewritten, except a key that is an e-mail
   address or a phone number (a map keyed by contact: data by its shape, not a field name).
3. The request's own vocabulary: the names of the functions, tools and agents it declares or calls (and
   their parts: `transfer_to_agent2` → "agent2"), the property names, enum values and constants of their
   schemas, and role names, are not personal values wherever they appear.
4. Markers: text inside a DSPy-style field marker (`[[ ## answer ## ]]`) or a template variable
   (`{question}`, `{{ name }}`) is a field name. A Markdown heading (`### Heading`), a label at a line's
   start (`Email:`, `Question:`) or inline code (`` `answer` ``) is a field name when its words are
   ordinary words, not a person's name.
5. A person or user name must look like one: no digits or underscores or inner capitals in a person's
   name (`agent2`, `get_weather`, `userId`), and a single ordinary English word that is not also a given
   name or surname is not a name ("Respond", "test"; "Mark" or "Grace" stay names). A "person" named like a
   country, or one its words make a place ("its capital is Saipan", "the island of X", "X is the capital of
   …"), is a place (then rule 6 applies); ordinary words before a full name are cut off ("Email
   Margaret Okafor" → "Margaret Okafor"). Five or more CJK characters in a row are a phrase, not a name (such
   names are two to four characters: "获取项目详情", "get project details", is not one).
6. A place, nationality, organisation or date (LOCATION, NRP, ORGANIZATION, DATE) named in a sentence that
   ties no person to it (no name, no "my", "our", "his", "her", "I live/am/was/moved …", no "patient", "son",
   "born", "lives" …) is the subject of a factual question or statement ("the capital of France", "as of
   2017"), not where someone lives or when they were born: it is neither counted nor rewritten. The one asking
   ("help me plan a week in Lisbon", "tell me …", "… for me") ties no one: the place is what the request is
   about, and a made-up town there would have the model plan a trip to nowhere. A value this conversation already replaces stays
   replaced wherever it appears.
7. A name is not a person's where its words make it a product or a work's maker: a software noun or a version
   after it ("my Django app", "Jenkins 2.401.1"), a possessive and a code word ("Docker's COPY"), unless a verb
   hands the noun to the person ("send Tom Baker documentation"); "… by X" after a work ("Pride and Prejudice by
   Jane Austen", "a novel by …") in a sentence that ties no one to X. Stock examples belong to no one
   (`guardian_proxy/placeholders.py`: user@example.com, John Doe, 192.168.1.20, 123456789012), hard-rule types
   excepted.
8. A whole-field container (a search term, a page view: `CONTAINER_ENTITIES`) is never itself a value to
   replace; the values inside it are found on their own.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from ..chatapi import ChatRequest, Slot
from ..person_names import faker_names
from ..placeholders import no_ones
from ..types import CONTAINER_ENTITIES
from .rewrite import HARD_BLOCK, Hit

#: types whose values are numbers or codes: a text without a digit is not one
_DIGITS = frozenset({"AMOUNT", "AGE", "PHONE_NUMBER", "IP_ADDRESS", "CASE_NUMBER", "US_PASSPORT", "US_DRIVER_LICENSE",
                     "US_ITIN", "UK_NHS", "LATLONG", "IBAN_CODE", "ACCOUNT_NUMBER", "US_BANK_NUMBER", "CREDIT_CARD",
                     "US_SSN", "QUANTITY", "MEDICAL_LICENSE"})
_NAMES = frozenset({"PERSON", "USERNAME"})
#: quasi-identifiers that are facts of the world unless a person is tied to them in their sentence
_PLACES = frozenset({"LOCATION", "NRP", "ORGANIZATION", "DATE", "DATE_TIME"})
#: kept whatever their context: values that are identifiers by their shape
_SHAPED = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "IP_ADDRESS", "CREDIT_CARD", "US_SSN", "IBAN_CODE",
                     "US_BANK_NUMBER", "ACCOUNT_NUMBER", "API_KEY", "AUTH_TOKEN", "PRIVATE_KEY", "PASSWORD", "URL",
                     "CRYPTO", "HASHED_IDENTIFIER"})
#: identifiers by shape that a JSON object may be keyed by (a map of contacts): rewritten even in a key
_KEY_DATA = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER"})
_ROLES = frozenset({"user", "assistant", "system", "developer", "tool", "function", "model", "human", "ai", "bot",
                    "chatbot", "ipython", "agent"})
_SCHEMA_NAMES = ("name", "title")
_CALLABLE_KEYS = frozenset({"parameters", "input_schema", "inputSchema", "arguments", "input", "args",
                            "parameter_definitions", "description", "strict", "parametersJsonSchema", "response"})

_MARKER = re.compile(r"\[\[\s*##.*?##\s*\]\]|\{\{[^{}\n]{1,80}\}\}|\{[A-Za-z_][\w.]{0,60}\}")
_CODE = re.compile(r"`[^`\n]{1,80}`")
_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+([^\n]{1,120})$")
_LABEL = re.compile(r"(?m)^[ \t>*\-•]*([A-Za-z][\w ()/&'’.-]{0,40}?)[ \t]*:(?=\s|$)")
#: a run of five or more Han, kana or Hangul characters: Chinese, Japanese and Korean names are two to four
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{5,}")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SPLIT = re.compile(r"[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+|[^\W_]+")
_INNER_CAP = re.compile(r"[a-z][A-Z]")
#: a JSON string (group 1); an escape outside a string is matched alone so that a search after an unclosed quote stays
#: aligned and linear (the plain string pattern restarts at every escaped quote: quadratic on '\\"' * n)
_JSON_STRING = re.compile(r'\\.|("(?:[^"\\]++|\\.)*+")')
_SENTENCE_END = re.compile(r"[.!?\n]")
#: words that tie a sentence's place to a person of the conversation
_TIES = frozenset({"my", "mine", "myself", "our", "ours", "ourselves", "we", "we're", "we've", "he", "him", "his",
                   "she", "hers", "her", "their", "theirs", "i'm", "i've", "i'd", "i'll", "im", "me"})
#: verbs (and "for") whose object "me" is the one asking, not a person whose life the sentence tells: "help me plan a
#: week in Lisbon", "tell me the weather in Oslo", "book a table in Rome for me" ask about the place
_ASKING = frozenset({"help", "tell", "show", "give", "let", "find", "get", "teach", "remind", "explain", "recommend",
                     "suggest", "book", "plan", "write", "draft", "for"})
#: nouns and verbs that name a person or a person's life in the sentence ("the patient was admitted on …",
#: "born in …", "my son's school in …"): they tie a place or date to someone too
_PERSON_WORDS = frozenset({"patient", "patients", "client", "customer", "employee", "applicant", "candidate", "tenant",
                           "resident", "member", "student", "pupil", "child", "children", "son", "daughter", "wife",
                           "husband", "mother", "father", "mom", "mum", "dad", "parent", "parents", "brother",
                           "sister", "friend", "colleague", "coworker", "boss", "manager", "neighbor", "neighbour",
                           "partner", "boyfriend", "girlfriend", "fiancé", "fiance", "kid", "kids", "family", "baby",
                           "grandmother", "grandfather", "born", "birthday", "lives", "lived", "resides", "married",
                           "divorced", "admitted", "discharged", "diagnosed", "hired", "fired", "arrested", "died",
                           "address", "home", "user's", "customer's", "patient's"})
_I_VERBS = frozenset({"live", "lived", "living", "moved", "move", "moving", "born", "grew", "from", "work", "worked",
                      "working", "stay", "stayed", "staying", "visit", "visited", "visiting", "travel", "traveled",
                      "travelled", "travelling", "traveling", "am", "was", "go", "going", "went", "fly", "flying",
                      "flew", "relocated", "reside", "resided", "study", "studied", "studying", "attend",
                      "attended", "left", "returned", "arrive", "arrived", "drive", "drove", "commute"})
_POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your", "mine", "ours", "hers", "theirs", "yours"})
#: verbs of a trip: in a question ("can I travel to Canada?", "should I visit Rome?") the place is what is asked
_TRIP_VERBS = frozenset({"travel", "traveling", "travelling", "go", "going", "fly", "flying", "visit", "visiting",
                         "drive", "stay", "staying"})
#: a noun that names a kind of place, and the words that tie a name to it: "its capital is Saipan", "the island of
#: Saipan", "the town called X"; "Saipan is the capital of …", "X, a town in …"
_PLACE_NOUN = r"(?:capital|city|town|village|island|islands|county|province|state|region|district|port|territory|" \
              r"municipality|suburb|prefecture|borough|commune|parish|oblast|canton|emirate|atoll|archipelago)"
_PLACE_BEFORE = re.compile(r"(?<!\bof the )(?<!\bof a )(?<!\bof its )(?<!\bof this )\b" + _PLACE_NOUN +
                           r"(?:\s+city)?\s+(?:is|was|of|called|named)\s+$|\b" + _PLACE_NOUN + r"\s*:\s*$", re.I)
_PLACE_AFTER = re.compile(r"^(?:\s+(?:is|was)|,)\s+(?:the|a|an)\s+(?:[\w-]+\s+){0,3}?" + _PLACE_NOUN + r"\b", re.I)
#: object pronouns of a request for information ("tell me", "show us") do not tie a place to anyone; "help me
#: plan a week in Lisbon" does (the user's plan)
_FRAME = re.compile(r"\b(?:tell|give|show|teach|explain to)\s+(?:me|us)\b", re.I)
#: what follows a product's name and never a person's (no possessive between): a version ("Django v4", "Django
#: 4.2.1"), a software noun ("my Django app", "the Flask server"; nouns only, never a word that is also a verb of a
#: person: "John logs in", "let Tom build it"); after a possessive, a code word ("Docker's COPY", "React's useEffect")
_PRODUCT_AFTER = re.compile(
    r"^\s+(?:v\d+(?:\.\d+)*\b|\d+\.\d+\.\d+\b|\d+\.x\b|(?i:app|apps|application|applications|project|projects|"
    r"server|servers|container|containers|image|images|cluster|clusters|api|apis|sdk|sdks|cli|library|libraries|"
    r"framework|plugin|plugins|package|packages|module|modules|database|databases|backend|frontend|template|"
    r"templates|migration|migrations|settings|config|configuration|docs|documentation|installation|deployment|"
    r"component|components|extension|extensions|runtime|engine|website|repo|repository|instance|instances|pod|pods|"
    r"workflow|workflows|codebase|orm|daemon|syntax|middleware|endpoint|endpoints|tutorial|tutorials|integration|"
    r"firmware|binary|notebook|notebooks|dashboard|toolkit|toolchain|compiler|interpreter|dependency|dependencies|"
    r"exception|exceptions|schema|schemas|controller|controllers|widget|widgets)\b)"
    r"|^['’]s\s+(?:[A-Z]{2,}\b|[a-z]+[A-Z]\w*|\w+\(|\w*_\w+)")
#: verbs that take a person and then a thing ("send John the docs", "give Anna access"): a noun after the name is
#: the thing given, the name stays a person's
_TWO_OBJECTS = re.compile(r"\b(?:send|sent|give|gave|given|show|showed|shown|email|e-mail|emailed|forward|forwarded|"
                          r"mail|mailed|text|texted|message|messaged|pass|passed|hand|handed|bring|brought|offer|"
                          r"offered|grant|granted|teach|taught|tell|told|ask|asked|lend|lent|sell|sold|pay|paid|owe|"
                          r"get|got|buy|bought|make|made|write|wrote|assign|assigned|ping|pinged|cc|bcc|let)"
                          r"\s+(?:[\w'’]+\s+){0,1}$", re.I)
#: a work and its maker: "Pride and Prejudice by Jane Austen", "a novel by …", "a song written by …", "painted by …"
#: (the sentence must tie no one of the conversation to the name: "a poem by my aunt Jane" is the user's family).
#: Workplace papers ("the Q3 Report by Jane", "a memo written by …") are someone's work, not a published one.
_WORK = r"(?:book|books|novel|novels|poem|poems|poetry|play|plays|song|songs|album|albums|film|films|movie|movies|" \
        r"painting|paintings|essay|essays|paper|papers|article|articles|speech|speeches|lecture|lectures|symphony|" \
        r"opera|sonata|concerto|series|story|stories|biography|memoir|sculpture|theory|theorem|sitcom|comic|" \
        r"comics|manga|trilogy|saga|sonnet|sonnets|ballad|hymn|musical|documentary|podcast|lyrics|masterpiece|" \
        r"bestseller|textbook)"
#: what is asked about a public life: "a biography of Marie Curie", "the paintings of …", "who was …"
_PUBLIC_BEFORE = re.compile(r"\b(?:biography|biographies|life|legacy|reign|presidency|assassination|paintings|poems|"
                            r"novels|songs|symphonies|quotes|speeches|theories|discoveries|inventions|philosophy)\s+of"
                            r"\s+$|\bwho\s+was\s+$", re.I)
#: from a name to the "by" of its work's maker: "Dune by ", "Harry Potter and the Philosopher's Stone by "
#: (not after a verb that hands something to the name: "Email John Smith the Q3 Report by Dana"); it starts after a
#: name's last letter, so a run of spaces is not tried from every position
_TITLE_TO_BY = re.compile(r"(?<=\w)(?:(?:['’]s|\s+(?:and|of|in|on|&))(?:\s+(?:and|of|the|in|on|a|an|&|[A-Z][\w'’:-]*|\d+))"
                          r"{0,8}?)?\s+by\s+")
#: capitalised words that end a workplace paper's or a calendar's name: "due Monday by John", "the Q3 Report by Jane"
_NOT_TITLE = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|" \
             r"July|August|September|October|November|December|Today|Tomorrow|Tonight|Noon|Midnight|Christmas|" \
             r"Easter|Report|Reports|Memo|Proposal|Plan|Notes|Minutes|Spreadsheet|Deck|Presentation|Summary|Review|" \
             r"Budget|Draft|Doc|Document|Email|E-mail|Letter|Invoice|Contract|Update|Analysis|Brief|Agenda|Ticket|" \
             r"Issue|Request|Feedback|Form|Application|Assignment|Homework|Thesis|Submission)"
_AUTHORED = re.compile(r"(?:\b" + _WORK + r"(?:\s+(?:written|composed|directed|performed|sung|recorded|painted|"
                       r"illustrated|narrated|produced))?|\b(?:authored|composed|painted|directed|sung|illustrated|"
                       r"narrated|choreographed|sculpted|starring|coined|invented|discovered)"
                       r"|(?<=[a-z\d)\]])\s+(?!" + _NOT_TITLE + r"\b)[A-Z][a-z][\w'’:-]*|[\"”’*_])\s+by\s+$")


def _given_and_surnames() -> frozenset[str]:
    """Given names and surnames of several languages: a word in this list may be a name even when it is an
    ordinary word ("Mark", "Grace", "Rose")."""
    return faker_names("first_names", "first_names_male", "first_names_female", "last_names")


#: short given names Faker's lists lack that are also ordinary words
_SHORT_NAMES = frozenset({"pat", "ruby", "kit", "ken", "sam", "max", "ben", "dan", "tom", "ted", "ed", "al", "sal"})


@cache
def _countries() -> frozenset[str]:
    """Country and territory names (Faker's address provider, in English)."""
    try:
        from faker.providers.address.en import Provider
    except ImportError:  # pragma: no cover
        return frozenset()
    return frozenset(str(c).casefold() for c in Provider.countries)


@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover
        return 0.0
    return zipf_frequency(word, "en")


#: the last words before a name that say it is a person the user knows ("my daughter", "our neighbours, the")
_KIN_BEFORE = re.compile(r"\b(?:daughter|son|wife|husband|mother|father|mom|mum|dad|brother|sister|friend|colleague|"
                         r"coworker|boss|manager|neighbou?rs?|partner|boyfriend|girlfriend|fianc[ée]e?|cousin|aunt|"
                         r"uncle|niece|nephew|grandmother|grandfather|grandson|granddaughter|landlord|landlady|tenant|"
                         r"teacher|student|doctor|patient|client|roommate|flatmate)s?(?:,|\s)+(?:the\s+|mr\.?\s+|"
                         r"mrs\.?\s+|ms\.?\s+|dr\.?\s+)?$", re.I)


#: words that introduce a person's own name: "my name is …", "Name: …", "call me …", "I'm …" (not "named" or
#: "called": "a cat named Whiskers")
_INTRO_ANY = re.compile(r"(?:\bmy\s+(?:full\s+)?name\s+is|\bmy\s+name['’]s|\bname\s*:|\bcall\s+me)\s+$", re.I)
_INTRO_GIVEN = re.compile(r"(?:\bi\s+am|\bi['’]m|\bthis\s+is|\bit['’]s)\s+$", re.I)
#: words that end an organisation's name: never a person's
_ORG_WORDS = frozenset({"inc", "ltd", "llc", "corp", "corporation", "company", "co", "gmbh", "ag", "sa", "plc", "bank",
                        "union", "university", "college", "school", "hospital", "clinic", "group", "foundation",
                        "association", "institute", "council", "ministry", "department", "agency", "services",
                        "solutions", "systems", "technologies", "partners", "studio", "studios", "labs"})


def _introduced(text: str, h, given: bool = True) -> bool:
    """A span NER typed as something else right after words that introduce a person's name: any capitalised
    words after "my name is", "Name:", "call me"; after "I'm", "this is" only when the first word is a given name
    ("this is Lakeview Credit Union" stays an organisation) and `given` allows it (not for a place: "it's Sydney")."""
    before = text[max(0, h.start - 30):h.start]
    words = _WORD.findall(h.text)
    if not words or len(words) > 4 or not all(w[:1].isupper() for w in words) or \
            any(w.casefold() in _ORG_WORDS for w in words):
        return False
    if _INTRO_ANY.search(before):
        return True
    return given and bool(_INTRO_GIVEN.search(before)) and words[0].casefold() in faker_names(
        "first_names", "first_names_male", "first_names_female")


def _kin_name(text: str, h) -> bool:
    """A span NER typed as an organisation or a group that follows a kinship or role noun and whose words are
    given names or surnames (a family's plural "Abernathys" too)."""
    if not _KIN_BEFORE.search(text[max(0, h.start - 40):h.start]):
        return False
    words = _WORD.findall(h.text)
    names = _given_and_surnames()
    if len(words) == 1 and words[0][:1].isupper() and words[0].endswith("s") and \
            re.search(r"\bthe\s+$", text[max(0, h.start - 6):h.start], re.I):
        return True  # "our neighbours, the Abernathys": a family by its surname
    return bool(words) and len(words) <= 3 and all(
        w.casefold() in names or (w.endswith("s") and w[:-1].casefold() in names) for w in words)


def ordinary(word: str) -> bool:
    """An ordinary English word (Zipf ≥ 3.5) that is not also a given name or surname."""
    w = word.casefold()
    return w not in _given_and_surnames() and w not in _SHORT_NAMES and _zipf(w) >= 3.5


def wordy(text: str) -> bool:
    """Words only, each an ordinary word or a role name: a label, not a name."""
    words = _WORD.findall(text)
    return bool(words) and not any(c.isdigit() or c == "@" for c in text) and \
        all(w.casefold() in _ROLES or ordinary(w) for w in words)


def identifier_parts(name: str) -> set[str]:
    """A function / tool / agent name and its parts (`transfer_to_agent2` → transfer, to, agent2)."""
    out = {name.casefold()}
    for piece in re.split(r"[\s_.:/-]+", name):
        if piece:
            out.add(piece.casefold())
            out.update(p.casefold() for p in _SPLIT.findall(piece) if len(p) >= 2)
    return out


def vocabulary(data) -> set[str]:
    """The request's own identifiers: declared tool / function / agent names, their schemas' property
    names, enum values and constants, and the names of tool calls and results in the history."""
    out: set[str] = set()
    if not isinstance(data, dict):
        return out

    def schema(node, depth: int = 0) -> None:  # a declared tool: every name, property, enum value in it
        if depth > 24:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _SCHEMA_NAMES and isinstance(v, str) and len(v) <= 80:
                    out.update(identifier_parts(v))
                elif k in ("properties", "parameter_definitions") and isinstance(v, dict):
                    for prop in v:
                        out.update(identifier_parts(str(prop)))
                elif k == "enum" and isinstance(v, list):
                    out.update(str(x).casefold() for x in v if isinstance(x, str | int | float) and len(str(x)) <= 80)
                elif k == "const" and isinstance(v, str) and len(v) <= 80:
                    out.add(v.casefold())
                elif k == "required" and isinstance(v, list):
                    out.update(str(x).casefold() for x in v if isinstance(x, str))
                if k not in ("description",):
                    schema(v, depth + 1)
        elif isinstance(node, list):
            for v in node:
                schema(v, depth + 1)

    for key in ("tools", "functions", "toolConfig", "tool_config", "function_declarations", "functionDeclarations",
                "tool_choice", "toolChoice", "response_format", "responseSchema", "text", "generationConfig"):
        if isinstance(data.get(key), dict | list):
            schema(data[key])

    def calls(node, depth: int = 0) -> None:  # the names of tool calls and results in the history
        if depth > 12:
            return
        if isinstance(node, dict):
            name = node.get("name")
            if isinstance(name, str) and len(name) <= 80 and (
                    any(k in node for k in _CALLABLE_KEYS) or node.get("type") in (
                    "function", "tool_use", "function_call", "custom_tool_call", "server_tool_use", "mcp_call")
                    or node.get("role") in ("tool", "function")):
                out.update(identifier_parts(name))
            for k, v in node.items():
                if k not in ("input", "arguments", "args", "text", "output", "result", "response", "data"):
                    calls(v, depth + 1)
        elif isinstance(node, list):
            for v in node:
                calls(v, depth + 1)

    for key in ("messages", "input", "contents", "chat_history"):
        calls(data.get(key))
    return out


def _json_values(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """The character ranges of the string values and of the keys of a JSON text (inside the quotes), or
    None when the text is not a JSON object or array."""
    s = text.lstrip()
    if not s or s[0] not in "{[":
        return None
    import json

    try:
        json.loads(text)
    except ValueError:
        return None
    values, keys = [], []
    for m in _JSON_STRING.finditer(text):
        if m.group(1) is None:
            continue
        j = m.end()
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        (keys if j < len(text) and text[j] == ":" else values).append((m.start() + 1, m.end() - 1))
    return values, keys


def _inside(spans, start: int, end: int) -> bool:
    return any(a <= start and end <= b for a, b in spans)


class PartContext:
    """The keep/drop decision for the hits of one chat request (see the module's rules)."""

    def __init__(self, chat: ChatRequest):
        self.vocab = vocabulary(chat.data) | _ROLES
        self._json: dict[int, list[tuple[int, int]] | None] = {}
        self._marks: dict[int, tuple[list, list]] = {}

    def _structure(self, i: int, text: str) -> tuple[list, list]:
        if i not in self._marks:
            hard = [m.span() for m in _MARKER.finditer(text)]
            soft = [m.span(1) for m in _HEADING.finditer(text)] + [m.span(1) for m in _LABEL.finditer(text)] + \
                [m.span() for m in _CODE.finditer(text)]
            self._marks[i] = (hard, soft)
        return self._marks[i]

    @staticmethod
    def tidy(h: Hit, text: str) -> Hit:
        """A person's name that is a country's is a place ("which country is Micronesia next to"), and so is a
        name its words make one ("its capital is Saipan", "the island of Saipan", "Saipan is the capital of …"); ordinary
        words before a full name are not part of it ("Email Margaret Okafor" → "Margaret Okafor")."""
        if h.entity in ("ORGANIZATION", "NRP", "LOCATION") and not h.part and (
                _introduced(text, h, given=h.entity != "LOCATION") or (h.entity != "LOCATION" and _kin_name(text, h))):
            h.entity = "PERSON"  # "my name is Darnell Okoro", "my daughter Sofia Marchand": NER's type slips
        if h.entity != "PERSON" or h.part:
            return h
        words = _WORD.findall(h.text)
        named = len(words) >= 2 and words[0].casefold() in _given_and_surnames()  # "Rosa Tinoco": a full name
        if h.text.casefold() in _countries() or not named and (
                _PLACE_BEFORE.search(text[max(0, h.start - 40):h.start]) or _PLACE_AFTER.match(text[h.end:h.end + 60])):
            h.entity = "LOCATION"
            return h
        words = list(_WORD.finditer(h.text))
        k = 0
        while len(words) - k > 2 and len(words[k].group(0)) > 1 and ordinary(words[k].group(0)):  # "J." an initial
            k += 1
        if k:
            cut = words[k].start()
            h.start, h.text = h.start + cut, h.text[cut:]
        return h

    def keep(self, i: int, slot: Slot, h: Hit, persons: list[Hit] = (), known: bool = False) -> bool:
        """Whether hit `h` of slot `i` is a person's value (`why_not` gives None)."""
        return self.why_not(i, slot, h, persons, known) is None

    def why_not(self, i: int, slot: Slot, h: Hit, persons: list[Hit] = (), known: bool = False) -> str | None:
        """None when hit `h` of slot `i` is a person's value, else why it is left as typed, in a few words that
        name the rule (the decision log counts them: `kept`). `known`: a value this conversation already
        replaces, found again (the place rule does not undo it: it stays replaced everywhere). Hits are
        tidied first (`tidy`: a country's name becomes a place, leading ordinary words are cut off)."""
        text = slot.text
        if not known:
            self.tidy(h, text)
        value = h.text
        if h.entity in _DIGITS and not any(c.isdigit() for c in value):
            return "no digit"
        if h.entity in HARD_BLOCK:
            return None
        if h.entity in CONTAINER_ENTITIES:
            return "container"
        if no_ones(h.entity, value):
            return "stock example"
        if i not in self._json:
            self._json[i] = _json_values(text)
        found = self._json[i]
        if found is not None and not _inside(found[0], h.start, h.end):
            # a key, or the JSON's syntax; a key that is an e-mail address or a phone number is data by its shape
            return None if h.entity in _KEY_DATA and _inside(found[1], h.start, h.end) else "JSON key"
        if value.casefold() in self.vocab:
            return "the request's vocabulary"
        if h.entity in _SHAPED:
            return None
        hard, soft = self._structure(i, text)
        if _inside(hard, h.start, h.end) or (_inside(soft, h.start, h.end) and wordy(value)):
            return "field name"
        if h.entity in _NAMES and not h.part:
            if h.entity == "PERSON" and (any(c.isdigit() or c == "_" for c in value) or _INNER_CAP.search(
                    value.replace("Mc", "").replace("Mac", "").replace("De", "").replace("La", ""))):
                return "not a name's shape"
            if h.entity == "PERSON" and _CJK_RUN.search(value):
                return "not a name's shape"  # five or more CJK characters in a row are a phrase ("获取项目详情")
            if h.entity == "PERSON" and " " not in value.strip() and re.match(r"\s+to\s*:", text[h.end:h.end + 8]):
                return "field name"  # an invoice's label: "Bill to:", "Ship to:"
            if h.entity == "PERSON" and _PRODUCT_AFTER.search(text[h.end:h.end + 60]) and not _TWO_OBJECTS.search(
                    text[max(0, h.start - 40):h.start]):
                return "product"  # "my Django app", "Docker's COPY"
            if h.entity == "PERSON" and " " not in value.strip() and re.search(r"(?:^|\W)an?\s+$",
                                                                                text[max(0, h.start - 4):h.start]):
                return "product"  # a name takes no indefinite article: "push to a Vec", "an Xbox"
            if h.entity == "PERSON" and self._work_name(text, h, persons):
                return "work or public person"  # "Dune by Frank Herbert", "a biography of Marie Curie"
            words = _WORD.findall(value)
            if words and all(ordinary(w) for w in words) and not any(c.isdigit() for c in value):
                return "ordinary word"
        if h.entity in _PLACES and not known and not self._tied(text, h, persons):
            return "fact"
        return None

    @classmethod
    def _work_name(cls, text: str, h: Hit, persons) -> bool:
        """A work's maker ("… by Jane Austen"), a public life asked about ("a biography of Marie Curie") or a work
        named after a character ("Dune by Frank Herbert", "Harry Potter and the Philosopher's Stone by …", where a
        name follows "by"), unless the words next to the name tie it to someone ("my cousin", a person noun)."""
        before = text[max(0, h.start - 80):h.start]
        near = [w.casefold() for w in _WORD.findall(before)[-4:] + _WORD.findall(text[h.end:h.end + 30])[:3]]
        if any(w in _POSSESSIVES or w in _PERSON_WORDS for w in near):
            return False  # "a poem by my cousin Rosa", "… by Rosa, my cousin"
        if _AUTHORED.search(before) or _PUBLIC_BEFORE.search(before):
            return True
        m = _TITLE_TO_BY.match(text, h.end)
        return bool(m) and not _TWO_OBJECTS.search(text[max(0, h.start - 40):h.start]) and \
            not re.search(r"\b" + _NOT_TITLE + r"\b", m.group(0)) and any(p.start == m.end() for p in persons)

    @staticmethod
    def _tied(text: str, h: Hit, persons) -> bool:
        """Whether the sentence around `h` ties a person of the conversation to it."""
        a = h.start
        while a > 0 and not _SENTENCE_END.match(text[a - 1]):
            a -= 1
        m = _SENTENCE_END.search(text, h.end)
        b = m.end() if m else len(text)
        if any(p.start < b and a < p.end and p is not h for p in persons):
            return True
        sentence = _FRAME.sub(" ", text[a:b])
        question = sentence.rstrip().endswith("?")
        words = [w.casefold() for w in re.findall(r"[\w']+|[\w’]+", sentence)]
        for k, w in enumerate(words):
            w = w.replace("’", "'")
            if w == "me" and k and words[k - 1] in _ASKING:
                continue  # "help me plan a week in Lisbon", "tell me …", "… for me": the request, not the user's life
            if w in _TIES or w in _PERSON_WORDS:
                return True
            if w == "i" and any(x in _I_VERBS and not (question and x in _TRIP_VERBS) for x in words[k + 1:k + 4]):
                return True  # "I live in …", not "can I still travel to Canada?" (the trip is what is asked)
        return False
