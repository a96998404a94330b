"""Quasi-identifiers in free text that Presidio's defaults miss: calendar dates and times, ages, case/file
numbers and other codes, money amounts and quantities, organisations (by their head word: "… Court",
"Ministry of …", "X, Y and Z"), places and street addresses, titled names ("Mr A. B. Smith"), handles and
labelled fields ("Seller: …", "Location: …"), occupations, family and marital status, health conditions.

Called by the Detector with the spaCy Doc it already computed (None when NER is off): the Doc adds the
entity types Presidio drops (DATE, TIME, MONEY, QUANTITY, CARDINAL, PERCENT, FAC) and the noun phrases
around occupation words. Returns (start, end, entity, score) tuples; labels come from `types.ENTITIES`.
Overlaps with Presidio's spans are expected: the anonymizer merges them.
"""

from __future__ import annotations

import regex as re

from .. import self_disclosure
from ..livelihoods import ACTIVITIES, is_livelihood
from . import quasi_lexicon as lx
from .hit_filter import filter_hits

Hit = tuple[int, int, str, float]

_CAP = r"\p{Lu}[\p{L}'’\-]*"  # a capitalised word (Unicode)
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_ORDINAL_DAY = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
                r"fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|twenty[- ](?:first|second|"
                r"third|fourth|fifth|sixth|seventh|eighth|ninth)|thirtieth|thirty[- ]first)")
_NUMBER_WORD = (r"(?:seventeen|thirteen|fourteen|eighteen|nineteen|fifteen|sixteen|seventy|hundred|eleven|twelve|"
                r"twenty|thirty|eighty|ninety|forty|fifty|sixty|three|seven|eight|four|five|nine|one|two|six|ten|oh)")
#: a date said in words: "the eleventh of June nineteen forty-four", "twenty second of march nineteen ninety"
_SPOKEN_DATE = (rf"(?:the\s)?{_ORDINAL_DAY}\s(?:of\s)?(?:january|february|march|april|may|june|july|august|september|"
                rf"october|november|december)(?:,?\s(?:nineteen|twenty|two\sthousand)(?:[\s-](?:and\s)?{_NUMBER_WORD})"
                rf"{{0,3}})?")
_NAME = r"\p{Lu}[\p{L}'’\-]+"
#: a street's name after its kind: capitalised words and the articles between them ("des Lilas", "de Alcalá")
_STREET_LINK = r"(?:de\s+la|de\s+los|de\s+las|de|del|des|du|di|della|dello|dei|delle|da|do|dos|das|la|le|les|el|los|las|d['’]|l['’])"
_STREET_WORDS = rf"(?:{_STREET_LINK}\s*)?{_CAP}(?:\s+(?:{_STREET_LINK}\s*)?{_CAP}){{0,3}}"
#: a postcode after an address ("…, 69003 Lyon": the town, a place of thousands or millions, is a place of its own)
#: a number that counts something is no house number ("on Main Street 3 years ago", "Park Road 12 miles on")
_NOT_A_COUNT = (r"(?!\s+(?:years?|months?|weeks?|days?|hours?|minutes?|times?|miles?|km|kilometres?|kilometers?|"
                r"metres?|meters?|percent|people|more|of)\b)")
_TOWN = r"(?:,\s+(?:\d{4,5}|\d{2}-\d{3})(?=\s+\p{Lu}))?"  # "69003 Lyon", "80-827 Gdańsk"
_TZ = r"(?:UTC|GMT|IST|CET|CEST|EET|EEST|BST|EST|EDT|CST|CDT|MST|MDT|PST|PDT|AEST|AEDT|NZST|NZDT|PHT|SGT|JST)"
_NUMW = lx.NUMBER_WORDS

_SUFFIX_CONDITION = re.compile(rf"\b{lx.MEDICAL_SUFFIX}\b")
#: words with a condition's ending that name no condition ("diploma", "diagnosis", "sympathy")
NOT_CONDITIONS = frozenset({
    "diploma", "diplomas", "diagnosis", "prognosis", "sympathy", "empathy", "apathy", "telepathy", "antipathy",
    "aroma", "aromas", "soma", "trophy", "philosophy", "theosophy", "academia", "nostalgia", "bohemia",
    "hypnosis", "oklahoma", "osmosis", "symbiosis", "metamorphosis", "apotheosis",
})

#: a British registration's shape: two letters of a region (no I, Q or Z), the age (02-29 or 51-79, since 2001),
#: three letters ("the van that stopped outside was WR19 KXF"); read only beside a vehicle's word ("the AB12 CDE
#: model" is a product's)
_UK_PLATE = re.compile(r"(?<![\w-])[A-HJ-PR-Y]{2}(?:0[2-9]|[12]\d|5[1-9]|[67]\d) [A-HJ-PR-Z]{3}(?![\w-])")
_VEHICLE_TALK = re.compile(r"(?i)\b(?:cars?|vans?|reg|registration|plates?|vehicles?|taxi|cab|lorry|truck|motorbike|"
                           r"parked|parking|drove|driving|driver|garage|MOT|DVLA|towed|clamped|speeding|ANPR)\b")

