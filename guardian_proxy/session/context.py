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
from ..placeholders import EMAIL, no_ones, role_mailbox, stock_email
from ..public_orgs import public_org
from ..public_people import named_in_full, public
from ..recognizer_data import data as recognizer_data
from ..types import CONTAINER_ENTITIES
from .keyed import (
    NAME_WORD,
    NOT_NAME_COLUMNS,
    assigned_names,
    cut_at_cells,
    in_header,
    json_values,
    keyed_names,
    named_value,
    table_column,
    tabled_names,
    typed_values,
)
from .language import other_language
from .message_reader import message_reader
from .message_reader import words as reader_words
from .namecues import (
    ORG_WORDS,
    PERSON_WORDS,
    SHAPE_CUES,
    SIBLING_CUE,
    _zipf,
    annotation,
    asked_about,
    channel,
    code_product,
    cued_names,
    given_and_surnames,
    listed_name,
    near_the_writer,
    ordinary,
    person_by_cue,
    product,
    product_after,
    public_office,
    sentence_around,
    sibling_word,
    siblings,
    work_name,
    world_given_names,
)
from .rewrite import HARD_BLOCK, Hit, aba_routing
from .surrogates import PARTICLES, SPOKEN_DIGIT, TITLES, address_parts

#: types whose values are numbers or codes: a text without a digit is not one
_DIGITS = frozenset({"AMOUNT", "AGE", "PHONE_NUMBER", "IP_ADDRESS", "CASE_NUMBER", "US_PASSPORT", "US_DRIVER_LICENSE",
                     "US_ITIN", "UK_NHS", "LATLONG", "IBAN_CODE", "ACCOUNT_NUMBER", "US_BANK_NUMBER", "CREDIT_CARD",
                     "US_SSN", "QUANTITY", "MEDICAL_LICENSE"})
_NAMES = frozenset({"PERSON", "USERNAME"})
#: quasi-identifiers that are facts of the world unless a person is tied to them in their sentence
_PLACES = frozenset({"LOCATION", "NRP", "ORGANIZATION", "DATE", "DATE_TIME"})
#: why a name is a public person's: a place beside one is tied to no one the user knows
_PUBLIC_REASONS = frozenset({"work or public person", "a public office's holder", "a public person",
                             "a well-known organisation, product or work"})
#: a saint's name, which names a church, a school or a hospital ("St Sophia's", "Saint Brendan")
_SAINT = re.compile(r"(?:St\.?|Saint|Ste\.?|San|Santa|Santo|São)[ \t]+[A-Z][\w'’-]{1,30}(?:['’]s)?")
#: an employer's or a school's cue: where someone works or studies stays theirs, however well known
_EMPLOYED_BEFORE = re.compile(r"(?i)\b(?:work(?:s|ed|ing)?\s+(?:at|for)|employed\s+(?:at|by)|job\s+(?:at|with)|"
                              r"intern(?:s|ed|ing)?\s+at|joined|employer(?:\s+is)?|stud(?:y|ies|ied|ying)\s+at|"
                              r"(?:engineer|manager|nurse|analyst|developer|director|officer)\s+at)\s+(?:the\s+)?$")
#: cues that say a name is someone's relative or holds a role, not whose: "her husband Pierre Curie", "CEO Satya
#: Nadella" are a public person's; with a first person before them ("my boss, CEO …") they are the user's people
_THIRD_PARTY_CUES = frozenset({"after a kinship or role noun", "a name after a role"})
_FIRST_PERSON_BEFORE = re.compile(r"(?i)\b(?:my|our|mine|me|us|i|we|i'm|we're)\b")
#: an airline's flight number: two letters (or a letter and a digit) and one to four digits ("BA 117", "TP1351")
_FLIGHT_NUMBER = re.compile(r"(?:[A-Z]{2}|[A-Z]\d|\d[A-Z])[ ]?\d{1,4}")
#: words of a flight in its sentence: "flight", "depart", "terminal", an airport pair "LHR-LIS", an airliner "A380"
_FLIGHT_CONTEXT = re.compile(r"(?i:\b(?:flights?|flying|fly|flies|flew|depart\w{0,6}|arriv\w{0,4}|lands?|landed|"
                             r"terminal|gate|boarding|airlines?|airport|layover|stopover|airbus|boeing|dreamliner)\b)|"
                             r"\b[A-Z]{3}[ ]?[-–>→][ ]?[A-Z]{3}\b|\b(?:A3[1-8]\d|7[3-8]7)\b")
#: the names the message reader judges (`message_reader`): people, organisations, places, groups
_READ = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "NRP"})
#: someone's contact data or identifier: a message that holds one speaks of people, whatever the reader says
_IDENTIFYING = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "STREET_ADDRESS", "GOVERNMENT_ID", "UK_NHS", "US_SSN",
                          "US_ITIN", "US_PASSPORT", "US_DRIVER_LICENSE", "IBAN_CODE", "CREDIT_CARD", "ACCOUNT_NUMBER",
                          "US_BANK_NUMBER", "DATE_OF_BIRTH", "MEDICAL_LICENSE"})
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
#: a length of time, not a point in it ("for two months", "50 years"), unless the words after make it one ("50
#: years ago", "two months later") or an age ("50 years old")
_DURATION = re.compile(r"(?:\d{1,3}(?:\.\d)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                       r"fifteen|twenty|thirty|forty|fifty|sixty|a\s+few|several|many)[\s-]+(?:more\s+)?"
                       r"(?:second|minute|hour|day|night|week|month|year|decade)s?"
                       r"(?:\s+(?:later|earlier|afterwards|after|before|on))?", re.I)  # "rebooked me two days later"
#: a nationality's word used as a language's name: "Translate to German:", "reply in Spanish", "my French grammar"
_LANGUAGE_VERB = re.compile(r"\b(?:translat\w*|rewrite|write|written|say|said|reply|respond|answer|speak|spoken|"
                            r"subtitle\w*|proofread|pronounce\w*|spell\w*|phrase\w*)\b", re.I)
_LANGUAGE_AFTER = re.compile(r"(?:translations?|version|subtitles|speakers?|grammar|spelling|words?|phrases?|text|"
                             r"language|lessons?|course|classes|dictionary|keyboard|pronunciation|accent|idioms?)\b",
                             re.I)
_POINT_AFTER = re.compile(r"^[\s-]*(?:ago|old|earlier|later|before|after|from\s+now|since|prior)\b", re.I)
#: what follows a sentence's first word when it is the ask's verb, not a name: "Summarise this email", "Proofread my
#: essay", "Tabulate the results"
_OBJECT_AFTER = re.compile(r"[ \t]{1,3}(?:this|that|these|those|the|my|our|your|his|her|their|its|it|me|us|them|a|an|"
                           r"who|what|which|how|why|whether|each|every|all|everything|both|any|"
                           # the same in French, Spanish, Italian, Portuguese and German ("Écris un message à …")
                           r"un|une|le|la|les|des|du|mon|ma|mes|ton|ta|notre|votre|el|los|las|una|mi|mis|tu|su|sus|"
                           r"ein|eine|einen|einem|den|dem|das|der|mein|meine|meinen|il|lo|gli|uno|um|uma|meu|minha)\b",
                           re.I)
#: words just before a lower-case name that make it one: a kinship or role noun, a verb that addresses someone
_CUE_BEFORE = re.compile(r"\b(?:daughter|son|wife|husband|mother|father|mom|mum|dad|brother|sister|friend|colleague|"
                         r"boss|manager|neighbou?r|partner|boyfriend|girlfriend|cousin|aunt|uncle|niece|nephew|tell|"
                         r"ask|remind|email|text|call|message|reply\s+to|write\s+to|named|called|i'?m|i\s+am|"
                         r"name\s+is|dear|hi|hello)[ ,:]{1,3}$", re.I)
#: a number after "#" is a reference (an issue, a pull request, a ticket), no amount: "pull request #412"
_HASH_BEFORE = re.compile(r"#$")
#: a form's or a model's short name: one or two capitals, perhaps a hyphen, one to three digits ("W-2", "I-9", "P60")
#: what NER or a number's pattern may call a part of a value a record's key types ("LE4" of a postcode)
_RETYPED_BY_KEY = frozenset({"ORGANIZATION", "LOCATION", "NRP", "PERSON", "DATE", "DATE_TIME", "QUANTITY", "AMOUNT",
                             "CASE_NUMBER", "USERNAME"})
#: a spreadsheet's cell and the colon of its range ("D2:D500")
_CELL = re.compile(r"\$?[A-Z]{1,3}\$?\d{1,7}")
_CELL_BEFORE = re.compile(r"\$?[A-Z]{1,3}\$?\d{1,7}:$")
_CELL_AFTER = re.compile(r":\$?[A-Z]{1,3}\$?\d")
#: the strings a pattern is tested on, in a question about a pattern
_PATTERN_SAMPLE = re.compile(r"\b(?:should(?:\s+not|n['’]t)?\s+match|must(?:\s+not)?\s+match|matches|test\s+strings?|"
                             r"samples?|valid|invalid)\b", re.I)
_PATTERN_TALK = re.compile(r"\b(?:regex|regexp|regular\s+expression|pattern|glob)\b", re.I)
#: an issue tracker's key ("PAY-2291", "PROJ-12") in a text about a ticket or an issue
_TICKET_KEY = re.compile(r"[A-Z][A-Z0-9]{1,9}-\d{1,6}")
_TICKET_TALK = re.compile(r"\b(?:jira|ticket|issue|story|bug|epic|sprint|backlog|linear|commit|revert|git|"
                          r"merge|pull\s+request|PR|changelog|release\s+notes)\b", re.I)
#: a line's leading timestamp: "[2026-11-04 10:12]", "2026-11-28 14:02:17", "2026/11/28 14:02:17 [error]"
#: and a chat export's: "[02/12/2026, 19:02:11] Aoife: …", "12/03/2024, 09:14 - Rhiannon: …"
_LOG_STAMP = re.compile(r"[ \t]{0,4}\[?(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?|"
                        r"\d{1,2}[/.]\d{1,2}[/.]\d{2,4},?[ \t]\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp][Mm])?)\]?")
#: a word with a capital inside and no space, as code writes identifiers ("KeyError", "OpenTelemetry")
_CODE_SUFFIX = re.compile(r"(?:Error|Exception|Warning|Handler|Factory|Builder|Provider|Controller|Context|Config|"
                          r"Client|Service|Adapter|Listener|Manager|Repository|Serializer|Validator|Component|Module)$")
_CAMEL_IDENTIFIER = re.compile(r"[A-Z][a-z]{1,20}(?:[A-Z][a-z0-9]{1,20}){1,4}")
#: a size or a duration with its unit
_MEASURE = re.compile(r"\d{1,9}(?:[.,]\d{1,4})?\s?(?:[KMGTP]i?B|[kKMGT]b|ms|µs|ns|px|em|rem|fps|Hz|kHz|MHz|GHz|rpm|%)")
#: a resource's name in a config (lower case, hyphens or underscores) and the words that make a text one
_KEBAB = re.compile(r"[a-z0-9]{1,30}(?:[-_][a-z0-9]{1,30}){1,6}")
_CONFIG_TEXT = re.compile(r"(?m)^[ \t]{0,12}(?:apiVersion|kind|metadata|services|spec|resource|image|containers?|"
                          r"namespace|deployment|volumes|env)[ \t]?:", re.I)
