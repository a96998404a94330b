"""Given names and surnames of several languages, from Faker's person providers (already a dependency): the one
place that reads them, for the chat session's name rules, its stand-ins' sex and the text hit filter."""

from __future__ import annotations

import importlib
from functools import cache

#: the locales whose names a person in the traffic most often carries
LOCALES = ("en_US", "en_GB", "en_IN", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR", "pl_PL", "sv_SE")


#: the locales whose names are written in Latin letters, for rules that need a strong cue besides the name
#: ("my niece Amara", "reply to Siobhan"): Faker's African, Asian and European lists, romanised where it has them
WORLD = LOCALES + ("en_IE", "ga_IE", "en_NG", "yo_NG", "ig_NG", "ha_NG", "en_KE", "sw", "zu_ZA", "tw_GH", "en_PK",
                   "vi_VN", "id_ID", "tr_TR", "az_AZ", "uz_UZ", "pt_PT", "es_MX", "es_AR", "fi_FI", "da_DK", "no_NO",
                   "cs_CZ", "sk_SK", "hu_HU", "ro_RO", "hr_HR", "sl_SI", "lt_LT", "lv_LV", "et_EE", "fr_CA", "it_IT",
                   "ja_JP", "zh_CN", "zh_TW", "ko_KR")

#: Korea's commonest surnames as English text writes them (Faker's ko_KR lists only Hangul): "Seo Ji-woo", "Ms Yoon"
_KOREAN_SURNAMES = frozenset("""
kim lee yi rhee park pak bak choi choe jung jeong chung kang cho jo yoon yun jang chang lim im han oh seo suh shin
sin kwon gwon hwang ahn an song yoo yu ryu hong jeon chun cheon go ko moon mun yang son sohn bae baek paik heo huh
nam noh roh ha jin woo min byun byeon chae pyo ji eom uhm won cha joo ju gu koo na do tak yeo gil kil seong sung
maeng bang yeom kwak gwak hyun hyeon sim shim geum keum ok gook guk yeon wi pi ma
""".split())

#: the English-speaking locales (the text anonymizer's hit filter reads English)
ENGLISH = ("en", "en_US", "en_GB", "en_IE", "en_IN", "en_NZ")


@cache
def faker_names(*attrs: str, locales: tuple[str, ...] = LOCALES) -> frozenset[str]:
    """The casefolded union of the providers' lists `attrs` ("first_names", "first_names_male",
    "first_names_female", "first_names_nonbinary", "last_names") over `locales`."""
    out: set[str] = set()
    for loc in locales:
        try:
            p = importlib.import_module(f"faker.providers.person.{loc}").Provider
        except (ImportError, AttributeError):  # pragma: no cover - a trimmed Faker
            continue
        for attr in attrs:
            # a locale that writes its names in another script has them romanised too ("Tanaka", "Zhang Wei")
            for name in (attr, attr.replace("_names", "_romanized_names")):
                values = getattr(p, name, ())
                if isinstance(values, (list, tuple, dict, set, frozenset)):  # not a locale's computed property
                    out.update(str(x).casefold() for x in values)
        if loc == "ko_KR" and "last_names" in attrs:
            out.update(_KOREAN_SURNAMES)
    return frozenset(out)
