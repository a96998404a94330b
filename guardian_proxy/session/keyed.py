"""The names a record gives by its keys, for the chat session's rules (`session/context.py`): a JSON text's keys (a
tool's output, a pasted record), a key in code or a config (a keyword argument, a JavaScript object, a YAML line),
and a pasted table's columns (CSV, TSV, semicolons, a Markdown table). One rule judges each value under its key
(`named_value`): any capitalised name words under a key that means a person's name ("first_name", "customer_name"),
two to four under a key that may mean one ("name", "author") when a given name starts them or a surname ends them
and none is an ordinary word. Every pattern is bounded (tests/unit/extract/test_extract_redos.py, the security
suite's 100 KB probe)."""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from .namecues import NAME_WORD, listed_name, ordinary
from .surrogates import PARTICLES

#: a JSON string (group 1); an escape outside a string is matched alone so that a search after an unclosed quote stays
#: aligned and linear (the plain string pattern restarts at every escaped quote: quadratic on '\\"' * n)
_JSON_STRING = re.compile(r'\\.|("(?:[^"\\]++|\\.)*+")')


@lru_cache(maxsize=16)  # the session's rules ask it several times of one text
def json_values(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] | None:
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
    return tuple(values), tuple(keys)


#: JSON keys whose value is a person's name whatever its words ("first_name": "Oluwaseun")
_PERSON_KEYS = frozenset({"first_name", "firstname", "given_name", "givenname", "last_name", "lastname", "surname",
                          "family_name", "familyname", "full_name", "fullname", "customer_name", "contact_name",
                          "author_name", "sender_name", "recipient_name", "patient_name", "employee_name",
                          "display_name", "displayname", "user_full_name", "user_name", "real_name",
                          "account_holder", "cardholder_name", "billing_name", "shipping_name"})
#: JSON keys whose value may be a person's name or anything else's ("name": "Olga Ivanova" or "Export job")
_MAYBE_PERSON_KEYS = frozenset({"name", "author", "customer", "contact", "sender", "recipient", "owner", "assignee",
                                "reporter", "patient", "employee", "user", "from", "to", "cc", "student", "pupil",
                                "client", "resident", "guest", "passenger", "candidate", "member", "attendee",
                                "participant", "child", "tenant", "applicant", "person", "staff", "learner"})


#: the keys of a person's contact in a record
_CONTACT_KEYS = frozenset({"email", "email_address", "emailaddress", "phone", "phone_number", "mobile", "telephone"})


_CONTACT_KEY = re.compile(r"[\"'](?:email|email_address|emailAddress|phone|phone_number|mobile|telephone)[\"']\s{0,3}(?:=>|:)")


def named_value(key: str, value: str, contact: bool = False) -> bool:
    """Whether `value` under `key` (a JSON key or a table's column) is a person's name: any capitalised name words
    under a key that means one, two to four under a key that may (a given name first or a surname last, no ordinary
    word; under "name" in a record that holds a person's e-mail or phone (`contact`), any such words)."""
    words = value.split()
    if "\\" in value or not 1 <= len(words) <= 5 or not all(
            NAME_WORD.fullmatch(w) and (w[:1].isupper() or 0 < k < len(words) - 1 and w in PARTICLES)
            for k, w in enumerate(words)):  # "Dafydd ap Rhys", "Ana de la Cruz": a particle between the names
        return False
    words = [w for w in words if w[:1].isupper()]
    return key in _PERSON_KEYS and not all(ordinary(w) for w in words) or key in _MAYBE_PERSON_KEYS and \
        len(words) >= 2 and not any(ordinary(w) for w in words) and (
            listed_name(words[0]) or listed_name(words[-1]) or contact and key == "name")