_HEX_LITERAL = re.compile(r"0x[0-9A-Fa-f]{1,16}")
_FORM_NAME = re.compile(r"[A-Z]{1,2}-\d{1,3}|[A-Z]\d{1,2}")
#: a tax office's form or code in a text about tax: "SA100", "SA103S", "P11D", "1257L", "W1/M1", "BR", "K475"
_ROUTING_BEFORE = re.compile(r"(?i)\b(?:routing|ABA|RTN)\b")
_TAX_FORM = re.compile(r"SA\d{3}[A-Z]{0,2}|P\d{2}[A-Z]?|\d{3,4}[LMNT]|[WM]1(?:/[WM]1)?|K\d{1,4}|\d{3,4}L[ \t][WM]1(?:/[WM]1)?|"
                       r"10(?:40|98|99)(?:-[A-Z]{1,4})?(?:-[A-Z]{1,3})?|W-[2-9][A-Z]?")  # the IRS's "1040", "1099-NEC"
_TAX_TALK = re.compile(r"\b(?:tax|HMRC|IRS|self[ -]assessment|payslip|PAYE|W-2|1040|Schedule[ \t]+(?:C|SE))\b", re.I)
#: a bank's identifier code (BIC, SWIFT): bank, country, place, perhaps a branch
_BIC = re.compile(r"[A-Z]{4}(?:AT|BE|BG|CH|CY|CZ|DE|DK|EE|ES|FI|FR|GB|GR|HR|HU|IE|IS|IT|LI|LT|LU|LV|MT|NL|NO|PL|PT|RO|"
                  r"SE|SI|SK|US|CA|AU|NZ|JP|CN|HK|SG|IN|AE|ZA|BR|MX|TR)[A-Z0-9]{2}(?:[A-Z0-9]{3})?")
_BIC_TALK = re.compile(r"\b(?:BIC|SWIFT)\b", re.I)
#: a word of letters then digits inside a "date" ("HbA1c", "NEWS2", "FY2026"); a month's or a day's is a date
_CODE_WORD = re.compile(r"(?<![\w])[A-Za-z]{2,12}\d{1,4}[A-Za-z]{0,3}(?!\w)")
_MONTH_OR_DAY = re.compile(r"(?i)(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\d")
#: a word no list holds as a name between a determiner and a noun is a thing's name ("Our Grafana alert", "the
#: Vaultwarden login page"); a person's name there is followed by a verb ("our Priyanka says", "my Kaveh is")
_DETERMINER_BEFORE = re.compile(r"(?:^|[^\w'’])(?:the|our|my|your|their|this|that|its)\s$", re.I)
_NOUN_AFTER = re.compile(r" ([a-z][a-z-]{1,20})\b(?!['’])")
_VERBS_AFTER_NAME = frozenset({
    "is", "was", "has", "had", "will", "would", "can", "could", "should", "must", "may", "might", "did", "does",
    "do", "and", "or", "who", "which", "that", "just", "also", "always", "never", "still", "often", "sometimes",
    "said", "says", "told", "asked", "went", "got", "made", "took", "came", "left", "wants", "needs", "loves",
    "likes", "thinks", "knows", "isn't", "doesn't", "didn't", "won't", "can't", "hasn't", "wasn't", "keeps",
    "finally", "really", "now", "too", "again", "here", "there", "at", "in", "on", "to", "from", "with", "for"})
#: the user's own number, said so: "my PPS number is", "my card no.:", "our account number"
_MINE_BEFORE = re.compile(r"\b(?:my|our)\s+(?:[\w-]+\s+){0,3}?(?:number|no\.?|nr|id|code|card)\s*(?:is|:|=)?\s*$", re.I)
#: two small numbers with a slash: a ratio, a share or a rule's name ("the 90/180 rule", "24/7", "a 70/30 split"),
#: unless a number's label is before it ("case no. 12/34")
_RATIO = re.compile(r"[1-9]\d{0,2}/[1-9]\d{0,2}")
#: a three-way split that adds up to 100 ("the 50/30/20 rule", "a 60/20/20 split"), not a date
_SPLIT = re.compile(r"([1-9]\d?)/([1-9]\d?)/([1-9]\d?)")
_NUMBER_LABEL_BEFORE = re.compile(r"(?:\b(?:no|nr|ref|case|file|number|docket|claim|application)\.?|#)\s*$", re.I)
#: a program's error code: after "error", "warning", "exit code", "status" ("error TS2345", "exit code 137"), or opening
#: a quoted message ("'P3009: migrate found failed migrations'")
_ERROR_BEFORE = re.compile(r"\b(?:error|errors|warning|warnings|exit\s+code|status\s+code|status|errno|lint\s+rule)"
                           r"(?:\s+code)?\s*:?\s$|\b(?:error|warning)\[$", re.I)  # rustc's "error[E0502]"
#: a linter's rule turned off or on by its code: "make Ruff ignore E501", "noqa: F401", "disable SC2086"
_RULE_VERB_BEFORE = re.compile(r"\b(?:ignore|ignores|ignoring|disable|disables|suppress|silence|noqa|select|enable)"
                               r":?\s$", re.I)
_RULE_CODE = re.compile(r"[A-Z]{1,4}\d{2,5}")
_QUOTES = frozenset("'\"‘“`")
_ERROR_MESSAGE_AFTER = re.compile(r":\s[A-Za-z]")
#: a year that begins a longer number is the number's: "invoice 2025-118", "INC-2024-0042"
_NUMBER_GOES_ON = re.compile(r"[-/.]?\d")
#: between an address and its town: a comma, perhaps a postcode ("Via Roma 12, Bologna", "Rue X 5, 69003 Lyon")
_TOWN_GAP = re.compile(r",\s{1,3}(?:\d{4,5}\s{1,3})?")
#: what asks about a trip's destination, just before its place: "an itinerary in", "a trip to", "things to do in",
#: "hotels near", "a weekend in", "how to get to"
_TRIP_BEFORE = re.compile(r"\b(?:itinerary|itineraries|trip|trips|holiday|holidays|vacation|vacations|getaway|"
                          r"honeymoon|weekend|days|nights|tour|tours|things\s+to\s+do|sights|hotels?|hostels?|"
                          r"restaurants?|museums?|flights?|beaches|hikes?|visit|visiting|explore|exploring|"
                          r"get|getting|party|parties|wedding|weddings|reception|celebration|venues?|events?|meetup|"
                          r"conference|dinner|brunch|picnic|going|heading|travelling|traveling|flying)\s+"
                          r"(?:in|to|of|around|near|from|at)?\s?$", re.I)
#: the capitalised (hyphenated) word right before a surname's particle, and a capitalised word right after a name
#: (one space)
_NAME_BEFORE = re.compile(r"\b([^\W\d_]{2,20}(?:-[^\W\d_]{2,20})?) $")
_NAME_NEXT = re.compile(r" ([^\W\d_]{2,20})\b(?![-'’]\w)")
#: a verb of going before "to" or "from": what follows is a place unless it is a person's name
_WENT_TO = re.compile(r"\b(?:went|go|goes|going|gone|heading|headed|travel(?:l?ed|l?ing|s)?|flew|fly|flying|drove|drive|driving|"
                      r"moved|move|moving|came|come|coming|returned|return|returning|trip|back)\s(?:back\s)?(?:to|from)\s$",
                      re.I)
#: where someone moves, lives or grew up: an organisation's name there is a place's ("moved from Leeds to Bristol")
_SETTLED_BEFORE = re.compile(r"\b(?:moved|moving|move|relocated|relocating|relocate|emigrated|immigrated)\s"
                             r"(?:back\s)?(?:(?:from|to)\s[^.?!\n,]{1,30}?\s)?(?:to|from)\s$|\b(?:live|lives|lived|living|"
                             r"grew\s+up|born|raised|settled|reside|resides|resided)\s+in\s$", re.I)
#: a journey's ends: "my flight KL1408 from Amsterdam to Lagos", "the train from Lyon to", "flew to Denver via":
#: where a trip goes, which a question about fares, delays or rights (EU261 covers flights leaving the EU) needs
_ROUTE_BEFORE = re.compile(r"\b(?:flights?|train|trains|bus|buses|coach|ferry|ferries|route|fly|flew|flying|flown|"
                           r"travel(?:l?ed|l?ing|s)?|drive|drove|driving|connection|layover|transfer)\b[^.?!\n]{0,40}?"
                           r"\b(?:from|to|via|through)\s$", re.I)
#: an amount that is what the user may spend: "budget around €1,500", "a price range of $200", "spend up to £50"
_BUDGET_BEFORE = re.compile(r"\b(?:budget|budgets|budgeted|price\s+range|spend|spending)\s(?:is\s|of\s|:\s?)?(?:(?:around|about|"
                            r"roughly|approximately|up\s+to|at\s+most|under|max(?:imum)?|of|is)\s)?(?:~\s?)?$", re.I)
#: what names a law, a rule or a standard just before its code: "under EU261", "pursuant to 2016/679", "ISO 27001"
_LAW_BEFORE = re.compile(r"\b(?:under|per|pursuant\s+to|according\s+to|compliant\s+with|complies\s+with|"
                         r"regulations?|directives?|standards?|articles?|sections?|clauses?|rules?|ISO|RFC|IEC|EN|"
                         r"DIN|IEEE)\s(?:the\s)?$", re.I)
#: one or more numbers of one or two digits and nothing else ("34", "6 and 9")
_BARE_NUMBERS = re.compile(r"\d{1,2}(?:(?:\s?,\s?|\s(?:and|or|&)\s)\d{1,2})*")
#: a day of the week, a day next to today, a time of day, alone: "Friday", "next Monday", "tomorrow", "3 pm", "10:30"
_WEEK_TIME = re.compile(r"(?i:(?:(?:on|next|this|last|by|until|before|after)\s)?(?:mon|tues|wednes|thurs|fri|satur|sun)"
                        r"days?|today|tonight|tomorrow|yesterday)(?:\s(?:morning|afternoon|evening|night))?|"
                        r"(?:at\s)?\d{1,2}(?:[:.]\d{2})?\s?(?i:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|"
                        # a time written with a dot, as the British do ("11.30", "at 9.30")
                        r"(?:at\s)?(?:[01]?\d|2[0-3])\.[0-5]\d")
#: "Ana Ruiz, 34," "I'm 34": a bare number right after a person or "I'm" is their age
_CLOSING_QUOTE = re.compile(r"[»”]")
#: a work's noun, in several languages, before its quoted title
_TITLE_NOUN_BEFORE = re.compile(r"\b(?:novel|book|film|movie|song|album|poem|play|series|show|painting|romanzo|libro|"
                                r"canzone|novela|película|canción|roman|livre|chanson|Roman|Buch|Lied|boek|powieść|"
                                r"książka|obra|filme)\s[«“\"]$", re.I)
#: greetings and a letter's openings in other languages (English ones are ordinary words): never part of a name
_GREETINGS = frozenset({"hallo", "hola", "bonjour", "bonsoir", "salut", "ciao", "olá", "ola", "hej", "hei", "moin",
                        "servus", "merhaba", "namaste", "salaam", "salam", "shalom", "hoi", "buongiorno", "buonasera",
                        "buenas", "buenos", "bom", "boa", "guten", "liebe", "lieber", "caro", "cara", "querida",
                        "querido", "cher", "chère", "estimado", "estimada", "gentile", "beste", "kære", "hyvä", "drogi",
                        "droga", "szia", "ahoj", "salve", "yo"})
