"""Field names as context: a key proposes a type for its value, the value must have that type's shape.

`key_candidate(key, value, vendor)` is the (entity, reason) a field name proposes for its whole value, kept only
when the value passes the type's validator (extract/validators.py: `em:"52.123"` is no e-mail, `db:"prod"` no birth
date, `name:"Facebook Pixel"` no person); the ad/social pixels' two-letter vocabulary (`em`, `ph`, `fn`, `st` …:
data/recognizers.yaml) counts only toward those vendors. `key_entity(key, value)` is its entity (or None);
`cookie_entity(name)` does the same for cookie names. The registry (extract/registry.py) runs them as the `key`
and `cookie` recognizers; the resolver lets an agreeing key raise a text recognizer's confidence. Keys are normalised first: the innermost part of
``user[email]`` / ``ep.user_email``, camelCase split, lower case, ``-`` → ``_``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import validators

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[\[\].:/]")
_DIGITS = re.compile(r"\d")
_ALPHA = re.compile(r"[^\W\d_]")
_NUMERIC = re.compile(r"[-+]?\d{1,12}(?:[.,]\d{1,12})?")
_PERSON_NAME = re.compile(r"[^\W\d_][^\W\d_'’.-]*(?:[ '’.-]{1,2}[^\W\d_][^\W\d_'’.-]*){0,4}")
_HASH = re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}")
_IPISH = re.compile(r"[0-9a-fA-F.:]{3,45}|[0-9a-fA-F.:]{3,45}(?:, ?[0-9a-fA-F.:]{3,45}){1,5}")
#: generic key names that in browser traffic usually carry a vendor's *project* key (Amplitude `api_key`,
#: Mixpanel `token`, PostHog `api_key`): a bare hex/alphanumeric value of ≤48 chars under these names is
#: not a credential; specific names (access_token, client_secret, password …) always are.
PROJECT_KEY_NAMES = frozenset({"api_key", "apikey", "token", "key", "app_key", "project_key", "project_token",
                               "write_key", "sentry_key", "client_token", "site_key", "sitekey", "dd_api_key",
                               "publishable_key", "pk", "k"})
#: prefixes of keys that identify an app, not a person, and are public by design (Stripe and Clearbit `pk_`, Mapbox
#: `pk.`, PostHog `phc_`, Google tag ids)
PUBLISHABLE_PREFIXES = ("pk_live_", "pk_test_", "pk_", "pk.", "phc_", "pub", "UA-", "G-", "AW-", "DC-")
#: a MIME type (`application/x-protobuf`): never a city or a name, even under Meta's `ct` key
_MIME = re.compile(r"[a-z]{1,20}/[\w.+-]{1,80}")
#: a language or locale tag (`en`, `en-us`, `pt_BR`): never a name, even under Meta's two-letter `fn`/`ln` keys
_LOCALE = re.compile(r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?")
_PROJECT_KEY = re.compile(r"[0-9a-fA-F]{8,48}|[A-Za-z0-9_-]{8,48}|"
                          r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")  # Braze: a UUID
_CLIENT_ID = re.compile(r"\d{5,12}\.\d{5,12}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_AGE = re.compile(r"\d{1,3}(?:\s?[-–]\s?\d{1,3})?\+?")
_EMPTY = {"", "true", "false", "null", "none", "undefined", "nan", "0", "1", "n/a", "-", "yes", "no", "on", "off"}


def _rx(names: str) -> re.Pattern:
    return re.compile(rf"(?:{names})")


#: normalised key (full match) → entity. Order matters: the first match wins.
KEY_RULES: list[tuple[re.Pattern, str]] = [
    (_rx(r"pass|password|passwd|pwd|passphrase|pin|pincode|otp|totp|one_time_code|mfa_code|"
         r"(?:current|new|old|confirm)_password|password_confirm(?:ation)?|user_password"), "PASSWORD"),
    (_rx(r"api_?key|x_api_key|client_secret|app_secret|secret|secret_key|access_key|aws_secret_access_key|"
         r"private_token|license_key"), "API_KEY"),
    (_rx(r"private_key|ssh_key|pem"), "PRIVATE_KEY"),
    (_rx(r"token|access_token|refresh_token|id_token|auth_token|bearer|authorization|session_token|jwt|"
         r"oauth_token|auth|credentials?"), "AUTH_TOKEN"),
    (_rx(r"session|session_?id|sid|phpsessid|jsessionid|sess"), "SESSION_ID"),
    (_rx(r"ssn|social_security(?:_number|_no)?|ssn_last4|sin_number"), "US_SSN"),
    (_rx(r"passport(?:_number|_no|_num)?"), "US_PASSPORT"),
    (_rx(r"drivers?_licen[cs]e(?:_number|_no)?|driving_licen[cs]e|dl_number|licen[cs]e_number"), "US_DRIVER_LICENSE"),
    (_rx(r"nhs(?:_number|_no)?"), "UK_NHS"),
    (_rx(r"national_id|national_insurance(?:_number)?|nin|nino|tax_id|tin|tax_number|id_number|identity_number|"
         r"aadhaar|bsn|dni|nie|cpf|personnummer|personal_id|government_id|gov_id"), "GOVERNMENT_ID"),
    (_rx(r"card|card_?number|card_no|cc|cc_?number|cc_?num|ccnum|pan|credit_card(?:_number)?|debit_card|"
         r"cvv2?|cvc|csc|card_cvc|security_code"), "CREDIT_CARD"),
    (_rx(r"iban"), "IBAN_CODE"),
    (_rx(r"account_?number|account_no|acct|acct_?number|bank_account(?:_number)?|routing_number|sort_code|aba|"
         r"bic|swift"), "ACCOUNT_NUMBER"),
    # a person's finances; a price, order total or event value is a fact about a product, not about the person
    (_rx(r"salary|income|balance|net_worth|annual_income|monthly_income|credit_limit|credit_score"), "AMOUNT"),
    (_rx(r"e_?mail|mail|email_address|user_email|contact_email|billing_email|customer_email|[a-z_]{0,40}_email|"
         r"hashed_e?mails?|e?mail_hash(?:es)?|em_hash|sha256_e?mail|md5_e?mail|hem|u_hem|hashed_email_address|"
         r"sha256_email_address|md5_email_address|sha1_email_address"),
     "EMAIL_ADDRESS"),
    (_rx(r"phone|phone_?number|mobile|mobile_?number|tel|telephone|cell|cell_?phone|fax|whatsapp|msisdn|"
         r"[a-z_]{0,40}_phone|hpn|u_hpn|hashed_phone(?:_number)?|phone_hash|sha256_phone(?:_number)?"), "PHONE_NUMBER"),
    (_rx(r"full_?name|first_?name|last_?name|surname|given_?name|family_?name|middle_?name|"
         r"display_name|customer_name|cardholder(?:_name)?|name_on_card|billing_name|shipping_name|"
         r"contact_name|recipient_name|patient_name|legal_name|maiden_name"), "PERSON"),
    (_rx(r"name"), "PERSON?"),  # only when the value looks like a person's name
    (_rx(r"user_?name|login|handle|screen_name|nickname|user_login"), "USERNAME"),
    (_rx(r"user_?id|uid|customer_?id|member_?id|account_?id|ajs_user_id|patient_?id|employee_?id|"
         r"profile_?id"), "USER_ID"),
    (_rx(r"address|street|street_address|address_?[12]|address_line_?[12]|line_?[12]|addr|shipping_address|"
         r"billing_address|home_address|street_?1|street_?2"), "STREET_ADDRESS"),
    (_rx(r"lat|latitude|lng|lon|long|longitude|geo|coords|coordinates|geolocation|latlng|lat_lng|ll|"
         r"[a-z_]{0,40}_(?:lat|latitude|lng|lon|longitude)|(?:lat|lng|lon)_[a-z_]{0,40}"), "LATLONG"),
    (_rx(r"city|town|zip|zip_?code|postcode|postal_?code|county|neighbou?rhood"), "LOCATION"),
    (_rx(r"dob|birth_?date|date_of_birth|birthday|birth_year|yob"), "DATE_OF_BIRTH"),
    (_rx(r"gender|sex"), "GENDER"),
    (_rx(r"age"), "AGE"),
    (_rx(r"nationality|ethnicity|race|religion|citizenship"), "NRP"),
    (_rx(r"diagnosis|diagnoses|condition|medical_condition|symptoms?|allerg(?:y|ies)|disease|illness"),
     "MEDICAL_CONDITION"),
    (_rx(r"medications?|prescriptions?|drug|rx|dosage"), "MEDICATION"),
    (_rx(r"idfa|gaid|adid|aaid|advertising_?id|ad_id|ifa|maid|rida|gclid|fbclid|msclkid|ttclid|dclid|wbraid|"
         r"gbraid|fbp|fbc|_fbp|_fbc|yclid|twclid|li_fat_id|epik|sccid"), "ADVERTISING_ID"),
    (_rx(r"device_?id|udid|android_id|idfv|cid|anonymous_?id|muid|distinct_?id|visitor_?id|_id|"
         r"fingerprint|machine_id|installation_id|install_id|hardware_id|serial_number|imei|browser_id|"
         r"_ga|ga_client_id|amplitude_id|ecid|mid"), "DEVICE_ID"),
    (_rx(r"client_?id"), "DEVICE_ID?"),  # GA's client id (digits.digits, UUID) yes; an OAuth app id no
    (_rx(r"ip|ip_?address|client_ip|uip|remote_addr|x_forwarded_for|ipv4|ipv6"), "IP_ADDRESS"),
    (_rx(r"q|query|search|search_?term|term|keywords?|kw|search_query|search_string|searchstring"), "SEARCH_QUERY"),
    (_rx(r"dl|dr|dt|dp|page_?location|page_?referrer|page_?title|page_?url|page_?path|referrer|referer|"
         r"current_url|document_location|document_referrer|document_title|href|url|page|"
         r"en|ec|ea|el|event|event_?name|event_?action|event_?category|event_?label|ev|e_c|e_a|e_n|"
         r"action_name|screen_name_viewed|pv_url|rl|urlref|page_view|current_url|[a-z_]{0,40}_url_viewed"),
     "BROWSING_ACTIVITY"),
]

#: keys whose values are never free text (skip NER; patterns still run)
NO_NER_KEYS = frozenset({
    "ua", "user_agent", "useragent", "sec_ch_ua", "accept", "accept_language", "ul", "de", "sr", "vp", "sd",
    "v", "tid", "gtm", "t", "_v", "z", "_s", "_u", "jid", "gjid", "_gid", "je", "fl", "cd", "cg", "id", "type",
    "model", "role", "object", "version", "lang", "language", "locale", "timezone", "tz", "platform", "os",
    "browser", "currency", "status", "method", "format", "operation_name", "typename", "__typename",
    "event", "en", "ev", "ec", "ea", "event_name", "event_type", "event_action", "event_category", "e_c", "e_a",
    "e_n", "action", "sku", "content_id", "product_id", "uuid", "guid", "hash", "etag", "nonce", "checksum",
})

_COOKIE_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r".{0,60}(?:auth|jwt|access_token|refresh_token|remember_token|remember_user_token|session[-_.]token|"
                r"id_token).{0,60}"), "AUTH_TOKEN"),
    (re.compile(r"sess|session|sid|sessionid|session_id|phpsessid|jsessionid|asp\.net_sessionid|connect\.sid|"
                r"laravel_session|_session_id|ci_session|rack\.session|_sess|.{0,60}_session|.{0,60}sessid.{0,60}|"
                r"__host-session|__secure-session"), "SESSION_ID"),
    (re.compile(r"ide|dsid|id|_fbp|_fbc|fr|datr|_gcl_\w+|muid|mr|uuid2|anj|_ttp|tt_webid(?:_v2)?|"
                r"personalization_id|guest_id|li_sugr|bcookie|bscookie|lidc|a3|idsync|tuuid|_rxuuid|cto_bundle|"
                r"criteo\w*|tdid|_pin_unauth|_scid|sc_at|obuid|t_gid|_uetvid|_uetsid|test_cookie|__gads|__gpi|"
                r"_pubcid|pubcid|_lr_env\w*|_li_dcdm_c|ar_debug"), "ADVERTISING_ID"),
    (re.compile(r"ajs_user_id|user_id|userid|uid"), "USER_ID"),
    (re.compile(r"_ga|_ga_\w+|_gid|__utm[abz]|ajs_anonymous_id|mp_\w+_mixpanel|_hjsessionuser_\w+|_hjid|"
                r"_pk_id[.\w]*|amp_\w+|_clck|_clsk|optimizelyenduserid|_hp2_id[.\w]*|s_vi|s_ecid|amcv_\w+|"
                r"_sp_id[.\w]*|_parsely_visitor|__hstc|hubspotutk|intercom-id-\w+|intercom-device-id-\w+|"
                r"_vwo_uuid\w*|_cioid|ab\.storage\.deviceid\.\w+|_dd_s|visitor_id\w*|_fs_uid|did|device_id"),
     "DEVICE_ID"),
]


@lru_cache(maxsize=8192)
def normalise(key: str) -> str:
    parts = [p for p in _SPLIT.split((key or "")[-200:]) if p]
    k = (parts[-1] if parts else (key or "")).lstrip("$@")  # mParticle `$FirstName`, Mixpanel `$email`
    k = _CAMEL.sub("_", k).lower().replace("-", "_").replace(" ", "_")
    return k[:64]


@lru_cache(maxsize=8192)
def _entity_for(nkey: str) -> str | None:
    for pat, entity in KEY_RULES:
        if pat.fullmatch(nkey):
            return entity
    return None


def _plausible(entity: str, value: str, nkey: str = "") -> bool:
    v = value.strip()
    if v.lower() in _EMPTY or len(v) < 2:
        return entity in ("AGE", "GENDER") and bool(v) and v.lower() not in ("true", "false", "null", "undefined")
    if entity in ("LOCATION", "PERSON") and _MIME.fullmatch(v):
        return False
    digits = len(_DIGITS.findall(v)) if len(v) < 200 else 99
    if entity in ("CREDIT_CARD",):
        return 3 <= digits and (digits >= 12 or len(v) <= 4)
    if entity in ("US_SSN", "ACCOUNT_NUMBER", "UK_NHS", "PHONE_NUMBER"):
        return digits >= 4 or (entity == "PHONE_NUMBER" and bool(_HASH.fullmatch(v)))
    if entity == "AMOUNT":
        return bool(_NUMERIC.fullmatch(v.lstrip("$€£¥").replace(",", "")))
    if entity == "PERSON" and len(nkey) <= 2 and _LOCALE.fullmatch(v):
        return False
    if entity == "USERNAME" and validators.person_name_reject(v):
        return False  # "test", "admin", "guest": a placeholder, not someone's account
    if entity == "AGE":
        return bool(_AGE.fullmatch(v)) and all(int(x) <= 120 for x in re.findall(r"\d+", v))
    if entity in ("PERSON", "USERNAME", "MEDICAL_CONDITION", "MEDICATION", "NRP"):
        return bool(_ALPHA.search(v)) or bool(_HASH.fullmatch(v))
    if entity == "LOCATION":
        return bool(_ALPHA.search(v)) or digits >= 3
    if entity == "IP_ADDRESS":
        return bool(_IPISH.fullmatch(v))
    if entity in ("API_KEY", "AUTH_TOKEN") and (v.startswith(PUBLISHABLE_PREFIXES) or len(v) < 10):
        return False  # a publishable key, or a short counter or signature ("token=71245"), is no one's secret
    if entity in ("API_KEY", "AUTH_TOKEN") and nkey in PROJECT_KEY_NAMES:
        return not (len(v) <= 48 and _PROJECT_KEY.fullmatch(v))
    if entity == "DEVICE_ID?":
        return bool(_CLIENT_ID.fullmatch(v))
    if entity == "PERSON?":
        words = v.split()
        return len(v) <= 60 and 2 <= len(words) <= 4 and bool(_PERSON_NAME.fullmatch(v)) and \
            all(w[:1].isupper() for w in words)
    if entity == "LATLONG":
        return bool(re.fullmatch(r"-?\d{1,3}\.\d{3,}(?:\s*,\s*-?\d{1,3}\.\d{3,})?", v))
    if entity in ("SEARCH_QUERY", "BROWSING_ACTIVITY"):
        return not _NUMERIC.fullmatch(v)
    return True


#: names of fields that hold a protocol's random identifiers (GA4's `_p` page id and `_s` hit counter, `jid`,
#: `z` cache buster, nonces, trace ids, `…_id`): a digit run there is an identifier, never a card number
_ID_KEY = re.compile(r"_?[a-z]{1,2}|_[a-z]{1,4}|.{0,40}_?id|.{0,40}_?ids|nonce|seq|cb|cache_?buster|rnd|random|"
                     r"timestamp|ts|t|time|_?et|tfd|sct|seg|gcd|dma|npa|frm|pscdl|gjid|jid|rid|fbp|fbc|ray|hash|"
                     r"[a-z_]{0,30}(?:token|nonce|key|hash|signature|checksum|version|count|seed)")


def identifier_field(key: str | None) -> bool:
    """The field's name says it holds a random or protocol identifier (not payment data)."""
    if not key:
        return False
    nkey = normalise(key)
    if (validators.vendor_vocabulary().get(nkey) or _entity_for(nkey)) in ("CREDIT_CARD", "ACCOUNT_NUMBER", "IBAN_CODE", "PHONE_NUMBER", "US_SSN", "GOVERNMENT_ID"):
        return False
    raw = (key or "").lower()
    if any(w in raw for w in ("card", "cc_", "ccnum", "pan", "number", "acct", "account", "iban", "phone")):
        return False
    return bool(_ID_KEY.fullmatch(nkey))