#: a table's column name: "name", "first_name", "E-mail", "Customer Name"
_COLUMN = re.compile(r"[A-Za-z_][\w .-]{0,30}")
#: the rule under a table's header: psql's "-----+-----", Markdown's "|---|:--:|", a box's "====="
_RULE_LINE = re.compile(r"[ \t]{0,8}[|+]?[ \t]{0,2}:?-{3,}[-=+|: \t]{0,2000}|[ \t]{0,8}={3,}[= \t+|]{0,2000}")
#: the separators of a pasted table, tried in this order
_TABLE_SEPS = (",", "\t", ";", "|")


def table_cells(text: str) -> tuple[tuple[tuple[str, ...], tuple[tuple[tuple[int, int], ...], ...]], ...]:
    """The tables pasted in `text` (CSV, TSV, semicolon- or pipe-separated): a header line of column names and at
    least two rows with as many cells, no quotes. Each as (the columns' keys, each row's cell spans, stripped)."""
    return tuple((keys, rows) for keys, rows, _ in _tables(text))


def in_header(text: str, start: int, end: int) -> bool:
    """Whether `start`..`end` lies in the header line of a pasted table ("| Student | Test 1 |"): a column's name."""
    return any(a <= start and end <= b for _, _, (a, b) in _tables(text))


@lru_cache(maxsize=16)  # read once per text: each hit of a part asks it again
def _tables(text: str) -> tuple[tuple[tuple[str, ...], tuple[tuple[tuple[int, int], ...], ...], tuple[int, int]], ...]:
    """`table_cells`' tables, each with the span of its header line."""
    lines, pos = [], 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    out, k = [], 0
    while k < len(lines):
        for sep in _TABLE_SEPS:
            head = lines[k][1].strip().strip("|")
            n = head.count(sep)
            piped = sep == "|" and lines[k][1].strip().startswith("|")  # "| Name | Role |": a Markdown table
            if n < (1 if piped else 2) or '"' in head or not all(_COLUMN.fullmatch(c.strip()) for c in head.split(sep)):
                continue
            first = k + 2 if k + 1 < len(lines) and _RULE_LINE.fullmatch(lines[k + 1][1]) else k + 1
            j = first
            while j < len(lines) and lines[j][1].strip().strip("|").count(sep) == n and '"' not in lines[j][1]:
                j += 1
            if j - k < 3:  # two lines under the header (a rule and a row, or two rows)
                continue
            keys = [c.strip().casefold().replace(" ", "_").replace("-", "_") for c in head.split(sep)]
            rows = []
            for start, line in lines[first:j]:
                cells, at = [], start
                for cell in line.split(sep):
                    a = at + len(cell) - len(cell.lstrip())
                    cells.append((a, a + len(cell.strip())))
                    at += len(cell) + 1
                if line.strip().startswith("|"):
                    cells = cells[1:]  # a Markdown table's leading pipe
                rows.append(tuple(cells))
            out.append((tuple(keys), tuple(rows), (lines[k][0], lines[k][0] + len(lines[k][1]))))
            k = j - 1
            break
        k += 1
    return tuple(out)


#: a table's columns that hold no one's name: a word NER calls a person there is the column's value ("| Efua Mensah |
#: Dispatcher |" under "Role")
NOT_NAME_COLUMNS = frozenset({"role", "roles", "title", "job", "job_title", "position", "status", "state", "type",
                               "kind", "category", "plan", "tier", "team", "department", "dept", "city", "country",
                               "region", "product", "item", "sku", "priority", "stage", "level", "tag", "tags",
                               "label", "group", "source", "channel", "method", "currency", "unit", "language"})


@lru_cache(maxsize=16)
def _cells(text: str) -> tuple[dict[tuple[int, int], str], tuple[tuple[int, int], ...]]:
    """Every cell of the tables in `text`: its column's key by its span, and the spans in order."""
    keyed = {cell: key for keys, rows in table_cells(text) for cells in rows
             for key, cell in zip(keys, cells, strict=False)}
    spans = tuple(sorted(c for _, rows in table_cells(text) for cells in rows for c in cells))
    return keyed, spans