#: ordinary words and a preposition that NER took into a name's span at its start ("Going to Kyoto", "Meeting with
#: Ana Lima"): the name starts after them
_LEAD_WORDS = re.compile(r"((?:[A-Z][a-z]{1,15}\s){1,2}?)(?:to|in|from|at|near|with|for)\s(?=[A-Z])")
#: a label that makes the number after it someone's identifier ("employee no. 40718", "membership number 88213")
_ID_LABEL_BEFORE = re.compile(r"\b(?:employee|staff|member|membership|customer|client|account|student|patient|policy|"
                              r"payroll|badge|personnel|case|file|reference|ref)\s+(?:no\.?|nr\.?|number|id|#)\s{0,2}"
                              r":?\s{0,2}$", re.I)
_AGE_BEFORE = re.compile(r"(?:\b(?:i'?m|i\s+am|he'?s|she'?s|aged?|age:?)|,)\s?$", re.I)
#: a code of two or three capitals before a number that might be read as a year: "LH 1234" is a flight
_CODE_BEFORE = re.compile(r"\b[A-Z]{2,3}\s$")
#: a British postcode ("LE2 3QT", "SW1A 1AA")
_UK = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
_UK_POSTCODE = re.compile(r"\b" + _UK + r"\b")
#: a whole postcode that names a street's few doors: British ("N1 4RH"), Irish Eircode ("D05 K2X4"), Canadian
#: ("K1A 0B1"), Dutch ("1012 AB")
_FULL_POSTCODE = re.compile(_UK + r"|[AC-FHKNPRTV-Y]\d{2}[ ]?[AC-FHKNPRTV-Y\d]{4}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d|\d{4}[ ]?[A-Z]{2}")
#: a postcode after a street address, past its town and its state when the detector stopped before them
#: ("…, Apt 2B, Tucson, AZ 85712", "18 Jubilee Crescent, Bengaluru 560034")
_POSTCODE_AFTER = re.compile(r"(?:,[ ]?[A-Z][^\W\d_]{1,20}(?:[ ][A-Z][^\W\d_]{1,20}){0,2})?(?:,?[ ][A-Z]{2})?"
                             r"[ ,]{0,3}(?:\d{5}(?:-\d{4})?|\d{4,6}|[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z]{2})\b")
_VERSION = re.compile(r"[vV]\d{1,3}(?:\.\d{1,4}){0,3}(?:[-.]?(?:alpha|beta|rc)\d{0,3})?|"
                      r"(?:HTTP|HTTPS|TLS|SSL|SPDY|SMTP|IMAP|POP3|FTP|SSH|QUIC|SIP|RTSP|AMQP|MQTT|SOCKS)/\d(?:\.\d)?")
#: a log's or an ISO-like date written with slashes, year first ("2026/11/28 14:02:17"): a date, not a case number
#: a day, a month (either order) and a four-digit year with slashes: a date whatever recognizer found it
_DAY_MONTH_YEAR = re.compile(r"(?:0?[1-9]|[12]\d|3[01])/(?:0?[1-9]|[12]\d|3[01])/(?:19|20)\d\d")
_YEAR_FIRST_DATE = re.compile(r"(?:19|20)\d\d/(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])")
_SENTENCE_END = re.compile(r"[.!?\n]")


def _sentence_start(text: str, i: int) -> bool:
    """Whether position `i` of `text` begins a sentence (only spaces between it and the text's start or a
    sentence's end)."""
    before = text[:i].rstrip(" \t")
    return not before or before[-1] in ".!?\n:\"'“"
#: words that tie a sentence's place to a person of the conversation
_TIES = frozenset({"my", "mine", "myself", "our", "ours", "ourselves", "we", "we're", "we've", "he", "him", "his",
                   "she", "hers", "her", "their", "theirs", "i'm", "i've", "i'd", "i'll", "im", "me"})
#: verbs (and "for") whose object "me" is the one asking, not a person whose life the sentence tells: "help me plan a
#: week in Lisbon", "tell me the weather in Oslo", "book a table in Rome for me" ask about the place
_ASKING = frozenset({"help", "tell", "show", "give", "let", "find", "get", "teach", "remind", "explain", "recommend",
                     "suggest", "book", "plan", "write", "draft", "for"})
_I_VERBS = frozenset({"live", "lived", "living", "moved", "move", "moving", "born", "grew", "from", "work", "worked",
                      "working", "stay", "stayed", "staying", "visit", "visited", "visiting", "travel", "traveled",
                      "travelled", "travelling", "traveling", "am", "was", "go", "going", "went", "fly", "flying",
                      "flew", "relocated", "reside", "resided", "study", "studied", "studying", "attend",
                      "attended", "left", "returned", "arrive", "arrived", "drive", "drove", "commute"})
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
#: a feature or a place's facility named after someone or something ("the Machame route", "Kennedy airport", "the
#: Lincoln Tunnel"): nouns that follow a name only as the name of that thing, never as a verb of a person
_FEATURE = r"(?:route|routes|trail|trails|glacier|river|valley|tunnel|station|airport|canal|crater|volcano|" \
           r"reservoir|highway|motorway|freeway|peninsula|gorge|waterfall|fjord|strait|cathedral|basilica|monastery|" \
           r"castle|palace|abbey|museum|square|tower|fort|fortress|temple|mosque|chapel|stadium|arena|gallery|" \
           r"monument|memorial|lighthouse|harbour|harbor|pier|canyon|zoo|theatre|theater|mountains|islands|" \
           r"hbf|hauptbahnhof|bahnhof|gare|stazione|estaci[oó]n|centraal|terminus|terminal)"
_FEATURE_AFTER = re.compile(r"^\s+" + _FEATURE + r"\b", re.I)
_FEATURE_WORD = re.compile(r"\b" + _FEATURE + r"\b", re.I)
#: …or the name's own last word ("Stirling Castle", "Tower Bridge" is not one: "bridge" is a surname too)
_FEATURE_LAST = re.compile(r"\s" + _FEATURE + r"$", re.I)
#: object pronouns of a request for information ("tell me", "show us") do not tie a place to anyone; "help me
#: plan a week in Lisbon" does (the user's plan)
_FRAME = re.compile(r"\b(?:tell|give|show|teach|explain to)\s+(?:me|us)\b", re.I)
@cache
def _countries() -> frozenset[str]:
    """Country and territory names (Faker's address provider, in English)."""
    try:
        from faker.providers.address.en import Provider
    except ImportError:  # pragma: no cover
        return frozenset()
    return frozenset(str(c).casefold() for c in Provider.countries)


@cache
def _regions() -> frozenset[str]:
    """Countries and the first-level regions of the largest English-speaking countries and India (US states,
    Canadian provinces, Australian states, the UK's nations): places of millions, whose laws and taxes a question
    is often about."""
    from faker.providers.address.en_AU import Provider as AU
    from faker.providers.address.en_CA import Provider as CA
    from faker.providers.address.en_IN import Provider as IN
    from faker.providers.address.en_US import Provider as US

    names = [*US.states, *CA.provinces, *AU.states, *IN.states, "England", "Scotland", "Wales", "Northern Ireland"]
    return _countries() | frozenset(n.casefold() for n in names)


def _next_year(value: str) -> bool:
    """A tax or school year: a year and the next one's last two digits or whole ("2025/26", "2024-2025")."""
    m = re.fullmatch(r"((?:19|20)\d\d)[/-](\d\d|\d{4})", value.strip())
    return bool(m) and int(m.group(2)) % 100 == (int(m.group(1)) + 1) % 100


def _sample_row(text: str, at: int) -> bool:
    """Whether the line around `at` is a record (cells split by commas, tabs, semicolons or bars) whose e-mail is at
    a reserved domain and a sample's (`placeholders.stock_email`): test data, whatever names it holds."""
    a = text.rfind("\n", 0, at) + 1
    b = text.find("\n", at)
    line = text[a:b if b >= 0 else len(text)]
    if len(line) > 400 or not any(sep in line for sep in (",", "\t", ";", "|")):
        return False
    mails = EMAIL.findall(line)
    return bool(mails) and all(stock_email(m) for m in mails)


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


#: a system prompt pasted into a user's text: "System: You are …", "<system>", "### System"
_SYSTEM_LABEL = re.compile(r"(?im)^[ \t#<\[]{0,6}system[\]>]?[ \t]{0,3}:?[ \t]{0,3}")
#: how a system prompt tells the assistant who it is: "You are a support agent for Acme Cloud", "You work for …"
_YOU_ARE = re.compile(r"(?:you\s+are|you['’]re|you\s+work|you\s+represent|you\s+answer|as\s+an?\s+\w+\s+"
                      r"(?:for|at|of))\b", re.I)


def _sentence_of(text: str, i: int) -> str:
    """From the start of the sentence holding position `i` to `i`."""
    a = i
    while a > 0 and not _SENTENCE_END.match(text[a - 1]):
        a -= 1
    return text[a:i]


#: kinds of work whose titles a sentence names: a single capitalised word no list holds is the title
#: (a work's noun, then words, then a comparison or a naming word right before the title: "album came after
#: Revolver", "a better film than Tenet"; not the noun alone: "the book Chiamaka lent me")
_WORK_BEFORE = re.compile(r"\b(?:albums?|songs?|singles?|tracks?|books?|novels?|films?|movies?|episodes?|seasons?|"
                          r"series|sitcoms?|operas?|musicals?|plays?|poems?|paintings?|games?|anime|manga|podcasts?|"
                          r"soundtracks?|sequels?|prequels?)\b(?:[^.?!\n]{0,40}?\b(?:after|before|than|like|called|"
                          r"titled|vs\.?|or))\s$", re.I)


#: a job that the sentence asks about as a post ("a Senior Data Engineer role", "the nurse position", "interview
#: for a product manager job"): what the user prepares or applies for
_ROLE_NOUN_AFTER = re.compile(r"\s(?:role|roles|position|positions|job|jobs|opening|openings|vacancy|vacancies|post)\b",
                              re.I)
_APPLIED_FOR_BEFORE = re.compile(r"\b(?:interview|interviews|interviewing|apply|applying|applied|application|"
                                 r"applications)\s(?:for|as)\s(?:an?\s|the\s)?(?:[A-Z][\w-]*\s){0,3}$", re.I)


#: letters after a name: a degree, a fellowship, an order, a registration ("MRCVS", "MBBS FRCP", "PhD", "KC")
_POST_NOMINAL = re.compile(r",?[ \t](?:MRCVS|BVSc|BVM&S|BVetMed|MBBS|MBChB|BMBS|MD|DO|PhD|DPhil|EdD|DSc|FRCP|FRCS|MRCP|"
                           r"MRCS|MRCGP|FRCGP|FRCPath|FRCR|FRCA|FRCOG|MRCPsych|RN|RGN|RMN|RNMH|RM|BSc|MSc|MA|BA|MBA|"
                           r"LLB|LLM|QC|KC|MBE|OBE|CBE|FRS|FBA|CEng|ACA|FCA|ACCA|CPA|Esq\.?|DDS|DMD|DVM|PharmD|MPharm|"
                           r"NP|PA-C|CFA|MCIPD|Chartered|\(Hons\))$")
#: a web server's access log stamp, a machine's ISO 8601 time (a "T" between the date and the time), seconds or
#: milliseconds since 1970 under a time's key ("iat", "exp", "created_at", "timestamp")
_ACCESS_STAMP = re.compile(r"\[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]")
_MACHINE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?")
_BIRTH_BEFORE = re.compile(r"(?:birth|born|dob|birthday)\w*[\"']?\s{0,3}[:=]?\s{0,3}[\"']?$", re.I)
_EPOCH = re.compile(r"1[0-9]\d{8}(?:\d{3})?")
_TIME_KEY_BEFORE = re.compile(r"(?<![\w-])[\"']?(?:iat|exp|nbf|auth_time|\w{0,20}_at|\w{0,20}time(?:stamp)?|ts|\w{0,20}_ts|"
                              r"expires(?:_at)?|created|updated|modified|issued|since|until|t)[\"']?\s{0,3}[:=]\s{0,3}$",
                              re.I)