PATTERNS: list[tuple[str, float, re.Pattern]] = [
    # dates and times
    ("DATE", 0.9, re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+(?:{lx.MONTHS})\.?(?:,?\s+\d{{4}})?\b")),
    ("DATE", 0.9, re.compile(rf"\b(?:{lx.MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b")),
    ("DATE", 0.85, re.compile(rf"\b(?:(?:early|mid|late|end of|beginning of)[\s-])?(?:{lx.MONTHS}),?\s+\d{{4}}\b")),
    ("DATE", 0.95, re.compile(rf"\b\d{{4}}-\d{{2}}-\d{{2}}(?:[ T]\d{{1,2}}:\d{{2}}(?::\d{{2}})?)?(?:\s?{_TZ}\b)?")),
    ("DATE", 0.85, re.compile(r"(?<![\d/.])\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})(?![\d/.])")),
    ("DATE", 0.8, re.compile(rf"\b\d{{1,2}}[:.]\d{{2}}(?::\d{{2}})?\s?(?:[ap]\.?m\.?\b)?(?:\s?{_TZ}\b)?(?=\W|$)")),
    ("DATE", 0.8, re.compile(r"\b\d{1,2}\s?(?:a\.m\.|p\.m\.|am\b|pm\b)")),
    ("DATE", 0.6, re.compile(r"(?<![\w/.§,-])(?:1[6-9]\d\d|20\d\d)s?(?![\w/]|[.,]\d)")),
    # a named holiday is a day of the calendar ("on All Saints’ Day", "at Christmas", "during Ramadan")
    ("DATE", 0.8, re.compile(r"\b(?:(?:All\s+Saints|All\s+Souls|New\s+Year|Christmas|Boxing|Easter|Independence|"
                             r"Victory|Armistice|Remembrance|Memorial|Thanksgiving|Valentine|St\.?\s+\p{Lu}\p{Ll}+)"
                             r"[’']?s?[’']?\s+(?:Day|Eve)|Christmas|Easter|Ramadan|Eid(?:\s+al-\p{L}+)?|Diwali|Hanukkah|"
                             r"Passover|Yom\s+Kippur|Bayram)\b")),
    # ages
    ("AGE", 0.9, re.compile(r"\b(?:aged|age(?:d)? of|at the age of|age)\s+\d{1,3}\b", re.I)),
    ("AGE", 0.9, re.compile(rf"\b(?:\d{{1,3}}|{_NUMW})(?:[\s-](?:{_NUMW}))?[\s-](?:years?|yrs?|months?)[\s-]old\b", re.I)),
    ("AGE", 0.8, re.compile(r"\bin (?:his|her|their|my) (?:early |mid-?|late )?(?:teens|twenties|thirties|forties|fifties|"
                            r"sixties|seventies|eighties|nineties)\b", re.I)),
    # codes, case and file numbers, identity documents
    ("CASE_NUMBER", 0.85, re.compile(r"(?<![\w/.§,:])(?!\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})(?![\w/]))\d{1,6}(?:/\d{1,6}){1,3}(?![\w/])")),
    ("CASE_NUMBER", 0.8, re.compile(r"\b(?=[A-Z0-9/-]*\d)(?=[A-Z0-9/-]*[A-Z])[A-Z0-9]{1,6}(?:[-/][A-Z0-9]{1,12}){1,4}\b")),
    ("CASE_NUMBER", 0.8, re.compile(r"\b[A-Z]{1,3}\d{3,}[A-Z]?\b")),
    # a long code of capitals and digits mixed ("SMITH712035JD9AB", a UK driving licence; "K7QX2M9PLT"): a
    # reference, an identity document's number when an identity word comes before it; not a hexadecimal hash
    # ("3F9A2B7C1D": a letter past F)
    ("CASE_NUMBER", 0.75, re.compile(r"\b(?=[A-Z0-9]{0,19}\d)(?=[A-Z0-9]{0,19}[G-Z])[A-Z0-9]{8,20}\b")),
    ("CASE_NUMBER", 0.8, re.compile(r"\b0x[0-9A-Fa-f]{2,}\b")),
    ("CASE_NUMBER", 0.7, re.compile(r"\b(?:1[89]|20)\d\d:\d{1,5}\b")),  # "NJA 2019:123" (not a port pair "8000:8000")
    # a booking's, an order's or a ticket's reference after its name: letters and digits mixed ("Booking reference
    # QX7T2M", "PNR: K9XW4T", "confirmation code 7HJ2KQ", "Group booking with TAP, ref 7KQ4ZM")
    ("CASE_NUMBER", 0.8, re.compile(r"(?i:\b(?:booking|reservation|confirmation|record\s+locator|PNR|ticket|order|ref\.?)"
                                    r"(?:\s+(?:reference|ref\.?|number|no\.?|code|id))?(?:\s+is)?\s*[:#]?\s*)\K"
                                    r"(?=[A-Z0-9]{0,9}\d)(?=[A-Z0-9]{0,9}[A-Z])[A-Z0-9]{5,10}\b")),
    ("GOVERNMENT_ID", 0.85, re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    # a record's number after its label: a hospital's or a patient's number, an employee's, a door's or a PIN
    # ("hospital number RWH 3391027", "MRN 00458121", "Emp No: 004512", "Door code 4471", "student no. 19283746B")
    ("CASE_NUMBER", 0.85, re.compile(
        r"(?i:\b(?:MRN|hospital\s+(?:number|no\.?)|patient\s+(?:number|no\.?|id)|NHS\s+(?:number|no\.?)|"
        r"emp(?:loyee)?\.?\s+(?:no\.?|number|id)|staff\s+(?:no\.?|number|id)|payroll\s+(?:no\.?|number)|"
        r"NI\s+(?:no\.?|number)|door\s+code|access\s+code|alarm\s+code|gate\s+code|PIN|key\s+safe(?:\s+code)?|"
        r"student\s+(?:no\.?|number|id)|matric(?:ulation)?\s+(?:no\.?|number)|registration\s+(?:no\.?|number)|"
        r"membership\s+(?:no\.?|number)|candidate\s+(?:no\.?|number)))"
        r"\s{0,3}[:#]?\s{0,3}\K(?=[A-Z0-9 ]{0,16}\d)[A-Z0-9](?:[A-Z0-9]|\s(?=[A-Z0-9]))"
        r"{2,20}(?![\w])")),
    # a national identity or tax number after its own label, in the label's country's form ("BSN 273951841", "NIE
    # Y4829157E", "Steuer-ID 47 192 836 518", "codice fiscale BRNGLI85M52F205A", "T.C. Kimlik No: 38291746550",
    # "my CPF is 382.914.675-28"): the label says what it is whatever its digits look like
    ("GOVERNMENT_ID", 0.85, re.compile(
        r"(?i:\b(?:BSN|NIE|DNI|NIF|NIR|NISS|PESEL|Steuer-?ID|Steuer-?Identifikationsnummer|codice\s+fiscale|"
        r"T\.?\s?C\.?\s+Kimlik|Kimlik|CPF|CNPJ|PPSN?|National\s+Insurance|NINO|SIN|TFN|IRD|AHV|personnummer|"
        r"henkilötunnus|CNP|EGN|JMBG|OIB|Aadhaar|NRIC|HKID|RUT|CURP|CUIL|CUIT|BVN|NIN)\b\.?"
        r"(?:\s+(?:no|nr|number|n[º°o]))?\.?(?:\s+(?:is|es|est|ist|è|é|är|er|jest|is:))?)"
        r"\s{0,3}[:#]?\s{0,3}\K(?=[A-Z0-9 .\-/]{0,24}\d)[A-Z0-9](?:[A-Z0-9]|[ .\-/](?=[A-Z0-9])){4,24}")),
    # a vehicle's registration or identification number after its label ("Vehicle reg: KX16 HVT", "vehicle LR19 WZK",
    # "VIN: WF0AXXGCDAGU48317"): it names the car's keeper as surely as their name
    ("GOVERNMENT_ID", 0.85, re.compile(
        r"(?i:\b(?:vehicle(?:\s+reg(?:istration)?)?|reg(?:istration)?(?:\s+(?:no|number|plate|mark))?|number\s+plate|"
        r"licen[cs]e\s+plate|plate))\.?\s{0,3}[:#]?\s{0,3}\K[A-Z]{2}\d{2}\s?[A-Z]{3}\b")),
    ("GOVERNMENT_ID", 0.85, re.compile(r"\bVIN\s{0,3}[:#]?\s{0,3}\K[A-HJ-NPR-Z0-9]{17}\b")),
    # a British registration without its label, in its own shape, beside a vehicle's word (`_VEHICLE_TALK`)
    ("GOVERNMENT_ID", 0.8, _UK_PLATE),
    # money and quantities
    ("AMOUNT", 0.9, re.compile(rf"(?:(?:approximately|approx\.|about|some|around|over|nearly|almost)\s)?"
                               rf"(?:[{lx.CURRENCY_SYMBOLS}]\s?|\b(?:{lx.CURRENCY_CODES})\s?)\d(?:[\d,.' ]*\d)?"
                               r"(?:\s?(?:million|billion|bn|m|k)\b)?")),
    ("AMOUNT", 0.9, re.compile(rf"\b\d(?:[\d,.' ]*\d)?\s?(?:million\s|billion\s)?(?:\p{{Lu}}\p{{Ll}}+\s)?"
                               rf"(?:{lx.CURRENCY_WORDS}|{lx.CURRENCY_CODES})\b"
                               rf"(?:\s?\((?:{lx.CURRENCY_CODES})\))?", re.I)),
    ("AMOUNT", 0.8, re.compile(rf"\b(?:{_NUMW})(?:[\s-](?:{_NUMW}|and))*\s(?:{lx.CURRENCY_WORDS})\b", re.I)),
    ("QUANTITY", 0.7, re.compile(r"[+-]?\b\d(?:[\d,.]*\d)?\s?(?:%|per cent|percent|km/h|kph|mph|km|cm|mm|kg|metres?|meters?|"
                                 r"hectares?|ha|acres?|sq\.? ?m|square metres|ft|feet|miles?|tonnes?|tons?|litres?|"
                                 r"liters?|grams?|kilograms?|kilometres?|kilometers?)(?![\w/])")),
    # how many were accused or tried with someone ("the applicant and four other suspects", "together with 623 other
    # suspects"): a count that tells the case apart
    ("QUANTITY", 0.7, re.compile(rf"(?i)\b(?:and|with)\s+\K(?:\d+|{_NUMW})\s+other\s+(?:persons|people|suspects|"
                                 r"accused|defendants|co-accused|individuals|men|women|applicants|detainees|"
                                 r"prisoners)\b")),
    # people, handles, labelled fields
    ("PERSON", 0.9, re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Judge|Sir|Dame|Lady|Lord|Mme|Mlle|Herr|Frau)\.?"
                               rf"\s+(?:(?:\p{{Lu}}\.\s?){{1,3}}(?:{_NAME}(?:\s+{_NAME}){{0,3}})?|{_NAME}(?:\s+(?:\p{{Lu}}\.\s?)?{_NAME}){{0,3}})")),
    # a handle, not a URL's host after its credentials ("…:${DB_PASSWORD}@postgres:5432", "user:pass@db")
    ("USERNAME", 0.9, re.compile(r"(?<![\w@.}\]):/])@(?=[\w.]{0,30}[A-Za-z])[A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?"
                                 r"(?![\w.]*:\d)")),
    ("USERNAME", 0.8, re.compile(r"(?m)^\s*\K[\w.\-]{2,40}(?=\s+:\s)")),
    ("USERNAME", 0.8, re.compile(r"(?i)\b(?:user ?name|name|seller(?: name)?|author|posted by|buyer|reviewer|"
                                 r"contact name|nickname|handle)\s*[:=]\s*(?:[\"']\K[^\"'\n]{1,60}(?=[\"'])|"
                                 r"\K[^|\n:&\"']{1,60}?(?=\s*(?:\||\n|$|,|\(|&)|\s+[\w.-]{1,30}=))")),  # a quoted value, or
    # up to the next field: 'name="Funmilayo Oyelaran" ip=…', "name=jdoe ip=…" (not the rest of a log's line)
    ("USERNAME", 0.7, re.compile(r"\bUser\s+\K(?:\p{Lu}[\w.\-]+|[\w.\-]*\d[\w.\-]*)")),
    # a person's profile on a social network, written in a text ("linkedin.com/in/ayesharahman", "instagram.com/…")
    ("USERNAME", 0.85, re.compile(r"(?i)\b(?:linkedin\.com/in|instagram\.com|facebook\.com|twitter\.com|x\.com|"
                                  r"tiktok\.com/@|threads\.net/@)/?\K[A-Za-z0-9_.\-]{2,60}(?![\w/])")),
    # a place after its field label ("City: Leeds") — the label needs its colon: "City Council submitted …" is a
    # council — or after "lives in" / "based in", up to the end of the clause (a comma ends it: "lives in Kayseri,
    # was a student …")
    ("LOCATION", 0.8, re.compile(r"(?i)\b(?:location(?: for pickup)?|general location|city|address|hometown)\s*[:=]"
                                 r"\s*\K[^|\n.;]{2,60}?(?=\s*(?:\||\n|$|\.|;|–|-\s))")),
    ("LOCATION", 0.8, re.compile(r"(?i)\b(?:lives in|based in|pickup from|pickup at)\s*[:=]?\s*\K[^|\n.;,]{2,60}?"
                                 r"(?=\s*(?:\||\n|$|\.|;|,|–|-\s))")),
    # organisations and places by their head word
    ("ORGANIZATION", 0.75, re.compile(rf"\b(?:(?!(?:The|A|An|This|That|In|On|By|At|For|His|Her|Their|Our|My)\b){_CAP}\s+"
                                      rf"(?:(?:of|de|du|für|for|and|&)\s+)?){{1,5}}(?:{lx.ORG_HEADS})\b"
                                      rf"(?:\s+(?:of|for)\s+(?:the\s+)?{_CAP}(?:\s+{_CAP}){{0,3}})?")),
    ("ORGANIZATION", 0.75, re.compile(rf"\b(?:{lx.ORG_HEADS})\s+(?:of|for)\s+(?:the\s+)?{_CAP}(?:\s+(?:of\s+)?{_CAP}){{0,3}}")),
    ("ORGANIZATION", 0.7, re.compile(rf"\b{_NAME},\s+{_NAME},?\s+(?:and|&)\s+{_NAME}\b")),
    ("LOCATION", 0.75, re.compile(rf"\b(?:{lx.PLACE_HEADS})\s+of\s+{_CAP}(?:[\s-]{_CAP}){{0,2}}")),
    ("LOCATION", 0.7, re.compile(rf"\b(?:(?!(?:The|A|An|This|That|In|On|By|At|For)\b){_CAP}\s+){{1,3}}(?:{lx.PLACE_HEADS})\b")),
    ("STREET_ADDRESS", 0.85, re.compile(rf"(?<![£$€¥₹.,]|[£$€¥₹]\s)\b\d{{1,5}}[A-Za-z]?,?\s+(?:(?!(?:On|In|At|The|By|For|To|Of)\b)"
                                        rf"{_CAP}\s+){{1,3}}(?:{lx.STREET_HEADS})\b\.?"
                                        rf"(?:,\s+{_CAP}(?:\s+{_CAP})?)?")),
    ("STREET_ADDRESS", 0.8, re.compile(rf"\b\d{{1,4}}(?:st|nd|rd|th)\s+(?:{lx.STREET_HEADS})\b")),
    # a Japanese block address: chōme-ban-gō, then the district and perhaps the ward or city ("6-2-11 Roppongi,
    # Minato-ku", "1-8-1 Marunouchi, Chiyoda-ku")
    ("STREET_ADDRESS", 0.85, re.compile(rf"\b\d{{1,2}}-\d{{1,2}}-\d{{1,3}}\s+{_CAP}(?:,\s+{_CAP}-(?:ku|shi|cho|machi|gun)\b)?")),
    # an address line that ends in a city, a region and a postcode, the building number before or after the street
    # ("Mario Ridges 7248, Clarkview, South Carolina 66824", "12 Elm Grove, Leeds, West Yorkshire LS1 4AP")
    ("STREET_ADDRESS", 0.85, re.compile(rf"\b(?:\d{{1,5}}[A-Za-z]?\s+)?{_CAP}(?:\s+{_CAP}){{0,3}}(?:\s+\d{{1,5}}[A-Za-z]?)?"
                                        rf",\s+{_CAP}(?:[\s-]{_CAP}){{0,2}},\s+{_CAP}(?:\s+{_CAP}){{0,2}}\s+"
                                        r"(?:\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|\d{4,6})\b")),
    # the street's kind first, as French, Spanish, Italian, Portuguese and Catalan write it, the number before or
    # after, perhaps a postcode before the town ("5 Rue des Lilas, 69003 Lyon", "Calle de Alcalá 48, 28014 Madrid")
    ("STREET_ADDRESS", 0.85, re.compile(rf"\b\d{{1,4}}[A-Za-z]?,?\s+(?:{lx.STREET_FIRST})\s+{_STREET_WORDS}{_TOWN}")),
    ("STREET_ADDRESS", 0.85, re.compile(rf"\b(?:{lx.STREET_FIRST})\s+{_STREET_WORDS},?\s+\d{{1,4}}[A-Za-z]?"
                                        rf"(?:/\d{{1,4}}[A-Za-z]?)?\b{_TOWN}")),  # "ul. Długa 14/3": house / flat
    # the number after the street's name and kind, as German, Dutch, Nordic, Turkish and others write it
    # ("Bahariye Cd. 42", "Bahariye Caddesi No: 42", "Hauptstraße 12", "Kerkstraat 5a", "Storgatan 14")
    ("STREET_ADDRESS", 0.85, re.compile(rf"\b(?:{_CAP}\s+){{1,3}}(?:{lx.STREET_HEADS})\b\.?(?:\s+No[.:]?)?\s+\d{{1,4}}[A-Za-z]?\b"
                                        rf"(?![.,:]\d){_NOT_A_COUNT}")),
    # a German street named after a person, its parts hyphenated ("Karl-Marx-Straße 112", "Konrad-Adenauer-Allee 3")
    ("STREET_ADDRESS", 0.85, re.compile(r"\b(?:\p{Lu}\p{Ll}+-){1,3}(?:Straße|Strasse|Str\.|Allee|Weg|Platz|Gasse|Ring|Damm|"
                                        r"Ufer|Chaussee)\s+\d{1,4}[a-zA-Z]?\b")),
    # an Irish Eircode ("V95 K2T8", "D02 X285")
    ("LOCATION", 0.8, re.compile(r"\b[AC-FHKNPRTV-Y]\d[0-9W]\s?(?=[0-9AC-FHKNPRTV-Y]{0,3}\d)(?=[0-9AC-FHKNPRTV-Y]{0,3}"
                                 r"[AC-FHKNPRTV-Y])[0-9AC-FHKNPRTV-Y]{4}\b")),
    ("STREET_ADDRESS", 0.85, re.compile(r"\b\p{Lu}\p{Ll}+(?:straße|strasse|str\.|straat|weg|gasse|laan|plein|gracht|allee|"
                                        r"damm|ufer|platz|vej|gade|gatan|vägen|veien|gata|katu|tie|utca|út)\s+\d{1,4}[a-zA-Z]?\b"
                                        rf"(?![.,:]\d){_NOT_A_COUNT}")),
    ("STREET_ADDRESS", 0.75, re.compile(rf"\b(?:(?!(?:The|A|An|On|In|At|By|For|To|Of|Off|This|That|Our|My|Your|Their|His|"
                                        rf"Her|Down|Up|Along|Across)\b)(?!(?:High|Main|Market|Church|Station)\s+(?:Street|Road)\b)"
                                        rf"{_CAP}\s+){{1,3}}(?:Street|Road|Avenue|Lane|Boulevard|Marg|Drive|Caddesi|"
                                        rf"Sokak|Strasse|Straße|Throughway)\b")),
    # a phone number and a date spoken and written down as words ("oh eight seven three one four two two nine oh six",
    # "plus four eight six zero …", "born twenty second of march nineteen ninety", "the eleventh of June nineteen
    # forty-four"): dictation writes them so
    ("PHONE_NUMBER", 0.8, re.compile(rf"(?i)\b(?:plus\s)?(?:(?:(?:double|triple)\s)?{_DIGIT_WORD}[\s,-]{{1,2}}){{6,14}}"
                                     rf"{_DIGIT_WORD}\b")),
    ("DATE_OF_BIRTH", 0.9, re.compile(rf"(?i)\b(?:born(?:\s+on)?|date\s+of\s+birth(?:\s+is)?|birthday(?:\s+is)?|"
                                      rf"dob(?:\s+is)?)[\s:,]{{1,3}}\K{_SPOKEN_DATE}")),
    ("DATE", 0.8, re.compile(rf"(?i)\b{_SPOKEN_DATE}")),
    # an address typed or dictated in lower case ("12 adeola street", "27 willow crescent", "19 fern rd", "4417 calle
    # los pinos", "ulica Długa 17"): a house number, a street's words that are no count's or a route's, its kind
    ("STREET_ADDRESS", 0.8, re.compile(
        r"\b\d{1,5}[a-z]?\s+(?:(?!(?i:the|a|an|of|on|in|at|to|for|by|down|up|off|across|along|my|our|your|his|her|their|"
        r"this|that|people|persons|times|miles|km|mins?|minutes|hours|days|weeks|years|more|other|cars?|houses?|very|"
        r"big|small|new|old|main|high)\b)\p{L}[\p{Ll}'’\-]{1,20}\s+){1,3}(?:street|st|road|rd|avenue|ave|drive|lane|ln|"
        r"crescent|close|terrace|gardens|grove|mews|boulevard|blvd|court)\b(?!\s+(?:friends?|to|by|call|game|attention|"
        r"look|eye|relationship|contact|match|race|shave|second|range|quarters))")),
    ("STREET_ADDRESS", 0.8, re.compile(r"\b\d{1,5}[a-z]?\s+(?:calle|rua|rue|via|avenida|ulica|ul\.)\s+"
                                       r"(?:(?:de|del|la|las|los|da|do|das|dos|des|du|di)\s+)?\p{L}[\p{L}'’\-]{1,20}"
                                       r"(?:\s+(?!(?:in|at|on|to|and|for|near|by|de|del)\b)\p{Ll}[\p{Ll}'’\-]{1,20})?\b")),
    ("STREET_ADDRESS", 0.8, re.compile(r"\b(?:ulica|ul\.|calle|rua|rue|via)\s+\p{Lu}[\p{L}'’\-]{1,20}\s+\d{1,4}[a-z]?"
                                       r"(?:\s+(?:mieszkanie|m\.|piso|apt\.?|flat)\s+\d{1,4})?\b")),
    # a house's, a block's or a lot's number first, as Pakistan, the Philippines, Malaysia, Jamaica and Nigeria write
    # it: "House 27, Street 9", "Blk 7 Lot 22, Phase 2", "No. 12, Jalan SS 2/24", "Lot 45, Greater Portmore", "Plot 14"
    ("STREET_ADDRESS", 0.8, re.compile(
        r"\b(?:House|Plot|Blk\.?|Block|Lot|No\.)[ \t]?\d{1,5}[A-Z]?(?:/[A-Z0-9]{1,3})?"
        r"(?:,?[ \t](?:Street|St\.?|Road|Lane|Lot|Phase|Sector|Jalan|Jln\.?|Lorong|Purok|Sitio)[ \t]?[\w/]{1,12}"
        r"(?:[ \t][A-Z0-9][\w/]{0,12}){0,2}|,[ \t](?:[A-Z][\p{Ll}'’-]{1,20}[ \t]){0,2}[A-Z][\p{Ll}'’-]{2,20}"
        r"(?=,|\n|$)){1,3}")),
    # demographics and health
    ("GENDER", 0.85, re.compile(r"(?i)\b(?:sex|gender)\s*(?:[:=]\s*|\(|\bis\s+)\K(?:male|female|non-?binary|"
                                r"transgender|intersex|other|man|woman|m|f|x)\b")),
    ("GENDER", 0.7, re.compile(r"(?<=\()(?:[Mm]ale|[Ff]emale|[Nn]on-?binary|M|F)(?=\))")),
    ("OCCUPATION", 0.7, re.compile(r"\b(?:works?|working|worked|employed|job|hired|trained|training|career)\s+as\s+"
                                   r"(?:an?\s+|the\s+)?\K[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?"
                                   r"(?=\s*(?:[.,;:!?)]|$|\s+(?:and|at|in|for|from|with|who|since|but|on|to|until|when)\b))")),
    ("OCCUPATION", 0.7, re.compile(rf"\b(?:{lx.DEGREES})\b")),
    # a business someone runs or owns says what they do ("The applicants run a fishing farm", "the owner of a
    # potable and industrial water station", "we run a small bakery")
    ("OCCUPATION", 0.7, re.compile(r"\b(?:run|runs|ran|running|own|owns|owned|owning|operate|operates|operated|"
                                   r"operating|owners?\s+of|proprietors?\s+of)\s+(?:an?|their|his|her|our|my)\s+"
                                   r"(?:(?:small|little|family|local)\s+)?\K(?:(?!(?:to|the|a|an|of|in|on|at|for|from|with|by|near|"
                                   r"into|through)\s)[a-z][a-z-]+\s+){0,4}?(?:farm|shop|"
                                   r"business|restaurant|bakery|café|cafe|bar|pub|hotel|store|firm|factory|workshop|"
                                   r"garage|salon|pharmacy|kiosk|stall|studio|agency|station|mill|vineyard|brewery|"
                                   r"boutique|dealership|practice|clinic|nursery|guesthouse)s?\b")),
    ("OCCUPATION", 0.6, re.compile(r"\b(?!(?:the|a|an|his|her|their|my|our|this|that|other|another|any|each|every|"
                                   r"no|some)\s)[a-z]{3,}\s(?:officer|assistant|worker|agent|operator|driver|clerk|"
                                   r"manager|technician|servant|practitioner|attendant|inspector|guard|captain|sergeant|"
                                   r"lieutenant|colonel|corporal)s?\b")),
    # what a titled person is, in apposition to their name ("Mr Torres, a printmaker from Leeds", "Dr Woods, a rural
    # practice surveyor who"); a representative's capacity ("Mr A., a lawyer practising in Y") is followed by no such
    # word, and a relation ("Ms Lee, a friend from school") is no job
    ("OCCUPATION", 0.65, re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+(?:\p{{Lu}}\.\s?){{0,3}}{_NAME}(?:\s+{_NAME}){{0,2}},"
                                    r"\s+an?\s+\K(?:[a-z][a-z-]*\s+){0,3}?[a-z][a-z-]+(?<!\b(?:friend|colleague|neighbou?r|"
                                    r"relative|cousin|member|classmate|acquaintance|client|customer|patient|visitor|guest))"
                                    r"(?=\s+(?:from|who|living|residing|based)\b)")),
    # what someone lives by ("Originally living by hunting, fishing and collecting", "earns a living from fishing"):
    # a livelihood, said of them
    ("OCCUPATION", 0.7, re.compile(r"\b(?:living|lived|lives|live|(?:earn|earns|earned|earning|make|makes|made|making)\s+"
                                   r"(?:a|their|his|her|my|our)\s+living)\s+(?:by|from|off)\s+\K[a-z]+ing"
                                   r"(?:,\s+[a-z]+ing)*(?:,?\s+(?:and|or)\s+[a-z]+ing)?\b")),
    # a person described by the colour of their skin or their people ("a black woman", "Roma families"): ethnic origin
    ("NRP", 0.7, re.compile(rf"(?i)\b{lx.ETHNIC_PERSON}\b")),
    ("FAMILY", 0.8, re.compile(rf"\b(?:{lx.MARITAL})\b", re.I)),
    ("FAMILY", 0.8, re.compile(rf"\b(?:(?:my|our)\s+)?(?:\d+|{_NUMW}|trio of|pair of|couple of)\s+(?:[a-z]+\s+){{0,2}}"
                               rf"(?:{lx.KIN_NOUNS})\b", re.I)),
    # a parent and how many children ("mom of 2", "a widowed dad to 3 amazing kids"): the person's own family
    ("FAMILY", 0.8, re.compile(rf"\b(?:parent|mother|father|mom|mum|dad|mama|papa)\s+(?:of|to)\s+(?:\d+|{_NUMW})\b"
                               rf"(?:\s+(?:[a-z]+\s+){{0,2}}?(?:{lx.KIN_NOUNS})\b)?", re.I)),
    ("FAMILY", 0.6, re.compile(r"\b(?:our|my)\s+little\s+ones?\b", re.I)),
    ("MEDICAL_CONDITION", 0.7, _SUFFIX_CONDITION),
    ("MEDICAL_CONDITION", 0.7, re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(lx.MEDICAL_WORDS, key=len, reverse=True))
                                          + r")\b(?:\s+of\s+(?:the\s+)?(?:[a-z]+\s+){0,3}[a-z]+)?", re.I)),
]