def table_column(text: str, start: int, end: int) -> str | None:
    """The column's key when `start`..`end` is a whole cell of a pasted table, else None."""
    return _cells(text)[0].get((start, end))


def cut_at_cells(text: str, found: list) -> list:
    """The hits of `text` with a table's cell ending every hit in it ("1043,Mateus" is an id, not a number and a
    name): one that starts in a cell ends with it, one that starts between cells and runs into one is dropped."""
    spans = _cells(text)[1]
    if not spans:
        return found
    out = []
    for h in found:
        k = bisect_right(spans, (h.start, len(text) + 1)) - 1  # the last cell starting at or before the hit
        if k >= 0 and spans[k][0] <= h.start < spans[k][1]:
            if h.end > spans[k][1]:
                h.end, h.text = spans[k][1], text[h.start:spans[k][1]]
        elif k + 1 < len(spans) and spans[k + 1][0] < h.end:
            continue  # begins before a cell (a separator, the header) and runs into it
        out.append(h)
    return out


def tabled_names(text: str) -> list[tuple[int, int, str]]:
    """Person names a pasted table gives in a name column ("id,name,email" then "1042,Ingrid Halvorsen,…"): the
    same rule as a JSON key's (`named_value`). NER cannot read a row whose cells have no space after the comma."""
    out = []
    for keys, rows in table_cells(text):
        for cells in rows:
            for key, (a, b) in zip(keys, cells, strict=False):
                if b > a and named_value(key, text[a:b]):
                    out.append((a, b, f"a person's name in the table's column {key!r}"))
    return out


#: a key and its quoted value in code or a config ("last_name=\"Kiprono\"", "lastName: 'Kiprono'", a YAML line
#: "last_name: Kiprono")
_ASSIGNED = re.compile(r"\b([A-Za-z_]\w{1,30})[\"']?\s{0,3}(?:=>|[=:])\s{0,3}([\"'])([^\"'\n\\]{1,60})\2")
#: a record typed on one line, its values unquoted: "first_name: Lucía, last_name: Márquez"
_INLINE_PAIR = re.compile(r"\b([A-Za-z_]\w{1,30}):[ \t]{1,3}([^\r\n,;:\"'{}\[\]]{1,60}?)(?=[ \t]{0,3}(?:[,;]|\r?$))", re.M)
_YAML_LINE = re.compile(r"^[ \t]{0,12}-?[ \t]{0,3}([A-Za-z_]\w{1,30}):[ \t]{1,3}([^\r\n#\"'{}\[\]]{1,60}?)[ \t]*\r?$", re.M)