#: a key that calls its number an id ("assignee_id": 38800192733, "id": 5812997034251, run_id=11875402931)
_ID_KEY_BEFORE = re.compile(r"(?:\b|_)(?:id|ids)[\"']?\s{0,3}[:=]\s{0,3}$", re.I)  # not "number": "phone number: 0…"
#: what a name before it makes a method, a measure, a law or a disease of ("the Bradford Factor", "the Turnbull
#: guidelines", "Glasgow Coma Scale", "Crohn's disease", "Bayes' theorem")
_EPONYM_AFTER = re.compile(r"\s(?:Factor|Score|Scale|Index|Criteria|Criterion|[Gg]uidelines|Rule|Test|"
                           r"[Ss]yndrome|[Dd]isease|[Ee]ffect|Principle|[Tt]heorem|Law|Method|Algorithm|Protocol|"
                           r"Classification|[Ee]quation|[Dd]istribution|Formula|Prize|Award|Medal|[Cc]onjecture|"
                           r"[Ll]emma|[Pp]aradox|[Cc]onstant|[Nn]umber|[Tt]ransform|[Cc]ycle|[Mm]anoeuvre|[Mm]aneuver|"
                           r"[Ss]ign|[Rr]eflex|[Cc]ompetence)\b|"
                           # with a possessive only a law's, a theorem's or a disease's: "Sarah's number", "Tom's test
                           # results" are theirs
                           r"['’]s?\s(?:[Dd]isease|[Ss]yndrome|[Tt]heorem|[Ll]aw|[Pp]aradox|[Cc]onstant|[Ll]emma|"
                           r"[Cc]onjecture|[Rr]azor|[Pp]rinciple|[Ee]quation|Factor|Scale|Index|Criteria|Prize)\b")
#: a person's tie just before a name: the name is theirs whatever follows it ("my daughter Amara (2015)"; a bare
#: possessive is no tie: "our Bradford Factor trigger")
_TIED_BEFORE = re.compile(r"\b(?:daughter|son|wife|husband|mother|father|mum|mom|dad|"
                          r"brother|sister|friend|colleague|client|patient|tenant|neighbou?r|partner|boss|manager|"
                          r"student|pupil|child|baby|cousin|aunt|uncle|niece|nephew)\W{1,3}(?:\w+\W{1,3}){0,1}$", re.I)
#: a case cited by its parties and its law report, as common-law courts write it: "R v Turnbull [1977] QB 224",
#: "Ward v Tesco Stores Ltd [1976] 1 WLR 810", "Donoghue v Stevenson [1932] AC 562", "(1990) 2 AC 605"
_CASE_CITE = re.compile(r"\b(?:R|[A-Z][\w'’&.-]{1,30}(?:[ ](?:[A-Z&][\w'’&.-]{0,30}|of|and|the|for)){0,5})[ ]v\.?[ ]"
                        r"[A-Z][\w'’&.-]{1,30}(?:[ ](?:[A-Z&][\w'’&.-]{0,30}|of|and|the|for)){0,6}[ ]"
                        r"[\[(](?:1[6-9]|20)\d\d[\])](?:[ ]\d{1,4})?[ ][A-Z][A-Za-z.]{0,10}(?:[ ][A-Z][A-Za-z.]{0,8})?"
                        r"[ ]\d{1,5}")


@lru_cache(maxsize=16)  # asked for every hit of one text
def _cited_cases(text: str) -> tuple:
    return tuple(_CASE_CITE.finditer(text)) if " v" in text else ()


#: what follows an author cited by name and year, in the text's or in brackets: "Granovetter (1973)", "(Putnam,
#: 2000)", "Kahneman and Tversky (1979)", "Smith et al. (2019)", "(Bourdieu, 1986, p. 243)"
_CITED_AFTER = re.compile(r"(?:['’]s)?(?:[ ](?:and|&)[ ][A-Z][\w'’-]{1,30})?(?:[ ]et[ ]?al\.?)?(?:,[ ]|[ ])\(?"
                          r"(?:1[5-9]|20)\d\d[a-z]?(?:[,:][ ]?(?:pp?\.[ ]?)?\d{1,4}(?:[-–]\d{1,4})?)?[);]")
#: a field's name as code writes it: lower camel case ending in what a field holds ("userId", "createdAt", "orderNo")
_FIELD_IDENTIFIER = re.compile(r"[a-z]{2,20}(?:[A-Z][a-z0-9]{1,15}){0,3}(?:Id|ID|Ids|Name|At|Type|Key|Url|URL|Code|Count|"
                               r"Date|Time|Status|No|Number|Ref|Hash|Token)")
#: what a family calls its members, in several languages, written as a name
_FAMILY_WORDS = frozenset({"babcia", "dziadek", "dziadzia", "oma", "opa", "omi", "opi", "nonna", "nonno", "abuela",
                           "abuelo", "abuelita", "abuelito", "mamie", "papy", "mémé", "pépé", "vovó", "vovô", "avó",
                           "avô", "dadi", "dada", "nani", "nana", "baba", "bibi", "babushka", "dedushka", "grandma",
                           "grandpa", "granny", "grandad", "gran", "nan", "nanna", "mum", "mom", "mama", "mamma",
                           "papa", "pappa", "mutti", "vati", "ammi", "abba", "appa", "amma", "halmeoni", "harabeoji",
                           "obaachan", "ojiichan", "lola", "lolo", "yiayia", "pappou", "teta", "jiddo", "sitti"})
_NUMBER_LABEL_AFTER = re.compile(r"[ \t](?:no\.?|number|num|id|ID|card|reference|ref)\b", re.I)
#: what labels an order's, an invoice's or a ticket's number: the shop's or the desk's reference, not the buyer's
#: (a booking's, a policy's, a claim's or a parcel's tracking reference names its holder and stays personal)
_ORDER_LABEL_BEFORE = re.compile(r"\b(?:orders?|invoice|inv|purchase\s+order|PO|SKU|item|product|ticket)[ \t]{0,2}(?:no\.?|number|nr\.?|ref(?:erence)?|id|code)?"
                                 r"[ \t]{0,2}[:#]?[ \t]{0,2}$", re.I)
_ORDER_PREFIX = re.compile(r"(?:ORD|INV|PO|SO|SKU)-[A-Z0-9-]{2,20}", re.I)
#: a record's key that says its line is about someone: "customer_id=48213", "email:", "ip="
_RECORD_KEY = re.compile(r"(?i)\b(?:customer|user|client|member|account|patient|e-?mail|phone|mobile|ip)(?:[_-]?id)?\s*[:=]")


#: a list with the writer in it: "(me, Tariq, Dervla and Hyun-woo)", "Ana, Joe and me"
_WORDS_AND = r"[A-ZÀ-ÖØ-Þ][\w'’-]{1,30}(?:[ \t][A-ZÀ-ÖØ-Þ][\w'’-]{1,30}){0,2}"  # a name of one to three words
_WRITERS_LIST = re.compile(rf"\b(?:me|myself)(?:[ \t]*\([^()\n]{{1,40}}\))?"  # "me (Aditi), Tomasz, Chidi and …"
                           rf"(?:(?:[ \t]*,[ \t]*\n?[ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+){_WORDS_AND}){{1,8}}|"
                           rf"{_WORDS_AND}(?:[ \t]*,[ \t]*{_WORDS_AND}){{0,7}}[ \t]*,?[ \t]+and[ \t]+me\b")
#: capitalised single words joined as a list: "Dervla, Mateus and Hyun-woo"
_LIST_OF_WORDS = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’-]{0,30}(?:(?:,[ \t]*|[ \t]+(?:and|&)[ \t]+|,[ \t]+and[ \t]+)"
                            r"[A-ZÀ-ÖØ-Þ][\w'’-]{0,30}){1,8}")
_COLUMN_GAP = re.compile(r"[ \t]*\t[ \t]*| {3,}")


_QUOTE_CHARS = "'\"“”‘’«» \t"


def _core(h: Hit) -> tuple[int, int]:
    """A hit's bounds without the quotes or the full stop NER took in with it ("Lacroix-Morel'")."""
    lead = len(h.text) - len(h.text.lstrip(_QUOTE_CHARS))
    trail = len(h.text) - len(h.text.rstrip(_QUOTE_CHARS + ".,;:"))
    return h.start + lead, h.end - trail


def _list_gives_way(over: list[Hit], found: list[Hit]) -> bool:
    """Whether the found hits `over` are NER's one organisation or place made of a list of names ("Dervla, Mateus and
    Hyun-woo"): then they are removed from `found` and give way to the list's names."""
    if over and all(h in found and h.entity in ("LOCATION", "ORGANIZATION", "NRP") and
                    _LIST_OF_WORDS.fullmatch(h.text.strip()) for h in over):
        for h in over:
            found.remove(h)
        return True
    return False


def _line_of(text: str, at: int) -> str:
    return text[text.rfind("\n", 0, at) + 1:(text.find("\n", at) + 1 or len(text) + 1) - 1]


#: a quantifier before a role noun: the role in general ("per student", "all teachers", "each carer", "the next carer")
_ANY_BEFORE = re.compile(r"\b(?:per|each|every|all|any|other|many|most|some|no|few|several|fellow|next)\s$", re.I)
#: a possessive before a role: the role is the person's relation to the user ("my new manager", "our lawyer") or
#: to someone of theirs ("my son's teacher", "her mum's carer")
_RELATION_BEFORE = re.compile(r"\b(?:my|our|your|his|her|their)\s(?:(?:new|old|former|current|previous|future|line|"
                              r"family|own|union|[A-Z]{2,5})\s)?$|"
                              r"\b(?:my|our|your|his|her|their)\s(?:[\w-]{2,20}\s)?[\w-]{2,20}['’]s\s$", re.I)


#: formats, protocols and kinds of software that NER takes for an organisation ("Export to CSV fails")
_TECH_TERMS = frozenset({
    "csv", "tsv", "json", "jsonl", "xml", "yaml", "toml", "html", "css", "pdf", "sql", "api", "rest", "graphql",
    "grpc", "sdk", "cli", "etl", "crm", "erp", "sso", "jwt", "oauth", "saml", "http", "https", "url", "uuid", "dns",
    "tcp", "udp", "ssh", "tls", "ssl", "vpn", "cpu", "gpu", "ram", "ssd", "usb", "png", "jpeg", "jpg", "gif", "svg",
    "mp3", "mp4", "zip", "xlsx", "docx", "txt", "llm", "ocr", "ide", "smtp", "imap", "ftp", "sftp", "ci", "cd", "sla",
    "kpi", "okr", "faq", "orm", "cms", "cdn", "vm", "os", "ui", "ux", "qa", "seo", "b2b", "b2c", "saas", "iot",
})
#: public resolvers everyone uses (Google, Cloudflare, Quad9, OpenDNS)
_PUBLIC_RESOLVERS = frozenset({"8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "9.9.9.9", "149.112.112.112",
                               "208.67.222.222", "208.67.220.220", "2001:4860:4860::8888", "2001:4860:4860::8844",
                               "2606:4700:4700::1111", "2606:4700:4700::1001"})


