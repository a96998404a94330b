"""Keyword lexicons that read a policy statement's text into the shared vocabularies.

The evidence stage fills `Statement.data_categories/recipients/purposes/practice`; these cues are a
second, independent reading of the same text that the features compare with the action, so the
classifier does not depend on one segmenter's recall. Patterns are lower-case regular expressions
matched on word boundaries; the vocabularies are those of `guardian_proxy.types`.
"""

from __future__ import annotations

import re
from functools import lru_cache

CATEGORY_CUES: dict[str, tuple[str, ...]] = {
    "credentials": (r"passwords?", r"pass ?codes?", r"credentials?", r"log-?in (?:details|information)",
                    r"security questions?", r"api keys?", r"access tokens?"),
    "health": (r"health", r"medical", r"medications?", r"diagnos\w*", r"conditions?", r"fitness", r"hipaa",
               r"prescriptions?", r"genetic", r"biometric", r"disabilit\w*", r"patients?"),
    "financial": (r"credit cards?", r"debit cards?", r"payment", r"billing", r"bank\w*", r"financial",
                  r"purchases?", r"transactions?", r"income", r"credit", r"card numbers?", r"paypal"),
    "government_id": (r"social security", r"ssn", r"driver'?s licen[cs]e", r"passport", r"tax id\w*",
                      r"government[- ]issued", r"national id\w*", r"personal identifiers?"),
    "precise_location": (r"location", r"gps", r"geo-?location", r"geographic", r"latitude", r"where you are",
                         r"precise", r"wi-?fi", r"cell towers?"),
    "contact": (r"e-?mail", r"phone", r"telephone", r"mailing address", r"postal", r"address(?:es)?",
                r"contact (?:information|details|info)", r"mobile numbers?"),
    "identity": (r"names?", r"usernames?", r"user ?ids?", r"profiles?", r"accounts?", r"photos?",
                 r"social (?:media|network)", r"identity", r"date of birth", r"birthdays?"),
    "demographic": (r"age", r"gender", r"demographic\w*", r"zip ?codes?", r"postal codes?", r"interests?",
                    r"preferences?", r"occupation", r"education", r"ethnic\w*", r"race"),
    "behavioural": (r"brows\w+", r"pages? (?:you )?(?:visit\w*|view\w*)", r"clicks?", r"clickstream",
                    r"usage (?:data|information)", r"activit(?:y|ies)", r"search(?:es| queries| history)?",
                    r"interactions?", r"viewing", r"history", r"referr\w+", r"log (?:data|files|information)"),
    "device_id": (r"ip address(?:es)?", r"device (?:id\w*|identifiers?|information)", r"identifiers?",
                  r"browser type", r"operating system", r"mac address", r"advertising id\w*", r"idfa",
                  r"computer", r"hardware"),
    "cookie": (r"cookies?", r"web beacons?", r"pixels?", r"pixel tags?", r"clear gifs?", r"tracking technolog\w*",
               r"local storage", r"flash cookies?", r"tags?", r"sdks?"),
    "other": (r"survey\w*", r"feedback", r"content you (?:post|submit|provide)", r"communications?"),
}
GENERIC_DATA = (r"personal (?:information|data)", r"personally identifiable", r"information (?:about|from) you",
                r"your (?:information|data)", r"pii", r"information we collect")