_ID_CONTEXT = re.compile(r"(?i)(passport|national id|identity card|id card|licen[cs]e|ssn|social security|\bid\b)[^.\n]{0,25}$")
_PHONE_CONTEXT = re.compile(r"(?i)(phone|call|tel|mobile|contact|whatsapp|text|sms|fax)[^.\n]{0,30}$")
#: (a dot inside only between digits: "+44 7392 118 405. 4 yrs at Ocado" is a number, then a sentence's end)
#: a number's separators never cross a line: "… 07811 465 209\n2. Mohan …" ends before the next list item's number
_PHONE = re.compile(r"(?<![\w+/.-])(?:\+\d{1,3}[^\S\r\n]?|\+\d{1,3}[.-])?(?:\(\d{1,4}\)[^\S\r\n]?)?\d"
                    r"(?:[\d-]|[^\S\r\n]|\.(?=\d)){5,16}\d(?![\w/]|[.,]\d)")
_LEGAL_REF = re.compile(r"(?i)(art(icle)?s?\.?|rules?|protocols?|§|para(graph)?s?\.?|sections?|chapters?|pages?|p\.|pp\.|"
                        r"items?|points?|no\.?|nos\.?|numbers?|acts?|laws?|codes?|volume|vol\.|series|annex|appendix|"
                        r"schedule|and|to|or|-|–|,)\s*$")