def _no_ones_ip(value: str) -> bool:
    """An address that points to no one's device: a private, loopback, link-local, shared or reserved one (a
    container's, a LAN's, a documentation range's) or a public resolver everyone uses."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(value.split("/")[0])
    except ValueError:
        return False
    return value in _PUBLIC_RESOLVERS or not ip.is_global


def _inside(spans, start: int, end: int) -> bool:
    return any(a <= start and end <= b for a, b in spans)


#: an invoice's label after a single given name: "Bill to:", "Ship to:"
_LABEL_TO = re.compile(r"[ \t]{1,3}to[ \t]{0,3}:")


def _inner_cap(value: str) -> bool:
    """A capital inside a word that no name's prefix explains ("LinkedIn", "getUser"; not "McAllen", "DeKalb",
    "LaSalle", "MacKenzie")."""
    return bool(_INNER_CAP.search(re.sub(r"\b(?:Mc|Mac|De|La|Le|Du|Di|Da|Van|Von|O')", "", value)))


def _not_a_persons(text: str, h: Hit, persons, seen: bool = False) -> str | None:
    """Why a PERSON hit is no one's name here, or None: its shape (digits, underscores, inner capitals, a run of
    five or more CJK characters: "获取项目详情" is a phrase), an invoice's label, a product, a work or a public life
    (a question's topic only for a name the conversation has not `seen` as someone's)."""
    value = h.text
    if any(c.isdigit() or c == "_" for c in value) or _CJK_RUN.search(value) or _inner_cap(value):
        return "not a name's shape"
    if " " not in value.strip() and _LABEL_TO.match(text, h.end):
        return "field name"
    words = value.split()
    if not seen and not listed_name(words[0]) and \
            any(re.sub(r"['’]s$", "", w).casefold() in recognizer_data()["not_name_terms"] for w in words):
        return "product"  # "Tailwind's dark mode", "Our Grafana alert": the recognizers' list of no one's names
    if len(words) >= 2 and ordinary(words[-1]) and not listed_name(words[0]):
        return "not a name's shape"  # "Acme Cloud", "Export Job": a dictionary word ends it, no given name starts it
    if " " not in value.strip() and not listed_name(value):
        if _WORK_BEFORE.search(text, max(0, h.start - 60), h.start):
            return "work or public person"  # "Which Beatles album came after Revolver?": a title, no one's name
        if value.islower() and not _CUE_BEFORE.search(text[max(0, h.start - 40):h.start]):
            return "not a name's shape"  # "$ npm test": a command; lower case with no cue names no one
        if _sentence_start(text, h.start) and _OBJECT_AFTER.match(text, h.end):
            return "ordinary word"  # "Summarise this email", "Proofread my essay": the ask's verb
        if _DETERMINER_BEFORE.search(text, max(0, h.start - 8), h.start) and \
                (m := _NOUN_AFTER.match(text, h.end)) and m.group(1).casefold() not in _VERBS_AFTER_NAME and \
                not m.group(1).endswith("ed") and not (m.group(1).endswith("s") and not m.group(1).endswith("ss")):
            return "product"  # "Our Grafana alert", "the Vaultwarden login": a name before a noun names a thing
    if product(text, h) or code_product(text, h):
        return "product"  # "my Django app", "Docker's COPY", "push to a Vec", "Pandas warns SettingWithCopyWarning"
    if work_name(text, h, persons) or not seen and asked_about(text, h):
        return "work or public person"  # "Dune by Frank Herbert", "a biography of Marie Curie"
    if not seen and public_office(text, h):
        return "a public office's holder"  # "Mayor of London Sadiq Khan said", "Pope Clement VII", "Henry VIII"
    return None


def _language(text: str, h: Hit) -> bool:
    """Whether a nationality's word names a language here: after "in", "into", "to" or "from" in a sentence that
    translates, writes or speaks ("Translate to German: …", "answer in Spanish"), or before a language's noun ("the
    German translation", "French grammar"). Not "I'm German", "a German colleague"."""
    if " " in h.text.strip():
        return False
    if _LANGUAGE_AFTER.match(text[h.end:h.end + 20].lstrip()) and text[h.end:h.end + 1].isspace():
        return True
    before = text[max(0, h.start - 8):h.start].casefold().split()
    if not before or before[-1] not in ("in", "into", "to", "from"):
        return False
    return bool(_LANGUAGE_VERB.search(_sentence_of(text, h.start)))


