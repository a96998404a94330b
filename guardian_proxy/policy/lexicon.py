"""Lexicons and rules that turn one policy sentence into structured statement fields.

Values follow the project's vocabularies (`types.CATEGORIES`, `RECIPIENT_CLASSES`, `PURPOSES`,
`PRACTICES`, `CONDITIONS`); the OPP-115 annotation scheme (categories "First Party Collection/Use",
"Third Party Sharing/Collection", "Data Retention", "Data Security", "User Choice/Control",
"User Access, Edit and Deletion"; attributes "Personal Information Type", "Third Party Entity",
"Purpose", "Choice Type", "Retention Period", "Identifiability") guided the terms. Rules, not a model:
each value is a regular expression over the lower-cased sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


def _rx(*alts: str) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(alts) + r")\b", re.I)


CATEGORY_RX: dict[str, re.Pattern] = {
    "credentials": _rx(r"passwords?", r"passcodes?", r"pins?", r"login (?:credentials|information|details|data)",
                       r"credentials?", r"security (?:questions?|codes?)", r"authentication (?:data|information|tokens?)",
                       r"api keys?", r"access tokens?", r"two-factor", r"2fa", r"one-time (?:codes?|passwords?)"),
    "health": _rx(r"health\w*", r"medical", r"medications?", r"prescriptions?", r"diagnos[ie]s", r"symptoms?",
                  r"diseases?", r"illness(?:es)?", r"fitness", r"heart rate", r"step counts?", r"wellness",
                  r"disabilit(?:y|ies)", r"genetic", r"biometrics?", r"pregnan\w*", r"mental", r"patients?"),
    "financial": _rx(r"payment (?:information|details|data|cards?|methods?|instruments?)", r"credit (?:cards?|scores?|history|reports?)",
                     r"debit cards?", r"card (?:numbers?|details)", r"bank (?:accounts?|details|information)",
                     r"billing (?:information|details|data|address(?:es)?)", r"financial (?:information|data|details|accounts?)",
                     r"transaction (?:data|information|history|details)", r"transactions", r"(?:your|past) purchases", r"purchases you make",
                     r"purchase (?:history|information|data|details)", r"income", r"salary", r"iban", r"account balances?"),
    "government_id": _rx(r"social security(?: numbers?)?", r"ssns?", r"passports?", r"driver'?s?'? licen[cs]es?",
                         r"national (?:id|identity|identification)(?: numbers?| cards?)?",
                         r"government[- ]issued (?:id|identification|identity)\w*", r"identity (?:cards?|documents?)",
                         r"id cards?", r"tax (?:id|identification)(?: numbers?)?", r"taxpayer"),
    "precise_location": _rx(r"(?:precise |exact |physical |geo-?|device )?locations?", r"gps", r"latitude", r"longitude",
                            r"geolocation", r"geographic(?:al)? location", r"(?:street|home|postal|mailing|shipping|physical) address(?:es)?",
                            r"wi-?fi (?:access points|networks)", r"bluetooth (?:signals|beacons)", r"cell towers?"),
    "contact": _rx(r"e-?mail(?: address(?:es)?)?s?", r"phone(?: numbers?)?s?", r"telephone(?: numbers?)?",
                   r"mobile (?:phone )?numbers?", r"contact (?:information|details|data|info)",
                   r"(?:postal|mailing|home|street|shipping) address(?:es)?", r"address books?", r"fax"),
    "identity": _rx(r"(?:full |first |last |real |legal |display |your |user ?|screen )names?", r"usernames?", r"user ids?",
                    r"account (?:information|details|data|credentials?|names?)", r"profile (?:information|data|pictures?|photos?)",
                    r"photos?", r"photographs?", r"pictures?", r"selfies?", r"voice(?:prints?| recordings?)?", r"signatures?",
                    r"faces?", r"facial", r"fingerprints?", r"social (?:media|network) (?:profiles?|accounts?)",
                    r"identity", r"identifies you"),
    "demographic": _rx(r"ages?", r"gender", r"sex", r"dates? of birth", r"birth ?dates?", r"birthdays?", r"nationality",
                       r"citizenship", r"race", r"racial", r"ethnic\w*", r"religio\w*", r"political", r"sexual orientation",
                       r"sex life", r"occupations?", r"job titles?", r"employers?", r"education\w*", r"marital status",
                       r"household", r"languages?", r"country", r"countries", r"city", r"region", r"zip codes?",
                       r"postal codes?", r"postcodes?", r"time ?zones?", r"demographics?"),
    "behavioural": _rx(r"browsing (?:history|activity|activities|behaviou?r|data)", r"search (?:history|queries|terms)",
                       r"pages? (?:you )?(?:visit|view)(?:ed)?", r"clicks?", r"clickstream", r"usage (?:data|information|statistics)",
                       r"activity", r"activities", r"interactions?", r"how you (?:use|interact|engage)", r"interests?",
                       r"(?:viewing|watch|listening|order) history", r"time spent", r"referr(?:ing|er|al) (?:urls?|pages?|sites?|websites?)",
                       r"content you (?:view|watch|engage|read)", r"engagement", r"inferences?", r"log (?:data|information|files?)",
                       r"features you use", r"preferences", r"behaviou?r(?:al)?"),
    "device_id": _rx(r"ip address(?:es)?", r"device (?:ids?|identifiers?|information|data|types?|models?|attributes|settings|signals)",
                     r"advertising (?:ids?|identifiers?)", r"idfa", r"aaid", r"gaid", r"mac address(?:es)?", r"imei",
                     r"unique (?:device )?identifiers?", r"browser (?:types?|information|settings|versions?|language)",
                     r"operating systems?", r"user[- ]agents?", r"hardware (?:models?|information)", r"mobile network",
                     r"carriers?", r"identifiers"),
    "cookie": _rx(r"cookies?", r"web beacons?", r"pixels?(?: tags?)?", r"tracking (?:technologies|pixels?|tags?|tools)",
                  r"clear gifs?", r"local storage", r"sdks?", r"software development kits?", r"similar technologies", r"tags"),
}
GENERIC_RX = _rx(r"personal (?:information|data)", r"personally identifiable information", r"pii",
                 r"information about you", r"your (?:information|data)", r"user (?:information|data)",
                 r"information (?:we collect|you provide)", r"data (?:we collect|you provide)", r"personal details")

RECIPIENT_RX: dict[str, re.Pattern] = {
    "first_party": _rx(r"affiliates?", r"affiliated (?:companies|entities)", r"subsidiar(?:y|ies)", r"family of companies",
                       r"corporate (?:group|family)", r"group (?:companies|entities)", r"companies (?:within|in) our group",
                       r"parent company", r"related companies"),
    "service_provider": _rx(r"service providers?", r"vendors?", r"processors?", r"sub-?processors?", r"contractors?",
                            r"suppliers?", r"agents", r"hosting (?:providers?|services)", r"cloud (?:service )?providers?",
                            r"payment (?:processors?|providers?|service providers?)", r"on our behalf",
                            r"companies (?:that|who) (?:help|assist|perform|work)", r"customer (?:support|service) providers?",
                            r"delivery (?:companies|partners|services)", r"shipping (?:companies|carriers)"),
    "analytics": _rx(r"analytics (?:providers?|partners?|services?|companies|tools|vendors)",
                     r"measurement (?:partners?|providers?|companies|services)", r"google analytics", r"audience measurement"),
    "ad_network": _rx(r"advertisers?", r"advertising (?:partners?|networks?|companies|providers?|services?|platforms?|technolog(?:y|ies))",
                      r"ad (?:networks?|partners?|servers?|exchanges?|tech|technolog(?:y|ies)|platforms?)", r"marketing partners?",
                      r"demand[- ]side platforms?", r"supply[- ]side platforms?", r"publishers?",
                      r"retargeting (?:partners?|companies)"),
    "social": _rx(r"social (?:media|networks?|networking)(?: (?:sites?|platforms?|services?|plugins?|features?))?", r"facebook",
                  r"twitter", r"instagram", r"linkedin", r"tiktok", r"pinterest", r"other users", r"other members",
                  r"publicly (?:available|visible|accessible|displayed)", r"the public", r"public profiles?"),
    "data_broker": _rx(r"data brokers?", r"data (?:providers?|aggregators?|resellers?|suppliers?)", r"information brokers?",
                       r"consumer reporting agenc(?:y|ies)", r"credit (?:bureaus?|reporting agenc(?:y|ies))", r"list brokers?"),
    "ai_service": _rx(r"artificial intelligence", r"ai (?:models?|providers?|services?|systems?|features?|partners?|tools)",
                      r"(?:large )?language models?", r"llms?", r"machine learning (?:models?|providers?)",
                      r"model providers?", r"openai", r"anthropic", r"generative ai"),
    "unknown_third_party": _rx(r"third[- ]part(?:y|ies)", r"(?:business |trusted |selected |our |other )?partners",
                               r"other (?:companies|organizations|organisations|businesses)",
                               r"outside (?:parties|companies)", r"external (?:parties|companies)", r"law enforcement",
                               r"government(?:al)? (?:agencies|authorities|bodies)", r"public authorities", r"regulators?",
                               r"acquir(?:er|ing (?:company|entity))", r"successors?", r"buyers?", r"purchasers?"),
}

PURPOSE_RX: dict[str, re.Pattern] = {
    "functionality": _rx(r"provide (?:and \w+ )?(?:our|the|you with)? ?(?:services?|products?|features?)",
                         r"operate (?:our|the)", r"deliver (?:our|the)", r"to provide", r"fulfil+(?:l|ing)? (?:your )?(?:orders?|requests?)",
                         r"process(?:ing)? your (?:requests?|orders?)", r"customer (?:support|service)", r"respond to",
                         r"communicate with you", r"maintain (?:our|the)", r"functionality", r"features?"),
    "authentication": _rx(r"authenticat\w*", r"verify (?:your )?(?:identity|account)", r"verification", r"log ?in",
                          r"sign[- ]?in", r"account (?:creation|registration)", r"register", r"registration", r"create (?:an|your) account"),
    "payment": _rx(r"process(?:ing)? (?:your )?(?:payments?|transactions?|purchases?)", r"payments?", r"billing",
                   r"refunds?", r"checkout", r"complete (?:your )?(?:purchases?|transactions?)"),
    "analytics": _rx(r"analytics", r"analy[sz]\w*", r"measure\w*", r"statistic\w*", r"research", r"understand how",
                     r"improve (?:our|the)", r"performance", r"diagnostics?", r"trends", r"audience"),
    "advertising": _rx(r"advertis\w*", r"ads", r"marketing", r"promotional", r"promotions?", r"newsletters?",
                       r"retarget\w*", r"remarketing", r"targeted", r"interest[- ]based", r"sponsored", r"campaigns?"),
    "profiling": _rx(r"profil(?:e|es|ing) (?:about|of) you", r"profiling", r"build (?:a )?profiles?", r"create (?:a )?profiles?",
                     r"infer\w*", r"predict\w*", r"segments?", r"cross-device", r"across (?:devices|websites|sites|apps)",
                     r"automated decision", r"scor(?:e|ing) you"),
    "personalization": _rx(r"personali[sz]\w*", r"customi[sz]\w*", r"tailor\w*", r"recommend\w*", r"relevant (?:content|products|offers)",
                           r"your experience", r"more relevant"),
    "security": _rx(r"security", r"secure", r"fraud\w*", r"abuse", r"spam", r"safety", r"integrity", r"prevent\w*",
                    r"investigat\w*", r"enforce (?:our|the)", r"protect (?:our|the|against|you)", r"legal (?:obligations?|requirements?)",
                    r"comply with"),
    "ai_processing": _rx(r"train\w* (?:\w+ ){0,3}(?:models?|algorithms?|ai|systems?)", r"machine learning",
                         r"artificial intelligence", r"ai (?:models?|features?|systems?|services?)", r"generative",
                         r"(?:large )?language models?"),
}

#: Practices in priority order: the first one that matches wins (see `practice_of`).
PRACTICE_RX: dict[str, re.Pattern] = {
    "retain": _rx(r"retain\w*", r"retention", r"keep (?:your|personal|the|this|such|it|them|data|information|records?)",
                  r"stor(?:e|ed) (?:for|until)", r"as long as (?:necessary|needed|required|reasonably|your account|you)",
                  r"(?:periods?|length of time) (?:of|for which)", r"kept"),
    "delete": _rx(r"delet\w*", r"erase\w*", r"erasure", r"rectif\w*", r"correct (?:your|inaccurate|any)",
                  r"access (?:to )?(?:your|the) (?:personal )?(?:data|information)", r"right to access", r"portability",
                  r"export your", r"request (?:a )?cop(?:y|ies)",
                  r"right (?:of|to) (?:access|rectification|erasure|correct\w*|portability)"),
    "protect": _rx(r"safeguards?", r"encrypt\w*", r"(?:protect|secure) (?:your|the|personal) (?:personal )?(?:information|data)",
                   r"security (?:measures|controls|practices|safeguards|standards)", r"secure (?:socket|servers?|storage)",
                   r"ssl", r"tls", r"firewalls?", r"access controls?", r"unauthori[sz]ed access"),
    "sell": _rx(r"sell\w*", r"sale of", r"sold", r"rent\w*", r"monetary consideration"),
    "share": _rx(r"shar(?:e|es|ed|ing)", r"disclos\w*", r"transfer\w*", r"make (?:it |them |this information |your \w+ )?available",
                 r"pass(?:ed)? (?:on|along)", r"transmit\w*", r"provide (?:it |them |your \w+ |this \w+ |such \w+ |personal \w+ )?to",
                 r"(?:third part(?:y|ies)|partners|providers|advertisers) (?:may )?(?:collect|receive|access|use|place|set)"),
    "choice": _rx(r"opt[- ]?(?:out|in)", r"unsubscrib\w*", r"withdraw (?:your )?consent", r"your choices?",
                  r"you (?:can|may) (?:choose|control|manage|disable|adjust|change|turn off|object|decline|refuse|limit|block|set)",
                  r"privacy settings", r"do not track", r"object to", r"right to object", r"(?:browser|device|account) settings"),
    "collect": _rx(r"collect\w*", r"gather\w*", r"obtain\w*", r"receiv\w*", r"record\w*", r"captur\w*",
                   r"(?:ask|request) (?:for|you)", r"you (?:provide|give|submit|enter|upload|share)", r"automatically", r"logs?"),
    "use": _rx(r"us(?:e|es|ed|ing)", r"process(?:es|ed|ing)?", r"utili[sz]\w*", r"combin\w*", r"rely on"),
}

NEGATION_RX = re.compile(r"\b(?:not|never|no longer|don't|doesn't|won't|cannot|can't|neither|nor)\b|\bno\b(?! longer)", re.I)

CONDITION_RX: dict[str, re.Pattern] = {
    "aggregated/de-identified": _rx(r"aggregat\w*", r"de-?identified", r"anonymi[sz]\w*", r"anonymous(?:ly)?",
                                    r"pseudonymi[sz]\w*", r"hashed", r"non-personal", r"not personally identifiable",
                                    r"(?:cannot|can't|does not|do not) (?:be used to )?(?:reasonably )?identify you"),
    "opt-in": _rx(r"with your (?:express |explicit |prior |affirmative )?(?:consent|permission|authori[sz]ation)",
                  r"if you (?:consent|agree|allow|choose to|opt in|authori[sz]e|give us permission)", r"opt[- ]in",
                  r"at your (?:request|direction)", r"when you (?:ask|direct|instruct)", r"based on your consent",
                  r"you have (?:given|provided) (?:your )?consent"),
    "opt-out": _rx(r"opt[- ]?out", r"unsubscrib\w*", r"you (?:can|may) (?:object|disable|turn off|decline|refuse|limit|withdraw)",
                   r"object to", r"withdraw (?:your )?consent", r"do not track", r"unless you", r"disable cookies"),
    "legal requirement": _rx(r"required by (?:applicable )?law", r"requires? (?:us )?(?:by|under) law", r"legal (?:obligations?|requirements?|process|proceedings?)",
                             r"comply with (?:the |any |our )?(?:law|applicable|legal)", r"law enforcement", r"court orders?",
                             r"subpoenas?", r"government(?:al)? (?:requests?|authorities|agencies)"),
}

_NUM = (r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|eighteen|twenty|"
        r"twenty-four|thirty|sixty|ninety")
_WORDNUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "eighteen": 18, "twenty": 20,
            "twenty-four": 24, "thirty": 30, "sixty": 60, "ninety": 90}
RETENTION_PERIOD_RX = re.compile(
    r"\b(?:for|up to|within|after|of|a (?:maximum|period) of|no (?:longer|more) than|at most|than)\s+(?:a maximum of\s+|about\s+|approximately\s+)?"
    rf"({_NUM})\s*(?:\(\d+\)\s*)?(days?|weeks?|months?|years?)\b", re.I)
RETENTION_CONTEXT_RX = _rx(r"retain\w*", r"retention", r"keep\w*", r"kept", r"stor(?:e|ed|age)", r"delet\w*",
                           r"eras\w*", r"anonymi[sz]\w*", r"expire\w*", r"purge\w*", r"period")
RETENTION_OTHER: tuple[tuple[re.Pattern, str], ...] = (
    (_rx(r"indefinite(?:ly)?", r"permanently", r"forever"), "indefinitely"),
    (_rx(r"until you (?:delete|close|remove|ask|request|withdraw|deactivate)\w*", r"until (?:your|the) account is (?:deleted|closed)"),
     "until deletion"),
    (_rx(r"as long as (?:your account|you (?:have|maintain|keep))", r"for the (?:life|lifetime|duration) of your account"),
     "as long as the account exists"),
    (_rx(r"as long as (?:is )?(?:reasonably )?(?:necessary|needed|required)", r"no longer than (?:is )?necessary",
         r"only for as long as"), "as long as necessary"),
)

_FIRST_PERSON = re.compile(r"\b(?:we|us|our)\b", re.I)


@dataclass
class Fields:
    practice: str | None = None
    negated: bool = False
    data_categories: list[str] = field(default_factory=list)
    recipients: list[str] = field(default_factory=list)
    purposes: list[str] = field(default_factory=list)
    condition: str | None = None
    retention: str | None = None

    @property
    def specific(self) -> bool:
        """Names something beyond generic language (a specific category, recipient or purpose)."""
        return bool([c for c in self.data_categories if c != "other"] or
                    [r for r in self.recipients if r != "unknown_third_party"] or self.purposes)


def categories_of(text: str) -> list[str]:
    found = [c for c, rx in CATEGORY_RX.items() if rx.search(text)]
    if not found and GENERIC_RX.search(text):
        found = ["other"]
    return found


def recipients_of(text: str) -> list[str]:
    return [r for r, rx in RECIPIENT_RX.items() if rx.search(text)]


def purposes_of(text: str) -> list[str]:
    return [p for p, rx in PURPOSE_RX.items() if rx.search(text)]


def practice_of(text: str) -> tuple[str | None, bool]:
    """(practice, negated). Priority order of PRACTICE_RX, except that a user choice stated before the
    practice it governs ("you can opt out of sharing") is a choice."""
    hits = {p: m for p, rx in PRACTICE_RX.items() if (m := rx.search(text))}
    if not hits:
        return None, False
    best = next(iter(hits))
    if "choice" in hits and best != "choice" and hits["choice"].start() < hits[best].start() \
            and best in ("share", "sell", "collect", "use"):
        best = "choice"
    m = hits[best]
    window = text[max(0, m.start() - 40):m.start()]
    return best, bool(NEGATION_RX.search(window))


def condition_of(text: str) -> str | None:
    for cond, rx in CONDITION_RX.items():
        if rx.search(text):
            return cond
    return None


def retention_of(text: str) -> str | None:
    if not RETENTION_CONTEXT_RX.search(text):
        return None
    m = RETENTION_PERIOD_RX.search(text)
    if m:
        n = m.group(1).lower()
        n = str(_WORDNUM.get(n, n))
        unit = m.group(2).lower().rstrip("s")
        return f"{n} {unit}{'' if n == '1' else 's'}"
    for rx, value in RETENTION_OTHER:
        if rx.search(text):
            return value
    return None


def analyse(text: str) -> Fields:
    practice, negated = practice_of(text)
    f = Fields(practice=practice, negated=negated, data_categories=categories_of(text),
               recipients=recipients_of(text), purposes=purposes_of(text), condition=condition_of(text),
               retention=retention_of(text))
    if f.retention and f.practice in (None, "collect", "use", "delete", "protect"):
        f.practice = "retain"
    if f.practice in ("collect", "use") and not f.recipients and _FIRST_PERSON.search(text):
        f.recipients = ["first_party"]
    return f