_CONNECTOR = re.compile(r"(?i)(?:\band|\bto|\bor|-|–|,)\s*$")
_LEGAL_WORD = re.compile(r"(?:(?i:\b(?:art(?:icle)?s?\.?|rules?|protocols?|para(?:graph)?s?\.?|sections?|chapters?|"
                         r"pages?|pp?\.|items?|points?|acts?|laws?|codes?|vol(?:ume)?\.?|series|annex|appendix|"
                         r"schedule|nos?\.?|numbers?))|§)(?:[\d\s,§().–-]|\band\b|\bor\b|\bto\b)*$")


def _legal_ref(text: str, s: int) -> bool:
    """Does a legal reference end right before `s` ("Article 6 § ", "Rule 59 and ")? A connector ("and", "-",
    ",") continues one only when a reference word precedes it: in "born in 1943 and 1939" it joins two years."""
    before = text[max(0, s - 14): s]
    if not _LEGAL_REF.search(before):
        return False
    return not _CONNECTOR.search(before) or _LEGAL_WORD.search(text[max(0, s - 40): s]) is not None


_SPACY = {"DATE": "DATE", "TIME": "DATE", "MONEY": "AMOUNT", "QUANTITY": "QUANTITY", "PERCENT": "QUANTITY",
          "CARDINAL": "QUANTITY", "FAC": "LOCATION"}