def _snake(key: str) -> str:
    """"lastName" → "last_name", "First-Name" → "first_name"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", key).casefold().replace("-", "_")


#: keys whose value is a person's data of a known type, whatever its words ("username": "hbrennan_77", "dob":
#: "1991-07-23", a CSV's "postcode" or "phone" column, a Rails log's "street"=>"…"): the type the value takes
_TYPED_KEYS = {
    **dict.fromkeys(("username", "user_name_handle", "login", "handle", "screen_name", "screenname", "nickname",
                     "user_login", "userid_handle"), "USERNAME"),
    **dict.fromkeys(("dob", "date_of_birth", "birth_date", "birthdate", "birthday", "born"), "DATE_OF_BIRTH"),
    **dict.fromkeys(("postcode", "post_code", "postal_code", "postalcode", "zip", "zipcode", "zip_code"), "LOCATION"),
    **dict.fromkeys(("phone", "phone_number", "phonenumber", "mobile", "mobile_number", "tel", "telephone", "cell",
                     "cellphone", "contact_number"), "PHONE_NUMBER"),
    **dict.fromkeys(("nhs_number", "nhs_no", "nhs"), "UK_NHS"),
    **dict.fromkeys(("line1", "address_line1", "address_line_1", "address1", "street", "street_address",
                     "address_1"), "STREET_ADDRESS"),
}
_TYPED_VALUE = re.compile(r"\b([A-Za-z_][\w-]{1,30})[\"']?\s{0,3}(?:=>|[=:])\s{0,3}[\"']([^\"'\n\\]{2,60})[\"']")


def typed_values(text: str) -> list[tuple[int, int, str, str]]:
    """Values a record gives under a key of a known personal type, quoted (JSON, code) or in a pasted table's
    column: (start, end, entity, the cue in a few words). A name is `assigned_names`' and `tabled_names`'."""
    out = []
    for m in _TYPED_VALUE.finditer(text):
        entity = _TYPED_KEYS.get(_snake(m.group(1)))
        if entity and any(c.isalnum() for c in m.group(2)):
            out.append((m.start(2), m.end(2), entity, f"a value under the key {_snake(m.group(1))!r}"))
    for keys, rows in table_cells(text):
        for cells in rows:
            for key, (a, b) in zip(keys, cells, strict=False):
                entity = _TYPED_KEYS.get(key)
                if entity and b > a and any(c.isalnum() for c in text[a:b]):
                    out.append((a, b, entity, f"a value in the table's column {key!r}"))
    return out


def assigned_names(text: str) -> list[tuple[int, int, str]]:
    """Person names that code or a config gives under a name key: a quoted value after "=" or ":" (a keyword
    argument, a JavaScript object, a dict, a JSON record pasted into prose), a YAML line's value, or an unquoted
    value of a key that means a name in a record typed on one line ("first_name: Lucía, last_name: Márquez"), by the
    JSON keys' rule (`named_value`): `User(first_name="Amani", last_name="Kiprono")` had kept the surname."""
    out = []
    contact = bool(_CONTACT_KEY.search(text))  # a record with a person's e-mail or phone: its "name" is theirs
    for m in _ASSIGNED.finditer(text):
        key = _snake(m.group(1))
        if named_value(key, m.group(3), contact):
            out.append((m.start(3), m.end(3), f"a person's name under the key {_snake(m.group(1))!r}"))
    for m in _YAML_LINE.finditer(text):
        if named_value(_snake(m.group(1)), m.group(2)):
            out.append((m.start(2), m.end(2), f"a person's name under the key {_snake(m.group(1))!r}"))
    for m in _INLINE_PAIR.finditer(text):
        if _snake(m.group(1)) in _PERSON_KEYS and named_value(_snake(m.group(1)), m.group(2)) and \
                not any(a <= m.start(2) < b for a, b, _ in out):
            out.append((m.start(2), m.end(2), f"a person's name under the key {_snake(m.group(1))!r}"))
    return out


def keyed_names(text: str) -> list[tuple[int, int, str]]:
    """Person names a JSON text (a tool's output, a pasted record) gives under a name key: any capitalised words
    under a key that means a person's name ("first_name", "customer_name"), two to four words under a key that may
    mean one ("name", "author", "assignee") when a given name starts them or a surname ends them and none is an
    ordinary word ("name": "Olga Ivanova", not "Export job", "Grace Hopper Poster" nor "support-bot"). Values with escapes are left to the detector. Each as
    (start, end, cue)."""
    found = json_values(text)
    if found is None:
        return []
    values, keys = found
    out = []
    k = 0
    # a record that holds a person's contact ("email", "phone") names that person under "name" ("Abdulrahman
    # Al-Sayegh" of a Stripe customer: no list need hold the name)
    contact = any(text[a:b].casefold() in _CONTACT_KEYS for a, b in keys)
    for a, b in values:
        while k < len(keys) and keys[k][1] < a:
            k += 1
        if not k:
            continue
        key = text[keys[k - 1][0]:keys[k - 1][1]].casefold().replace("-", "_")
        if named_value(key, text[a:b], contact):
            out.append((a, b, f"a person's name under the JSON key {key!r}"))
    return out