def key_candidate(key: str | None, value: str, vendor: bool | None = None) -> tuple[str, str] | None:
    """(entity, reason) a field name proposes for its whole value, or None. The key never decides alone: the value
    must pass the type's validator (extract/validators.py: e-mail syntax, Luhn, a plausible date, a person's name
    that is not a product or UI string, a place that is not a number). The ad/social pixels' customer-matching
    vocabulary (`em`, `ph`, `fn`, `ln`, `ct`, `st`, `zp`, `db`, `ge`, `external_id`: data/recognizers.yaml) counts
    only on the way to those vendors: `vendor` False (another destination) turns it off, None (destination not
    known) keeps it."""
    if not key:
        return None
    nkey = normalise(key)
    vocab = validators.vendor_vocabulary()
    if nkey in vocab:
        if vendor is False:
            return None
        entity = vocab[nkey]
    else:
        entity = _entity_for(nkey)
    if entity is None or not _plausible(entity, value, nkey):
        return None
    entity = entity.rstrip("?")
    ok = validators.valid(entity, value)
    if ok is False:
        return None
    return entity, f"key:{nkey[:24]}" + ("+validator" if ok else "")


def key_entity(key: str | None, value: str, vendor: bool | None = None) -> str | None:
    """The entity a value holds because of its field name, or None (see `key_candidate`)."""
    c = key_candidate(key, value, vendor)
    return c[0] if c else None


def skip_ner(key: str | None) -> bool:
    return bool(key) and normalise(key) in NO_NER_KEYS


@lru_cache(maxsize=4096)
def cookie_entity(name: str) -> str | None:
    n = name.strip().lower()[:128]
    for pat, entity in _COOKIE_RULES:
        if pat.fullmatch(n):
            return entity
    return None
