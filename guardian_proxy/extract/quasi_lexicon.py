"""Word lists behind the narrative recognizers: generic English vocabulary for occupations, family and
marital status, health conditions, organisation and place heads, currencies. General knowledge only — no
names taken from any benchmark."""

from __future__ import annotations

# currencies live in one shared module (the anonymizer's residue scan reads them too); lx.CURRENCY_* stay here
from ..currencies import CURRENCY_CODES, CURRENCY_SYMBOLS, CURRENCY_WORDS  # noqa: F401

# job nouns too (the self-disclosure rules, guardian_proxy/self_disclosure.py, read them in the anonymizer's guesser)
from ..occupations import OCCUPATIONS, WEAK_OCCUPATIONS  # noqa: F401

MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
          "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
WEEKDAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                "hundred|thousand|million|billion|a couple of|several|a few|dozens of|a dozen")

DEGREES = r"Ph\.?D|MBA|M\.?Sc|B\.?Sc|M\.?D|B\.?A|M\.?A|LL\.?M|LL\.?B|RN|EMT|CPA"

MARITAL = r"married|divorced|widowed|widow|widower|separated|engaged|remarried|single (?:mum|mom|dad|parent|father|mother)"
KIN_NOUNS = (r"kids?|kiddos?|children|child|sons?|daughters?|little ones?|babies|baby|toddlers?|boys|girls|"
             r"grandchildren|grandkids|twins|triplets|legends|munchkins|angels|blessings")

#: one person described by the colour of their skin or their people ("a black woman", "a Roma mother"): ethnic
#: origin, written in lower case as often as not; a group ("black people", "Roma families") is what a text is about,
#: not someone
ETHNIC_PERSON = (r"(?:black|white|asian|hispanic|latino|latina|roma|romani|gypsy)\s+(?:man|woman|person|boy|girl|"
                 r"child|mother|father)")

MEDICAL_SUFFIX = r"[a-z]+(?:itis|osis|algia|aemia|emia|opathy|oma|ectomy|plegia|phrenia|trophy|iasis|pathy|otomy|plasty)"
MEDICAL_WORDS = {
    "cancer", "diabetes", "depression", "hiv", "aids", "asthma", "epilepsy", "dementia", "stroke", "paralysis",
    "pregnancy", "pregnant", "miscarriage", "tumour", "tumor", "leukaemia", "leukemia", "schizophrenia",
    "autism", "adhd", "anxiety", "ptsd", "alzheimer's", "parkinson's", "hepatitis", "tuberculosis",
    "disability", "disabled", "deaf", "blind", "blindness", "deafness", "amputation", "fracture", "concussion",
    "haemorrhage", "hemorrhage", "infarction", "heart attack", "chronic illness", "chronic pain", "insomnia",
    "bipolar disorder", "psychosis", "myopia", "hyperopia", "obesity", "anorexia", "bulimia", "addiction",
    "alcoholism", "overdose", "covid-19", "coronavirus", "influenza", "pneumonia", "allergy", "allergies",
    "migraine", "migraines", "injuries", "injury", "wound", "wounds", "bruises", "bruising", "scar", "scars",
}

ORG_HEADS = (
    "Court|Tribunal|Ministry|University|College|Hospital|Clinic|Clinique|Prison|Police|Bank|Company|Inc|Ltd|LLC|"
    "PLC|plc|GmbH|AG|SA|Corp|Corporation|Group|Party|Council|Office|Agency|Department|Association|Foundation|"
    "Institute|Institution|School|Academy|Fund|Authority|Municipality|Prosecutor|Prosecutor's Office|"
    "Directorate|Board|Commission|Committee|Service|Services|Union|Federation|Society|Centre|Center|Church|"
    "Army|Gendarmerie|Brigade|Regiment|Battalion|Command|Headquarters|Station|Bureau|Trust|Partners|"
    "Associates|Holdings|Industries|Enterprises|Solutions|Technologies|Systems|Store|Shop|Cafe|Restaurant|"
    "Hotel|Newspaper|Magazine|Press|Radio|Television|Chamber|Cemetery|Library|Museum|Network|Labs|Studio|"
    "Studios|Consulting|Ventures|Logistics|Pharmacy|Market|Mall|Factory|Works|Mills|& Co|and Sons|& Sons"
)
PLACE_HEADS = ("District|Province|Region|County|Borough|Village|Municipality|City|Town|Township|Prefecture|"
               "Oblast|Voivodeship|Canton|Department|Commune|Parish|Neighbourhood|Neighborhood|Quarter|Island|"
               "Islands|Valley|Peninsula|Mountains?|Lake|River|Bay|Suburbs?|State|Territory")
#: the kinds of street that come before the street's name in French, Spanish, Italian, Portuguese, Catalan and Polish
#: ("Rue des Lilas", "Calle de Alcalá", "Via Roma", "ulica Marszałkowska")
STREET_FIRST = (r"Rue|Avenue|Avenida|Av\.|Calle|Carrer|Camino|Paseo|Plaza|Via|Viale|Corso|Piazza|Piazzale|Vicolo|Largo|"
                r"Rua|Travessa|Praça|Estrada|Alameda|Boulevard|Chemin|Allée|Impasse|Quai|Place|Cours|Ulica|Aleja|ul\.|Ul\.|"
                # as French, Spanish, Portuguese and Italian write them in lower case ("27 rue des Martyrs"); not
                # the English words "via", "avenue", "place"
                r"rue|chemin|allée|impasse|calle|avenida|rua|viale|piazza")
STREET_HEADS = ("Street|St|Road|Rd|Avenue|Ave|Drive|Dr|Lane|Ln|Boulevard|Blvd|Way|Place|Pl|Court|Ct|Square|Sq|"
                "Terrace|Crescent|Close|Marg|Nagar|Chowk|Circle|Highway|Hwy|Parkway|Pkwy|Alley|Row|Walk|"
                "Throughway|Expressway|Caddesi|Sokak|Sokağı|Cad|Cd|Sk|Sok|Bulvarı|Blv|ulica|ul|Strasse|Straße|Rue|Via|Calle|"
                "Allee|Chaussee|Damm|Gasse|Platz|Ufer|Weg|Park|Gardens|Grove|Mews|Cottages|Rise|Heights|Parade|Vale|"
                "Meadows|Wynd|Wharf|Quay")
