"""Which language a sentence is written in, roughly: enough to know when the English NER is reading a language it
was not trained on (its PERSON, ORG and place hits there are mostly that language's ordinary words: "Devo",
"Vivimos", "Bodensee", "Nagrodę Nobla"), so that only names the lists or a cue vouch for are taken as people's.

Counted by each language's commonest function words, which no name list holds; a sentence is of another language
when at least two of its words are one other language's and they outnumber its English ones."""

from __future__ import annotations

import re
from functools import lru_cache

#: the commonest function words of each language (articles, pronouns, prepositions, auxiliaries), none an English
#: word too ("die", "in", "a", "de" … are left out where English or a name shares them)
_STOPWORDS = {
    "en": "the and of to is are was were that this with for you your my have has what how why which would could "
          "should please can will not but from they their there about into than then them been being",
    "es": "el los las una unos unas del que por para con como pero más está están es son tiene tengo mi mis su sus "
          "nuestro nuestra muy también cuál cuáles qué cómo dónde cuándo porque esto esta este hay vivimos ser",
    "fr": "le les une des du que qui pour avec dans sur est sont mais plus mon ma mes ton ta notre votre leur "
          "pourquoi comment quand où quel quelle je tu il nous vous ils elles avec ce cette ces être avoir",
    "de": "der das dem den ein eine einen einem und ist sind nicht mit für auf ich du wir ihr sie mein meine dein "
          "warum wie wann wo welche welcher was auch noch bin bist hat haben sein zwischen über bei",
    "it": "il lo gli della delle dei che per con una sono è non mio mia miei tuo suo nostro perché come quando "
          "dove quale qual anche più devo nel nella sul sulla",
    "pt": "os uma umas um que para com como mas está são não meu minha nosso nossa porque quando onde qual "
          "também mais do da dos das em na no ao pelo pela é",
    "nl": "het een en van is zijn niet met voor op ik je wij jij mijn zijn haar onze waarom hoe wanneer waar welke "
          "ook nog bent heeft hebben naar bij deze dit dat wat kun",
    "pl": "jest są nie się na do że dla jak czy ale mój moja moje twój nasz dlaczego kiedy gdzie który która "
          "co za od przez jego jej",
    "tr": "ve bir bu için ile mı mi mu mü ne nasıl neden nerede hangi ben sen biz siz benim değil daha çok gibi "
          "mısın misin musun müsün olarak olan ama veya ise iki",
}
_WORDS = {lang: frozenset(words.split()) for lang, words in _STOPWORDS.items()}
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


@lru_cache(maxsize=256)
def other_language(sentence: str) -> str:
    """The language (a code of `_STOPWORDS`) other than English that `sentence` is written in, or "" (English, or
    too short to tell)."""
    words = [w.casefold() for w in _TOKEN.findall(sentence)]
    counts = {lang: sum(1 for w in words if w in ws) for lang, ws in _WORDS.items()}
    en = counts.pop("en")
    lang, n = max(counts.items(), key=lambda kv: kv[1])
    return lang if n >= 2 and n > en else ""