_RECURRING = re.compile(r"(?i)(?:every|each)\s")
_RECURRING_BEFORE = re.compile(r"(?i)\b(?:every|each)\s+$")
_DATEISH = re.compile(rf"\d|\b(?:{lx.MONTHS}|{lx.WEEKDAYS}|{_NUMW})\b", re.I)


#: a greeting addresses its reader by name or handle: "Welcome back, moorebrenda!", "Hi jsmith_88,"
_GREETED = re.compile(r"(?i:\b(?:welcome(?:\s+back)?|hi|hello|hey|dear|thanks|thank\s+you|good\s+(?:morning|afternoon|"
                      r"evening)),?[ \t]+)([a-z][a-z0-9_.\-]{3,30})(?=[ \t]*[!,.?:;]|$)")


def _greeted_handles(text: str) -> list[Hit]:
    """A lower-case handle a greeting addresses (not an English word: "Hi there", "Hello everyone" stay)."""
    from .hit_filter import zipf

    out: list[Hit] = []
    for m in _GREETED.finditer(text):
        v = m.group(1).rstrip(".-")
        if re.search(r"[\d_.]", v) or zipf(v.lower()) < 2.0:
            out.append((m.start(1), m.start(1) + len(v), "USERNAME", 0.75))
    return out


_DOTTED_QUAD = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)")