RECIPIENT_CUES: dict[str, tuple[str, ...]] = {
    "first_party": (r"we (?:collect|use|receive|gather|store|process)", r"our (?:site|website|service)s?",
                    r"us\b", r"affiliates?", r"subsidiar\w+", r"family of companies"),
    "service_provider": (r"service providers?", r"vendors?", r"contractors?", r"processors?", r"agents?",
                         r"hosting", r"payment processors?", r"suppliers?", r"on our behalf"),
    "analytics": (r"analytics?", r"google analytics", r"measurement", r"statistic\w*", r"research"),
    "ad_network": (r"advertis\w+", r"ad networks?", r"ads?", r"marketing partners?", r"interest-based",
                   r"targeted", r"remarketing", r"retargeting", r"doubleclick"),
    "social": (r"social (?:media|networks?|plugins?)", r"facebook", r"twitter", r"linkedin", r"publicly",
               r"public", r"other users"),
    "data_broker": (r"sell", r"sold", r"sale", r"data brokers?", r"rent", r"exchange", r"list brokers?"),
    "ai_service": (r"artificial intelligence", r"\bai\b", r"machine learning", r"models?", r"llms?"),
    "unknown_third_party": (r"third[- ]part(?:y|ies)", r"partners?", r"other companies", r"outside parties",
                            r"non-affiliated", r"unaffiliated", r"others"),
}
PURPOSE_CUES: dict[str, tuple[str, ...]] = {
    "functionality": (r"provide (?:the|our|you)", r"servic(?:e|es|ing)", r"features?", r"fulfil+\w*",
                      r"process (?:your )?orders?", r"deliver\w*", r"respond", r"requests?", r"support"),
    "authentication": (r"authenticat\w+", r"verify (?:your )?identity", r"sign[- ]?in", r"log[- ]?in", r"account"),
    "payment": (r"payments?", r"billing", r"transactions?", r"purchases?", r"checkout"),
    "analytics": (r"analy[sz]\w*", r"statistic\w*", r"research", r"improve", r"understand how", r"measure\w*",
                  r"trends?"),
    "advertising": (r"advertis\w+", r"marketing", r"promotion\w*", r"offers?", r"newsletters?", r"ads?",
                    r"targeted", r"interest-based", r"sponsor\w*"),
    "profiling": (r"profil\w+", r"infer\w*", r"segment\w*", r"predict\w*", r"interests?"),
    "personalization": (r"personali[sz]\w+", r"customi[sz]\w+", r"tailor\w*", r"recommend\w*", r"relevant"),
    "security": (r"security", r"fraud", r"protect", r"abuse", r"secure", r"safety", r"legal", r"law"),
    "ai_processing": (r"train\w* (?:our )?models?", r"artificial intelligence", r"machine learning",
                      r"generative"),
    "unknown": (),
}
PRACTICE_CUES: dict[str, tuple[str, ...]] = {
    "collect": (r"collect\w*", r"gather\w*", r"obtain\w*", r"receiv\w+", r"record\w*", r"track\w*", r"log\w*"),
    "use": (r"use", r"uses", r"using", r"process\w*", r"analy[sz]e"),
    "share": (r"shar\w+", r"disclos\w+", r"provid\w+ (?:it |this |such )?(?:information )?to", r"transfer\w*",
              r"make available", r"give", r"with (?:third|other|our) part\w+"),
    "sell": (r"sell\w*", r"sold", r"sale", r"rent\w*", r"trade"),
    "retain": (r"retain\w*", r"retention", r"keep", r"store\w*"),
    "delete": (r"delet\w+", r"eras\w+", r"remov\w+"),
    "protect": (r"encrypt\w*", r"safeguard\w*", r"ssl", r"secure"),
    "choice": (r"opt[- ]?out", r"opt[- ]?in", r"unsubscrib\w*", r"choices?", r"settings", r"disable"),
}
NEGATION = (r"(?:do|does|will|shall|would) not", r"don't", r"doesn't", r"won't", r"never", r"no longer",
            r"not (?:sell|share|rent|disclose|collect)", r"neither", r"nor", r"without your")
CONDITION_CUES: dict[str, tuple[str, ...]] = {
    "opt_in": (r"consent", r"opt[- ]?in", r"permission", r"authori[sz]\w+", r"you (?:choose|agree)"),
    "opt_out": (r"opt[- ]?out", r"unsubscrib\w*", r"you (?:may|can) (?:choose|disable|decline)"),
    "legal": (r"required by law", r"legal (?:process|obligation|requirement)", r"subpoena", r"court order",
              r"law enforcement"),
    "aggregated": (r"aggregat\w+", r"anonymi[sz]\w+", r"de-?identified", r"non-?personal", r"cannot identify"),
}


def _compile(words: tuple[str, ...]) -> re.Pattern | None:
    if not words:
        return None
    return re.compile(r"\b(?:" + "|".join(words) + r")\b")


_CAT = {k: _compile(v) for k, v in CATEGORY_CUES.items()}
_REC = {k: _compile(v) for k, v in RECIPIENT_CUES.items()}
_PUR = {k: _compile(v) for k, v in PURPOSE_CUES.items()}
_PRA = {k: _compile(v) for k, v in PRACTICE_CUES.items()}
_CON = {k: _compile(v) for k, v in CONDITION_CUES.items()}
_GENERIC = _compile(GENERIC_DATA)
_NEG = _compile(NEGATION)


def _hits(table: dict[str, re.Pattern | None], text: str) -> frozenset[str]:
    return frozenset(k for k, p in table.items() if p is not None and p.search(text))


class Reading:
    """What the lexicons found in one text (all sets of vocabulary names)."""

    __slots__ = ("categories", "recipients", "purposes", "practices", "conditions", "generic", "negated")

    def __init__(self, text: str):
        t = text.lower()
        self.categories = _hits(_CAT, t)
        self.recipients = _hits(_REC, t)
        self.purposes = _hits(_PUR, t)
        self.practices = _hits(_PRA, t)
        self.conditions = _hits(_CON, t)
        self.generic = bool(_GENERIC.search(t))
        self.negated = bool(_NEG.search(t))


@lru_cache(maxsize=8192)
def read(text: str) -> Reading:
    """Cached: the same statement is read once however many actions it serves as evidence for."""
    return Reading(text)