class PartContext:
    """The keep/drop decision for the hits of one chat request (see the module's rules)."""

    def __init__(self, chat: ChatRequest):
        self.vocab = vocabulary(chat.data) | _ROLES
        self._json: dict[int, list[tuple[int, int]] | None] = {}
        self._marks: dict[int, tuple[list, list]] = {}
        self.cues: dict[int, str] = {}  # the names only a cue found, by their hit's id (see `cued`)
        self.identified: dict[int, bool] = {}  # the slots that hold someone's contact data or identifier (`cued`)
        self.world: dict[int, bool] = {}  # the slots whose message reads as a question about the world

    def _structure(self, i: int, text: str) -> tuple[list, list]:
        if i not in self._marks:
            hard = [m.span() for m in _MARKER.finditer(text)]
            soft = [m.span(1) for m in _HEADING.finditer(text)] + [m.span(1) for m in _LABEL.finditer(text)] + \
                [m.span() for m in _CODE.finditer(text)]
            self._marks[i] = (hard, soft)
        return self._marks[i]

    @staticmethod
    def join_postcodes(text: str, found: list[Hit]) -> list[Hit]:
        """A street address's postcode that the detector left outside it, often typed a year ("42 Wallaby Way,
        Sydney NSW 2000"), is the address's: the address hit takes it in and the other hit on it goes."""
        taken: set[int] = set()
        for h in found:
            if h.entity != "STREET_ADDRESS":
                continue
            uk = _UK_POSTCODE.search(text, max(h.start, h.end - 3), h.end + 10)
            if uk and uk.start() <= h.end < uk.end():  # "14 Birch Close, Leicester LE|2 3QT": cut inside its postcode
                h.end, h.text = uk.end(), text[h.start:uk.end()]
            m = _POSTCODE_AFTER.match(text, h.end)
            if m:
                for o in found:
                    if o is not h and h.end <= o.start and o.end <= m.end():
                        taken.add(id(o))
                h.end, h.text = m.end(), text[h.start:m.end()]
        return [h for h in found if id(h) not in taken]

    @staticmethod
    def widen_names(text: str, found: list[Hit]) -> None:
        """A person's name NER cut short takes in its parts: a listed given name before a surname's particle
        ("Jan-Willem" of "Jan-Willem van der Berg", where NER found "van der Berg") or before the name ("Fergus" of
        "Fergus MacAlister", where NER found "MacAlister") and capitalised listed names right after it ("An" of
        "Nguyen Van An", where NER found "Nguyen Van")."""
        for h in found:
            if h.entity != "PERSON" or h.part:
                continue
            if h.text[:1].islower() and h.text.split()[0] in PARTICLES:
                m = _NAME_BEFORE.search(text, max(0, h.start - 30), h.start)
                if m and all(p[:1].isupper() and listed_name(p) for p in m.group(1).split("-")):
                    h.start, h.text = m.start(1), text[m.start(1):h.end]
            elif (m := _NAME_BEFORE.search(text, max(0, h.start - 30), h.start)) and m.group(1)[:1].isupper() and \
                    m.group(1).casefold() in world_given_names() and not ordinary(m.group(1)) and \
                    m.group(1).casefold() not in TITLES and not any(o is not h and o.start < h.start and
                                                                    m.start(1) < o.end for o in found):
                h.start, h.text = m.start(1), text[m.start(1):h.end]  # "Fergus MacAlister": NER found the surname
            while True:
                m = _NAME_NEXT.match(text, h.end)
                if not m or not m.group(1)[:1].isupper() or not listed_name(m.group(1)) or ordinary(m.group(1)) or \
                        any(o is not h and o.start < m.end() and h.end < o.end for o in found):
                    break
                h.end, h.text = m.end(), text[h.start:m.end()]

    @staticmethod
    def regroup(text: str, found: list[Hit]) -> list[Hit]:
        """The detector's hits of one part, regrouped where the words around them say more: a postcode joins its
        street address (`join_postcodes`); a single word NER took for a person right after an address and a comma
        is the address's town ("Via Roma 12, Bologna"); a number typed a date or an amount after an identifier's label
        is that identifier ("employee no. 40718"); a word of a person's name found again typed as something else is
        that person's ("call her Zofia"); an ordinary word NER typed an organisation right before a job
        is the job title's first word ("a Data analyst"); a number of one or two digits typed a date after a
        person's name and a comma, or after "I'm", is their age ("I'm Ana Ruiz, 34"); a user name a label gave a whole "Name <e-mail>" to
        ("Author: Marcus Lindholm <marcus@…>") is a person's name and the e-mail address found inside it."""
        found = PartContext.join_postcodes(text, found)
        PartContext.widen_names(text, found)
        bare = [h for h in found if h.entity == "DATE" and h.text.isdigit() and len(h.text) <= 2 and int(h.text)
                and _AGE_BEFORE.search(text, max(0, h.start - 8), h.start)]
        if bare:
            names = [o.end for o in found if o.entity == "PERSON"] + [b for _, b, _ in cued_names(text)]
            for h in bare:
                if not text[max(0, h.start - 2):h.start].endswith(", ") or any(
                        _TOWN_GAP.fullmatch(text, end, h.start) for end in names):
                    h.entity = "AGE"  # "I'm Ana Ruiz, 34,": the detector read a day
        for h in found:
            if h.entity == "PERSON" and " " not in h.text.strip() and not listed_name(h.text) and any(
                    o.entity in ("STREET_ADDRESS", "LOCATION") and _TOWN_GAP.fullmatch(text, o.end, h.start)
                    for o in found):
                h.entity = "LOCATION"
        for h in found:
            if h.entity == "CASE_NUMBER" and (_YEAR_FIRST_DATE.fullmatch(h.text) or _DAY_MONTH_YEAR.fullmatch(h.text)):
                h.entity = "DATE"  # "2026/11/28" in a log line, "nata il 12/08/1985"
            if h.entity == "LOCATION" and any(c.isdigit() for c in h.text) and address_parts(h.text):
                h.entity = "STREET_ADDRESS"  # "Flat 2, 9 Linden Grove, Norwich NR2 3JS": an address keeps its shape
            if h.entity in ("DATE", "DATE_TIME", "AMOUNT", "QUANTITY") and h.text.isdigit() and len(h.text) >= 3 and \
                    _ID_LABEL_BEFORE.search(text, max(0, h.start - 30), h.start):
                h.entity = "CASE_NUMBER"  # "employee no. 40718": a number after its label is an identifier
        named = {w for o in found if o.entity == "PERSON" for w in NAME_WORD.findall(o.text) if w[:1].isupper()}
        for h in found:  # "Zofia Wiśniewska-Nowak … call her Zofia": the same name again, whatever NER typed it
            if h.entity in ("ORGANIZATION", "LOCATION", "NRP") and h.text.strip() in named:
                h.entity = "PERSON"
        for h in [h for h in found if h.entity == "OCCUPATION"]:
            for o in found:  # "a Data analyst": NER's organisation "Data" is the job title's first word
                if o.entity in ("ORGANIZATION", "NRP", "LOCATION", "PERSON") and o.end + 1 == h.start and \
                        text[o.end] == " " and " " not in o.text.strip() and ordinary(o.text.strip()):
                    found.remove(o)
                    h.start, h.text = o.start, text[o.start:h.end]
                    break
        out = []
        for h in found:
            inner = [o for o in found if o is not h and o.entity == "EMAIL_ADDRESS" and h.start <= o.start and
                     o.end <= h.end]
            if h.entity == "USERNAME" and inner and " " in h.text:
                name = text[h.start:inner[0].start].rstrip(" <(\"'")
                if name and _WORD.fullmatch(name.split()[0]) and name.split()[0][:1].isupper():
                    out.append(Hit(h.slot, h.start, h.start + len(name), "PERSON", name))
                continue
            out.append(h)
        return out

    def cued(self, i: int, text: str, found: list[Hit]) -> list[Hit]:
        """The names that only their cue finds ("my niece Amara", "reply to Siobhan": `namecues.cued_names`), as
        person hits: a hit of the same words typed as a place, an organisation or a group becomes a person's, and
        such hits inside the name give way to it (removed from `found`); one that overlaps a found person or another
        value adds nothing. Each new one is remembered with its cue
        (`self.cues`, by the hit's identity) for the decision's provenance."""
        out = []
        found[:] = cut_at_cells(text, found)  # a table's cell ends every hit in it
        for h in found:  # a column's gap ends a name: "Customer: Natalia Ferreira-Santos   Tel: 07480 …"
            if h.entity in _READ and not h.part and (gap := _COLUMN_GAP.search(h.text)) and gap.start() > 0:
                h.end, h.text = h.start + gap.start(), h.text[:gap.start()]
        # a JSON text's keys are read as JSON; code's and configs' keys only outside one (the same values twice)
        by_key = keyed_names(text) if json_values(text) is not None else assigned_names(text)
        for a, b, cue in cued_names(text) + by_key + tabled_names(text):
            over = [h for h in found if h.start < b and a < h.end]
            same = [h for h in over if _core(h) == (a, b) and h.entity in ("LOCATION", "ORGANIZATION", "NRP", "PERSON")]
            if same:
                for h in same:
                    h.entity = "PERSON"
                    h.start, h.end, h.text = a, b, text[a:b]  # "c.last_name = 'Lacroix-Morel'": NER took the quote in
                    self.cues.setdefault(id(h), cue)  # the cue vouches for it ("Author: Mei Lin Tan <…>")
                continue
            # "Sra. Ortega": a name found inside takes its title (a surname then); "CFO Lorraine Tebbutt", NER's
            # organisation: the name after the role
            titled = cue in ("after a title", "a name after a role")
            if over and all(h.entity in ("LOCATION", "ORGANIZATION", "NRP") and (a <= h.start and h.end <= b or titled)
                            or h.entity == "PERSON" and a <= h.start and h.end <= b and (a, b) != (h.start, h.end)
                            for h in over):  # "Gráinne Ní Mhurchú" in a name column, NER's "Ní Mhurchú": the whole
                for h in over:  # "my neighbour Gintaras Petrauskas", NER's place "Gintaras": the cue's name whole
                    found.remove(h)
                over = []
            if not over:
                out.append(Hit(i, a, b, "PERSON", text[a:b]))
                self.cues[id(out[-1])] = cue
        for a, b, entity, cue in typed_values(text):  # "username": "hbrennan_77", a CSV's postcode column
            over = [h for h in found + out if h.start < b and a < h.end]
            if over and all(h in found and a <= h.start and h.end <= b and h.entity in _RETYPED_BY_KEY for h in over):
                for h in over:  # "LE4 7ZB" in a postcode column, NER's "LE4": the key says what the whole value is
                    found.remove(h)
                over = []
            if not over:
                out.append(Hit(i, a, b, entity, text[a:b]))
                self.cues[id(out[-1])] = cue
            elif len(over) == 1 and over[0].entity in ("DATE", "DATE_TIME") and entity == "DATE_OF_BIRTH":
                over[0].entity = "DATE_OF_BIRTH"  # "dob": "1991-07-23", found as a date
        # a list's other names, beside a person's that a cue found or whose words the name lists hold ("orjson or
        # ujson" lists no one)
        # a message with someone's contact data or identifier speaks of people: the message reader does not judge it
        self.identified[i] = any(h.entity in _IDENTIFYING for h in found + out)
        anchors = [(h.start, h.end) for h in found + out if h.entity == "PERSON" and not h.part and (
            id(h) in self.cues or any(listed_name(w) for w in _WORD.findall(h.text)))]
        # the words listed beside the writer are people: "(me, Tariq, Dervla, Mateus and Hyun-woo)", "Ana, Joe and me"
        for m in _WRITERS_LIST.finditer(text):
            for w in re.finditer(_WORDS_AND, m.group(0)):
                a, b = m.start() + w.start(), m.start() + w.end()
                words = w.group(0).split()
                if any(ordinary(x) or x.casefold() in recognizer_data()["not_name_terms"] for x in words) or \
                        public_org(w.group(0)) and not any(listed_name(x) for x in words):
                    continue  # "me, Arsenal and Chelsea fans"
                over = [h for h in found + out if h.start < b and a < h.end]
                if len(over) == 1 and (over[0].start, over[0].end) == (a, b) and over[0] in found and \
                        over[0].entity in ("LOCATION", "ORGANIZATION", "NRP"):
                    over[0].entity = "PERSON"  # "Tariq, Joe and me": NER's organisation "Tariq"
                    self.cues.setdefault(id(over[0]), "listed beside the writer")
                    continue
                if not over or _list_gives_way(over, found):
                    out.append(Hit(i, a, b, "PERSON", text[a:b]))
                    self.cues[id(out[-1])] = "listed beside the writer"
        for _ in range(3):  # "Present: Ngozi Eze, Marek Dvořák, siobhan o'leary": a list's names, one from the next
            new: list[Hit] = []
            for a, b, cue in siblings(text, anchors):
                over = [h for h in found + out + new if h.start < b and a < h.end]
                if not over or _list_gives_way(over, found):
                    new.append(Hit(i, a, b, "PERSON", text[a:b]))
                    self.cues[id(new[-1])] = cue
            out += new
            anchors = [(h.start, h.end) for h in new]
            if not new:
                break
        return out

    def _about_the_world(self, i: int, text: str) -> bool:
        """Whether slot `i`'s message reads as a question about the world (`message_reader`), once per slot: an
        English message of 8 words or more (the reader knows no other language, and a few words say too little)."""
        if i not in self.world:
            self.world[i] = len(reader_words(text)) >= 8 and not other_language(text) and \
                not _CJK_RUN.search(text) and message_reader().about_the_world(text)
        return self.world[i]

    def _vouched(self, h: Hit) -> bool:
        """Whether a cue found this name and says it is one (a name in a list beside another's does not: it is
        judged as NER's names are, "Kahneman and Tversky (1979)" cites two authors)."""
        return self.cues.get(id(h), SIBLING_CUE) != SIBLING_CUE

    @staticmethod
    def tidy(h: Hit, text: str) -> Hit:
        """A person's name that is a country's is a place ("which country is Micronesia next to"), and so is a
        name its words make one ("its capital is Saipan", "the island of Saipan", "Saipan is the capital of …"); ordinary
        words before a full name are not part of it ("Email Margaret Okafor" → "Margaret Okafor")."""
        if h.entity == "USERNAME" and not h.part and " " in h.text.strip() and \
                text[h.start - 1:h.start] in ("'", '"') and \
                named_value("name", h.text.strip(), contact=bool(_RECORD_KEY.search(_line_of(text, h.start)))):
            h.entity = "PERSON"  # "{ name: 'Amani Kiprono' }": a quoted name under a name label, not a handle (in a
            # customer's record any name words: 'customer_id=48213 name="Funmilayo Oyelaran" ip=…')
        if not h.part and person_by_cue(text, h):
            h.entity = "PERSON"  # "my name is Darnell Okoro", "my daughter Sofia Marchand": NER's type slips
        elif h.entity == "ORGANIZATION" and not h.part and _SETTLED_BEFORE.search(text, max(0, h.start - 40), h.start) \
                and not any(w.casefold() in ORG_WORDS for w in _WORD.findall(h.text)):
            h.entity = "LOCATION"  # "I moved from Leeds to Bristol": where someone moves or lives is a place
        if h.entity == "PERSON" and not h.part and " " not in h.text.strip() and not listed_name(h.text) and \
                (sib := sibling_word(text, h)) and not listed_name(sib) and \
                _FEATURE_WORD.search(_sentence_of(text, h.start)):
            h.entity = "LOCATION"  # "which route …, Machame or Lemosho?": the choices of a place's feature
            return h
        cut = _CLOSING_QUOTE.search(h.text) if not h.part else None
        if cut and cut.start() > 0:  # "Il Gattopardo» di": NER read across a title's closing quote
            h.end, h.text = h.start + cut.start(), h.text[:cut.start()]
        lead = _LEAD_WORDS.match(h.text) if h.entity in ("PERSON", "ORGANIZATION", "LOCATION") and not h.part else None
        if lead and all(ordinary(w) for w in _WORD.findall(lead.group(1))):
            going = _WENT_TO.search(text[max(0, h.start - 30):h.start] + lead.group(0))
            h.start, h.text = h.start + lead.end(), h.text[lead.end():]  # "Going to Kyoto": NER took the verb in
            if going:
                h.entity = "LOCATION"
                return h
        if h.entity != "PERSON" or h.part:
            return h
        while (post := _POST_NOMINAL.search(h.text)) and post.start() > 0:  # "Dr Saoirse Kehoe MRCVS": the degree
            h.end, h.text = h.start + post.start(), h.text[:post.start()]  # stays, as everyone who holds it writes it
        if len(words := _WORD.findall(h.text)) >= 2 and words[-1].casefold() in ORG_WORDS:
            h.entity = "ORGANIZATION"  # "Regards, Sakura Estates.": a firm's word ends the name
            return h
        if " " not in h.text.strip() and not listed_name(h.text) and (
                _WENT_TO.search(text, max(0, h.start - 30), h.start) or
                _ROUTE_BEFORE.search(text, max(0, h.start - 80), h.start)) and \
                not re.match(r"['’]s\b", text[h.end:h.end + 3]):
            h.entity = "LOCATION"  # "me and Dmitri went to Kraków", "drive from Cape Town to Windhoek": a place
            return h
        words = _WORD.findall(h.text)
        named = len(words) >= 2 and words[0].casefold() in given_and_surnames()  # "Rosa Tinoco": a full name
        if h.text.casefold() in _countries() or _FEATURE_AFTER.match(text[h.end:h.end + 20]) or \
                _FEATURE_LAST.search(h.text) or not named and (
                _PLACE_BEFORE.search(text[max(0, h.start - 40):h.start]) or _PLACE_AFTER.match(text[h.end:h.end + 60])):
            h.entity = "LOCATION"
            return h
        words = list(NAME_WORD.finditer(h.text))  # a hyphenated name whole: "Min-jun Park" keeps "Min"
        k = 0
        while len(words) - k > 2 and len(words[k].group(0)) > 1 and ordinary(words[k].group(0)) and \
                words[k].group(0) not in PARTICLES and words[k].group(0).casefold() not in TITLES:  # "J." an initial; "van der Berg" keeps its particles
            k += 1
        if not k and len(words) >= 3 and words[0].group(0).islower() and words[0].group(0) in PARTICLES and \
                words[1].group(0).casefold() in world_given_names():
            k = 1  # "Ich bin Jonas Weißenborn": a particle never comes before a given name
        if not k and len(words) >= 2 and words[0].group(0).casefold() in _GREETINGS:
            k = 1  # "Hallo Emre,", "Querida Lucía": a greeting of another language opens the line, not the name
        if not k and len(words) == 2 and ordinary(words[0].group(0)) and not ordinary(words[1].group(0)) and \
                not listed_name(words[0].group(0)) and \
                words[0].group(0).casefold().rstrip(".") not in TITLES and _sentence_start(text, h.start):
            k = 1  # "Email Wanjiku (…)": a sentence's first word is capitalised for the sentence, not the name
        if k:
            cut = words[k].start()
            h.start, h.text = h.start + cut, h.text[cut:]
        return h

    def keep(self, i: int, slot: Slot, h: Hit, persons: list[Hit] = (), known: bool = False) -> bool:
        """Whether hit `h` of slot `i` is a person's value (`why_not` gives None)."""
        return self.why_not(i, slot, h, persons, known) is None

    def why_not(self, i: int, slot: Slot, h: Hit, persons: list[Hit] = (), known: bool = False,
                seen: bool = False) -> str | None:
        """None when hit `h` of slot `i` is a person's value, else why it is left as typed, in a few words that
        name the rule (the decision log counts them: `kept`). `known`: a value this conversation already
        replaces, found again (the place rule does not undo it: it stays replaced everywhere); `seen`: a value the
        conversation holds as someone's (a question about it asks about them, not a public life). Hits are
        tidied first (`tidy`: a country's name becomes a place, leading ordinary words are cut off)."""
        text = slot.text
        if not known:
            self.tidy(h, text)
        value = h.text
        if h.entity in _DIGITS and not any(c.isdigit() for c in value) and len(SPOKEN_DIGIT.findall(value)) < 7:
            return "no digit"  # (a number dictated as words is one: "oh eight seven three one four two …")
        if h.entity in _DIGITS and _VERSION.fullmatch(value):
            return "version"  # "/v1/items", "v2.3.1": an API's or a program's version, no one's number
        if h.entity in HARD_BLOCK:
            return None
        if h.entity in CONTAINER_ENTITIES:
            return "container"
        if no_ones(h.entity, value) and not ((h.entity in _DIGITS or h.entity == "GOVERNMENT_ID") and
                                             _MINE_BEFORE.search(text, max(0, h.start - 40), h.start)):
            return "stock example"  # "e.g. 123-45-6789" (not "My PPS number is 1234567TA": the user says it is theirs)
        if h.entity == "EMAIL_ADDRESS" and role_mailbox(value):
            return "organisation's mailbox"  # "contact support@acme-widgets.com": a desk, not a person
        if i not in self._json:
            self._json[i] = json_values(text)
        found = self._json[i]
        if found is not None and not _inside(found[0], h.start, h.end):
            # a key, or the JSON's syntax; a key that is an e-mail address or a phone number is data by its shape
            return None if h.entity in _KEY_DATA and _inside(found[1], h.start, h.end) else "JSON key"
        if value.casefold() in self.vocab:
            return "the request's vocabulary"
        if h.entity == "USERNAME" and not known and " " in value.strip() and text[h.start - 1:h.start] in ("'", '"'):
            return "not a name's shape"  # "{ name: 'Export Job' }": a quoted label, not a user's handle or name
        if h.entity == "USERNAME" and not known and _FIELD_IDENTIFIER.fullmatch(value.strip()):
            return "field name"  # "userId : string", "createdAt": a schema's field, no one's handle
        if h.entity == "USERNAME" and not known and annotation(text, h):
            return "code annotation"  # "@MainActor and DispatchQueue.main.async in Swift": a language's attribute
        if h.entity == "PHONE_NUMBER" and not known and (
                _ORDER_LABEL_BEFORE.search(text, max(0, h.start - 24), h.start) or _ORDER_PREFIX.match(value.strip())):
            return "an order's number"  # "order #3318840257", "invoice INV-0893", "PO-26-1187": the shop's reference
        if _EPOCH.fullmatch(value.strip()) and (_TIME_KEY_BEFORE.search(text, max(0, h.start - 30), h.start) or
                                                h.entity == "PHONE_NUMBER" and value.strip()[1] in "56789"):
            return "a machine's timestamp"  # "iat": 1796287200, "?t=1764712934": seconds since 1970, no phone
        if h.entity == "PHONE_NUMBER" and value.strip().isdigit() and \
                _ID_KEY_BEFORE.search(text, max(0, h.start - 30), h.start):
            return "a record's id"  # "assignee_id": 38800192733, "run_id=11875402931": a number the key calls an id
        if h.entity in ("PHONE_NUMBER", "CASE_NUMBER", "US_BANK_NUMBER") and not known and \
                aba_routing(re.sub(r"\D", "", value)) and _ROUTING_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "a bank's code"  # "an ABA routing number like Chase's 021000021": the bank's, no one's account
        if h.entity == "IP_ADDRESS" and _no_ones_ip(value.strip()):
            return "a network's address"  # "nameserver 8.8.8.8", "10.0.4.21", "172.17.0.0/16": no one's device
        if h.entity in _SHAPED:
            return None
        hard, soft = self._structure(i, text)
        if _inside(hard, h.start, h.end) or (_inside(soft, h.start, h.end) and (wordy(value) or h.entity == "OCCUPATION")):
            return "field name"
        if "\n" in text and h.entity not in _KEY_DATA and h.entity != "PERSON" and in_header(text, h.start, h.end):
            return "field name"  # "| Student | Test 1 |": a table's column names (a person's may head one: "| Aoife |")
        if h.entity in ("PERSON", "EMAIL_ADDRESS", "USERNAME") and not known and "\n" in text and \
                _sample_row(text, h.start):
            return "a sample record"  # "2,Jane,Doe,jane.doe@example.com,…": a row of test data on a reserved domain
        if h.entity == "PERSON" and not h.part and not known and "\n" in text and \
                table_column(text, h.start, h.end) in NOT_NAME_COLUMNS:
            return "a table's value"  # "| Efua Mensah | Dispatcher |" under "Role": the column says what it is
        if h.entity in ("PERSON", "ORGANIZATION", "LOCATION", "NRP") and not known and not seen and not h.part and \
                not self._vouched(h) and not any(c.isdigit() for c in value) and \
                (other_language(_sentence_of(text, h.start)) or other_language(text)) and \
                not any(listed_name(w) for w in NAME_WORD.findall(value) if w[:1].isupper()):
            return "a word of another language"  # "Devo chiedere …", "der Bodensee", "Nagrodę Nobla": no listed name
        if h.entity in ("ORGANIZATION", "LOCATION", "NRP") and not known and not h.part and " " not in value.strip() \
                and not listed_name(value) and _sentence_start(text, h.start) and _OBJECT_AFTER.match(text, h.end):
            return "ordinary word"  # "Schreib eine kurze Nachricht …": the ask's verb, whatever NER typed it
        if h.entity in ("PERSON", "ORGANIZATION") and not known and text[h.start - 1:h.start] in ("«", "“", '"') and \
                text[h.end:h.end + 1] in ("»", "”", '"') and _TITLE_NOUN_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "work or public person"  # "il romanzo «Il Gattopardo»", "the novel "Beloved"": a work's title
            return "a public person"
        if h.entity in _NAMES and not h.part:
            why = _not_a_persons(text, h, persons, seen or known) if h.entity == "PERSON" else None
            if why in ("not a name's shape", "field name") and self._vouched(h) and not _inner_cap(value) and \
                    not any(c.isdigit() or c == "_" for c in value):
                why = None  # a name its cue found has a name's shape ("Author: Mei Lin Tan <…>"; "Tan" is a word),
                # not one written as code ("My name is OpenTelemetry", a test's string)
            elif why == "product" and self.cues.get(id(h), "").startswith("a person's name under the key"):
                why = None  # "c.last_name = 'Lacroix-Morel'" in a query: code around it, a person's name in it
            if why is not None:
                return why
            words = NAME_WORD.findall(value)  # a hyphenated name whole: "Min-jun"
            if words and all(ordinary(w) for w in words) and not any(c.isdigit() for c in value):
                return "ordinary word"
        if h.entity in ("ORGANIZATION", "OCCUPATION") and (slot.role == "system" or _SYSTEM_LABEL.search(text)) and \
                _YOU_ARE.match(_SYSTEM_LABEL.sub("", _sentence_of(text, h.start).lstrip())):
            return "the assistant's own organisation"  # "You are a support agent for Acme Cloud.", "System: You are …"
        if h.entity == "OCCUPATION" and (_ROLE_NOUN_AFTER.match(text, h.end) or
                                         _APPLIED_FOR_BEFORE.search(text, max(0, h.start - 60), h.start)):
            return "the role asked about"  # "a job interview … for a Senior Data Engineer role": what to prepare for
        if h.entity == "PERSON" and not h.part and value.strip().casefold() in _FAMILY_WORDS:
            return "a family's word"  # "Babcia died in 2009", "Oma's recipe": what the writer calls a grandparent
        if h.entity == "OCCUPATION" and _NUMBER_LABEL_AFTER.match(text, h.end):
            return "field name"  # "student no. 19283746B", "employee number": the number's label, the number is data
        if h.entity == "OCCUPATION" and _ANY_BEFORE.search(text, max(0, h.start - 12), h.start) and \
                " " not in value.strip():
            return "a role in general"  # "a comment per student", "every nurse on the ward": no one in particular
        if h.entity == "OCCUPATION" and _RELATION_BEFORE.search(text, max(0, h.start - 24), h.start):
            return "a role to the user"  # "my new manager", "our lawyer": who they are to the user, not a job held
        if h.entity in ("NRP", "LOCATION") and not known and not seen and (words := NAME_WORD.findall(value)) and \
                all(w.casefold() in recognizer_data()["not_name_terms"] for w in words) and \
                not any(listed_name(w) for w in words):
            return "product"  # "SOQL result", "in Redoc": the recognizers' list of products (not an employer's name)
        if h.entity in ("PERSON", "ORGANIZATION", "LOCATION", "NRP") and not known and not seen and \
                _CITED_AFTER.match(text, h.end) and not self._vouched(h) and \
                not _TIED_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "a cited author"  # "Granovetter (1973)", "(Putnam, 2000)", "Smith et al. (2019)": a work's author
        if h.entity not in _KEY_DATA and any(m.start() <= h.start and h.end <= m.end() for m in _cited_cases(text)):
            return "a cited case"  # "R v Turnbull [1977] QB 224", "Ward v Tesco Stores Ltd [1976] 1 WLR 810": law
        if h.entity in ("PERSON", "LOCATION", "ORGANIZATION", "NRP") and not known and not seen and \
                _EPONYM_AFTER.match(text, h.end) and not self._vouched(h) and \
                not _TIED_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "a named method"  # "the Bradford Factor", "the Turnbull guidelines", "Crohn's disease": a thing
        if h.entity == "ORGANIZATION" and not known and channel(text, h):
            return "product"  # "message my husband Declan on WhatsApp": the service the message goes through
        if h.entity in ("ORGANIZATION", "PERSON", "LOCATION") and not known and " " not in value.strip() and \
                _CAMEL_IDENTIFIER.fullmatch(value.strip()) and _CODE_SUFFIX.search(value):
            return "not a name's shape"  # "KeyError", "TypeError": an identifier written as code (not "PayPal",
            # an employer, nor "DeKalb", "McKenzie": a name's prefix explains their capital)
        if h.entity in _DIGITS and _MEASURE.fullmatch(value.strip()):
            return "a measure"  # "a 900GB table", "512MiB", "250ms"
        if h.entity == "USERNAME" and _KEBAB.fullmatch(value.strip()) and _CONFIG_TEXT.search(text):
            return "a config's name"  # "name: report-worker" in a Kubernetes manifest
        if h.entity == "ORGANIZATION" and value.strip().casefold() in _TECH_TERMS:
            return "product"  # "Export to CSV fails": a format, a protocol, a kind of software
        if h.entity in ("LOCATION", "ORGANIZATION") and not known and not h.part and \
                (_inner_cap(value) or " " not in value.strip() and product_after(text, h)
                 if h.entity == "LOCATION" else product_after(text, h)):
            return "product"  # "a LinkedIn message", "the Flask server" (an employer stays: "I work at PayPal")
        if h.entity == "CASE_NUMBER" and (_RATIO.fullmatch(value) or (m := _SPLIT.fullmatch(value)) and
                                          sum(int(g) for g in m.groups()) == 100) and \
                not _NUMBER_LABEL_BEFORE.search(text, max(0, h.start - 16), h.start):
            return "ratio"  # "the Schengen 90/180 rule", "24/7 support": two small numbers, no one's reference
        if h.entity == "CASE_NUMBER" and (_ERROR_BEFORE.search(text, max(0, h.start - 24), h.start) or
                                          _RULE_CODE.fullmatch(value) and
                                          _RULE_VERB_BEFORE.search(text, max(0, h.start - 12), h.start) or
                                          text[h.start - 1:h.start] in _QUOTES and _ERROR_MESSAGE_AFTER.match(text, h.end)):
            return "error code"  # "fails with 'P3009: migrate found …'", "error TS2345": a program's, no one's
        if h.entity == "CASE_NUMBER" and _CELL.fullmatch(value) and (
                _CELL_BEFORE.search(text, max(0, h.start - 9), h.start) or _CELL_AFTER.match(text, h.end)):
            return "cell reference"  # "=SUMIFS(D2:D500, …)": a spreadsheet's range
        if h.entity == "CASE_NUMBER" and _PATTERN_SAMPLE.search(_sentence_of(text, h.start)) and \
                _PATTERN_TALK.search(text):
            return "a pattern's sample"  # "a regex … Should match: INV-2024-00017": the strings it is tested on
        if h.entity == "CASE_NUMBER" and _TICKET_KEY.fullmatch(value) and _TICKET_TALK.search(text):
            return "ticket key"  # "PAY-2291 Checkout fails …" in a Jira ticket: the tracker's key, no one's
        if h.entity == "CASE_NUMBER" and _HEX_LITERAL.fullmatch(value):
            return "code literal"  # "can't decode byte 0xe9", "0x7ffd": a byte or an address in a program
        if h.entity == "CASE_NUMBER" and _LAW_BEFORE.search(text, max(0, h.start - 30), h.start):
            return "law or standard"  # "compensation under EU261", "compliant with ISO 27001", "per RFC 9110"
        if h.entity in ("CASE_NUMBER", "DATE", "DATE_TIME") and _TAX_FORM.fullmatch(value.strip()) and \
                _TAX_TALK.search(text):
            return "form or model"  # "a tax return (SA100)", "tax code 1257L W1/M1": the tax office's, everyone's
        if h.entity == "CASE_NUMBER" and _BIC.fullmatch(value.strip()) and _BIC_TALK.search(text):
            return "a bank's code"  # "bic: INGBNL2A", "SWIFT AIBKIE2D": the bank's, not the account holder's
        if h.entity in ("DATE", "DATE_TIME") and (m := _CODE_WORD.search(value)) and \
                not _MONTH_OR_DAY.match(m.group(0)):
            return "no date"  # "HbA1c", "NEWS2", "FY2026": a test's, a score's or a year's name, no one's day
        if h.entity == "CASE_NUMBER" and _FORM_NAME.fullmatch(value):
            return "form or model"  # "my W-2", "an I-9", "the P60": a form's or a model's name, everyone's
        if h.entity == "CASE_NUMBER" and sum(c.isalnum() for c in value) <= 2:
            return "too short to be anyone's"  # "3-D Secure"
        if h.entity in ("CASE_NUMBER", "DATE", "DATE_TIME") and _next_year(value):
            return "tax or school year"  # "the tax on a salary for 2025/26"
        if h.entity == "AMOUNT" and _BUDGET_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "the ask's budget"  # "a venue for 25 people, budget around €1,500": what to look for, no one's means
        if h.entity == "AMOUNT" and _HASH_BEFORE.search(text, max(0, h.start - 1), h.start):
            return "reference number"  # "#412"
        if h.entity in ("DATE", "DATE_TIME") and value.isdigit() and len(value) == 4 and (
                _NUMBER_GOES_ON.match(text, h.end) or h.start and (text[h.start - 1].isalnum() or
                                                                  text[h.start - 1] in "-/" and
                                                                  text[h.start - 2:h.start - 1].isalnum())):
            return "reference number"  # "invoice 2025-118": a year only begins the number
        if h.entity in ("DATE", "DATE_TIME") and value.isdigit() and len(value) == 4 and \
                _CODE_BEFORE.search(text, max(0, h.start - 4), h.start):
            return "reference number"  # "flight LH 1234", "BA 2490"
        if h.entity in ("DATE", "DATE_TIME") and _BARE_NUMBERS.fullmatch(value):
            return "no date"  # "two kids aged 6 and 9": small numbers alone name no day
        if h.entity in ("DATE", "DATE_TIME", "CASE_NUMBER") and \
                (stamp := _LOG_STAMP.match(text, text.rfind("\n", 0, h.start) + 1)) and stamp.end() >= h.end:
            return "a log's timestamp"  # "[2026-11-04 10:12] Call with …", "2026-11-28 14:02:17 [error]": a record's
        if h.entity in ("DATE", "DATE_TIME", "QUANTITY") and ((m := _ACCESS_STAMP.search(
                text, max(0, h.start - 30), min(len(text), h.end + 30))) and m.start() <= h.start and h.end <= m.end()):
            return "a log's timestamp"  # "[03/Dec/2026:08:14:07 +0000]" in an access log's line
        if h.entity in ("DATE", "DATE_TIME") and _MACHINE_TIME.fullmatch(value.strip()) and \
                not _BIRTH_BEFORE.search(text, max(0, h.start - 30), h.start):
            return "a machine's timestamp"  # "the server clock says 2026-12-03T09:30:00Z": a program's time
        if h.entity in ("DATE", "DATE_TIME") and _WEEK_TIME.fullmatch(value.strip()):
            return "day or time of the week"  # "move it to Friday", "at 3 pm": no one's date, and the ask's
        if h.entity in ("DATE", "DATE_TIME") and _DURATION.fullmatch(value) and \
                not _POINT_AFTER.match(text[h.end:h.end + 16]):
            return "duration"  # "a fisherman for 50 years", "rent unpaid for two months": no date of anyone's
        if h.entity == "NRP" and _language(text, h):
            return "language"  # "Translate to German:", "reply in Spanish": the task's language, no one's origin
        if h.entity == "LOCATION" and _FULL_POSTCODE.fullmatch(value.strip()):
            return None  # "London N1 4RH", "Dublin 5, D05 K2X4": a postcode names a street's few doors, no fact
        if h.entity in ("LOCATION", "NRP") and not known and (_TRIP_BEFORE.search(text, max(0, h.start - 40), h.start) or
                                                             _ROUTE_BEFORE.search(text, max(0, h.start - 80), h.start)) \
                and not (listed_name(value) and _zipf(value.strip().casefold()) < 3.5 and
                         listed_name(sibling_word(text, h) or "-")):
            return "trip asked about"  # "Plan a 3-day itinerary in Kyoto for a family …": where to go, not to live
            # (not "Invites are going to Zainab, Oscar, Mei-Lin …": given names English seldom writes, listed
            # together, are people; "Paris and Florence" are places)
        if h.entity in ("LOCATION", "NRP") and not known and not self._vouched(h) and \
                value.strip().casefold() in _regions():
            return "region"  # "I'm a landlord in Texas": the law asked about; a state or a country holds millions
        if h.entity in _PLACES and not known and not self._vouched(h) and not self._tied(text, h, persons):
            return "fact"
        if h.entity in ("CASE_NUMBER", "ORGANIZATION", "GOVERNMENT_ID") and not known and \
                _FLIGHT_NUMBER.fullmatch(value.strip()) and \
                _FLIGHT_CONTEXT.search(sentence_around(text, h.start, h.end)):
            return "a flight's number"  # "TP1351 LHR-LIS, 15 May", "Is BA 117 still an A380?": an airline's timetable
        if h.entity in ("CASE_NUMBER", "DATE") and not known and (
                _ORDER_LABEL_BEFORE.search(text, max(0, h.start - 24), h.start) or _ORDER_PREFIX.match(value.strip())):
            return "an order's number"  # "invoice INV-0893", "PO-26-1187", "ticket #88213": the shop's reference
        if h.entity == "PERSON" and not h.part and not known and not seen and _SAINT.fullmatch(value.strip()):
            return "a public person"  # "church visitors from St Sophia's", "St Brendan's": a saint names the place
        if h.entity in _READ and not h.part and not known and not seen and not self._vouched(h) and \
                public_org(value) and \
                not all(listed_name(w) for w in NAME_WORD.findall(value)) and \
                not _EMPLOYED_BEFORE.search(text, max(0, h.start - 40), h.start):
            return "a well-known organisation, product or work"  # "Medicare approved $312", "a Nissan Leaf", "Mario
            # Kart" (not words that may be someone's name, "Alexa", "Marta", "John Smith", nor an employer: "I work at
            # PayPal")
        if h.entity in _READ and not h.part and not known and not seen and \
                (self.cues.get(id(h), SIBLING_CUE) in (SIBLING_CUE, "after a title") or
                 self.cues.get(id(h)) in _THIRD_PARTY_CUES and
                 not _FIRST_PERSON_BEFORE.search(text, max(0, h.start - 40), h.start)) and \
                (public(value, surname=h.entity == "PERSON") or named_in_full(value, text)):  # "Bukayo Saka", "her
            return "a public person"  # husband Pierre Curie", "CEO Satya Nadella", "… then Saka went off" (a cue and a
            # first person tie them to the user: "my colleague Chris Evans" does)
        if h.entity in _READ and slot.role == "user" and not known and not seen and not h.part and \
                self.cues.get(id(h), SIBLING_CUE) in SHAPE_CUES and not self.identified.get(i) and \
                self._about_the_world(i, text) and \
                not any(near_the_writer(text, m.start(), m.end())  # any of its mentions
                        for m in re.finditer(re.escape(h.text), text)):
            return "a question about the world"  # "Who were Hakaru Hashimoto and Robert Graves?": the message reader
        return None

    @staticmethod
    def _tied(text: str, h: Hit, persons) -> bool:
        """Whether the sentence around `h` ties a person of the conversation to it."""
        a = h.start
        while a > 0 and not _SENTENCE_END.match(text[a - 1]):
            a -= 1
        m = _SENTENCE_END.search(text, h.end)
        b = m.end() if m else len(text)
        if any(p.start < b and a < p.end and p is not h and
               _not_a_persons(text, p, persons) not in _PUBLIC_REASONS and not public(p.text) for p in persons):
            return True  # a person of the conversation's (not "Marie Curie was born in Warsaw": a public life's place)
        sentence = _FRAME.sub(" ", text[a:b])
        question = sentence.rstrip().endswith("?")
        words = [w.casefold() for w in re.findall(r"[\w']+|[\w’]+", sentence)]
        for k, w in enumerate(words):
            w = w.replace("’", "'")
            if w == "me" and k and words[k - 1] in _ASKING:
                continue  # "help me plan a week in Lisbon", "tell me …", "… for me": the request, not the user's life
            if w in _TIES or w in PERSON_WORDS:
                return True
            if w == "i" and any(x in _I_VERBS and not (question and x in _TRIP_VERBS) for x in words[k + 1:k + 4]):
                return True  # "I live in …", not "can I still travel to Canada?" (the trip is what is asked)
        return False