_ZONE_AFTER_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?[ \t]?$")


def _phones(text: str) -> list[Hit]:
    out: list[Hit] = []
    for m in _PHONE.finditer(text):
        digits = sum(c.isdigit() for c in m.group())
        if digits < 7 or digits > 15 or _DOTTED_QUAD.fullmatch(m.group()):
            continue  # "94.173.58.210": an IP address (the pattern layer's), not a phone number
        before = text[max(0, m.start() - 40): m.start()]
        if re.match(r"(?:1[89]|20)\d\d-[01]\d-[0-3]\d(?!\d)", m.group()):
            continue  # "2026-10-22 16:40": a date and its hour
        if _ZONE_AFTER_TIME.search(before) and re.match(r"\+\d{4}(?!\d)", m.group()):
            continue  # "16:40:11 +0200 212" in git blame: a time's zone and a line number
        if _ID_CONTEXT.search(before):
            out.append((m.start(), m.end(), "GOVERNMENT_ID", 0.8))
        elif _PHONE_CONTEXT.search(before) or m.group().startswith(("+", "(")) or digits >= 9:
            out.append((m.start(), m.end(), "PHONE_NUMBER", 0.75))
    return out


#: a list or heading number: "3. The proceedings …" at the start of a line, "(2) the provisions", "Article 52 (4)"
_ENUM_BEFORE = re.compile(r"(?:^|\n)[ \t]*(?:\(?[ \t]*)$|\([ \t]*$")
_ENUM_AFTER = re.compile(r"[ \t]*(?:\.(?:\s|$)|\))")


def _enumeration(text: str, s: int, e: int) -> bool:
    """Is the number at text[s:e] one that numbers a list item, a heading or a sub-paragraph (not a count)?"""
    if not text[s:e].isdigit():
        return False
    before = text[max(0, s - 12): s]
    return bool(_ENUM_BEFORE.search(before) or s == 0) and _ENUM_AFTER.match(text, e) is not None


def _from_doc(doc, text: str) -> list[Hit]:
    out: list[Hit] = []
    for ent in doc.ents:
        label = _SPACY.get(ent.label_)
        if label is None:
            continue
        s, e, t = ent.start_char, ent.end_char, ent.text
        if label == "DATE" and (not _DATEISH.search(t) or _RECURRING.match(t)
                                or _RECURRING_BEFORE.search(text[max(0, s - 10): s])):
            continue  # a recurrence ("every Monday", "every two years") is a schedule, no day of anyone's life
        if ent.label_ == "CARDINAL" or label == "DATE" and t.isdigit() and len(t) <= 3:
            # a legal reference's or a list's number ("Articles 6 § 2, 8 and 13"), which spaCy may call a date
            if t.lower() in ("one", "a", "1") or _legal_ref(text, s) or _enumeration(text, s, e):
                continue
        out.append((s, e, label, 0.6))
    out += _livelihoods(doc)
    for tok in doc:
        lemma = tok.lemma_.lower()
        if tok.pos_ not in ("NOUN", "PROPN") or lemma not in lx.OCCUPATIONS and tok.lower_ not in lx.OCCUPATIONS:
            continue
        start = tok.i
        while start > 0 and doc[start - 1].dep_ in ("compound", "amod", "nmod") and doc[start - 1].head.i >= tok.i \
                and doc[start - 1].pos_ in ("NOUN", "ADJ", "PROPN", "VERB"):
            start -= 1
        if start == tok.i and (lemma in lx.WEAK_OCCUPATIONS or tok.lower_ in lx.WEAK_OCCUPATIONS):
            continue
        out.append((doc[start].idx, tok.idx + len(tok.text), "OCCUPATION", 0.65))
    return out


def _livelihoods(doc) -> list[Hit]:
    """A trade named by its activity: a lower-case noun and an activity noun after it ("reindeer herding", "sheep
    farming", "winter grazing"; livelihoods.py), as the tagger reads them (a lower-case word it calls a proper noun
    is a noun: "reindeer"; an adjective is not: "organic farming"; no tags: nothing found)."""
    out: list[Hit] = []
    for tok in doc:
        if tok.i == 0 or tok.lower_ not in ACTIVITIES or tok.tag_ not in ("NN", "VBG"):
            continue
        prev = doc[tok.i - 1]
        if prev.tag_.startswith("NN") and prev.text.islower() and is_livelihood(f"{prev.text} {tok.text}") \
                and prev.idx + len(prev.text) < tok.idx:
            out.append((prev.idx, tok.idx + len(tok.text), "OCCUPATION", 0.65))
    return out


#: a marital status that names a benefit scheme ("Widow's Bereavement Allowance", "a widowed mother's allowance",
#: "a widower's pension"): what the law pays, not the status of the person the text is about
_FAMILY_SCHEME = re.compile(r"(?i)(?:[’']s)?(?:\s+(?:parent|mother|father)[’']s)?\s+(?:bereavement\s+)?(?:allowances?|"
                            r"pensions?|payments?|benefits?|credits?|grants?|schemes?|supplements?)\b")
#: "separated" of things apart ("separated from the cells by a partition", "separated off"), not of a couple
_APART = re.compile(r"(?i)\s+(?:off\b|by\b|from\s+(?:the|a|an|its|this|that)\b)")


#: an address's label, and a value after it that starts with a house number and a capitalised street: a street
#: address (a "Location:" label stays a place: "Location: 23, Swamy Marg, Hajipur" is where a seller is)
_ADDRESS_LABEL = re.compile(r"(?i)address\s*[:=]\s*$")
_HOUSE_FIRST = re.compile(rf"\d{{1,5}}[A-Za-z]?,?\s+{_CAP}\s+{_CAP}")


def detect_quasi(text: str, doc) -> list[Hit]:
    """Located quasi-identifiers (and a few direct ones: titled names, handles, codes) in one text."""
    out: list[Hit] = []
    for label, score, pat in PATTERNS:
        for m in pat.finditer(text):
            s, e = m.span()
            if (e - s < 2 and label != "GENDER") or not text[s:e].strip():
                continue
            if label == "CASE_NUMBER" and _ID_CONTEXT.search(text[max(0, s - 40): s]):
                label_ = "GOVERNMENT_ID"
            elif label == "LOCATION" and _HOUSE_FIRST.match(text, s, e) and _ADDRESS_LABEL.search(text, max(0, s - 12), s):
                label_ = "STREET_ADDRESS"  # "address: 17 Admiralty Way, Lekki, Lagos": a house number first
            else:
                label_ = label
            if label == "DATE" and score < 0.7 and _legal_ref(text, s):
                continue
            if pat is _SUFFIX_CONDITION and text[s:e].lower() in NOT_CONDITIONS:
                continue
            if pat is _UK_PLATE and not _VEHICLE_TALK.search(text, max(0, s - 80), min(len(text), e + 40)):
                continue
            if label == "FAMILY" and (_FAMILY_SCHEME.match(text, e) or _APART.match(text, e) or _legal_ref(text, s)):
                continue
            out.append((s, e, label_, score))
    out += _phones(text) + _greeted_handles(text)
    if doc is not None:
        out += _from_doc(doc, text)
    # the writer's own attributes (self_disclosure.py) carry their own cue of self-reference: the filter's rules for
    # a job in the story ("my| master's degree" after a possessive) are not theirs
    return filter_hits(text, out) + self_disclosure.find(text)
