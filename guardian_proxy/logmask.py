"""The one masking function for what the proxy writes down about a request: decision-log lines, dashboard
records and console lines.

Rule: every text that comes from the request (host, path, query keys, explanation, reason, rewritten form,
console message) passes `mask` before it is written. `mask` runs the pattern recognisers of stage 1
(guardian_proxy/extract/patterns.py; cheap, no NER) and replaces each value found by its type,
`[EMAIL_ADDRESS]`, `[US_SSN]` … — whatever the extractor found or missed. It also reads a value glued to a
word by `-`, `_` or `.` (`jane-doe-123-45-6789`) or to URL punctuation (`/415-555-0187`), a host's labels
as words (`4111-1111-1111-1111.t.example`, `4111_1111…`, `4111--1111…`), and digit groups joined by up to three
separators no recogniser reads (`/4111.1111.1111.1111/`, `4111_1111…`) as one value when a checksum or a fixed
shape confirms it (card, SSN, IBAN, NHS number). Every path that writes about a request uses it, error paths
included (a failed upstream, a timeout, a failed TLS handshake, a DNS failure, a dead worker). A destination that is an IP literal keeps its address (it is where
the request went, not the user's). This is in addition to what the record already leaves out (query values,
body text, header values).
"""

from __future__ import annotations

import functools
import logging
import re

from .domains import is_ip

#: where a value is glued to what comes before it: a word joined by `-`, `_`, `.` (`doe-123-45-6789`), or a URL's
#: punctuation (`/415-555-0187`, `?ssn=…`), which some recognisers do not take for a boundary
_GLUE = re.compile(r"(?:(?<=[A-Za-z])[-_.]|[/=&?#;,])(?=[\d+(])")
#: a host's label separators (a run of them reads as one space: `4111--1111`, `4111_1111`)
_LABEL_SEP = re.compile(r"[-_.]+")
#: between two digits, a run of up to 3 separators no recogniser takes for one (`4111.1111.1111.1111`,
#: `4111_1111…`, `4111--1111…`): read as one space, and only what a checksum or a fixed shape confirms is kept
_DIGIT_SEP = re.compile(r"(?<=\d)[-_.\s]{1,3}(?=\d)")
_DIGIT_SEP_ENTITIES = frozenset({"CREDIT_CARD", "US_SSN", "IBAN_CODE", "UK_NHS"})
#: what a value some recogniser finds always contains; a short text with none of these is not scanned (a path
#: segment or an explanation costs one search), a long one (a rewritten body) always is
_MAYBE = re.compile(
    r"\d(?:[\s.\-_/()+,]{0,3}\d){6}"  # 7+ digits close together: phone, card, SSN, NHS number, lat/long
    r"|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d"  # IPv4
    r"|[A-Z]{1,2}\d|[A-Z]{2} \d"  # IBAN, national insurance number, postcode (upper case)
    r"|\d\.\d{3,8}\s{0,3},"  # lat/long with spaces around its comma
    r"|\d{1,5}[A-Za-z]?,? [A-Z]"  # a street address
    r"|@|%40|/home/|Users[\\/]"  # e-mail, home directory
    r"|(?i:birth|born|d\.?o\.?b)"  # date of birth (needs its word)
    r"|[0-9A-Fa-f]{2}[:-][0-9A-Fa-f]{2}[:-][0-9A-Fa-f]{2}|[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f]{1,4}:")  # MAC, IPv6
_CACHED_CHARS = 512
#: record fields the proxy itself sets and that masking must not touch (ids the dashboard looks up)
OWN_FIELDS = frozenset({"id", "ts", "session"})


#: a text's masked form by the text (texts up to _CACHED_CHARS; emptied when it holds _MEMO_MAX): a record's
#: strings repeat from request to request (field paths, recognizer names, explanations), and a hit here is one
#: dict lookup where a call of `mask` costs a Python call and `lru_cache`'s own
_MEMO: dict[str, str] = {}
_MEMO_MAX = 16384


def mask(text: str) -> str:
    """`text` with every value the recognisers find replaced by `[TYPE]`; other text unchanged."""
    if type(text) is not str:
        if not isinstance(text, str):
            return text
    elif (got := _MEMO.get(text)) is not None:
        return got
    if not text:
        return text
    if len(text) > _CACHED_CHARS:
        return _mask(text, False)
    got = _mask(text, False) if _MAYBE.search(text) else text
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[text] = got
    return got


def mask_host(host: str) -> str:
    """A host name with values spelled into its labels replaced by their type; an IP literal is kept."""
    if not isinstance(host, str) or not host:
        return host
    return _mask_host_cached(host) if len(host) <= _CACHED_CHARS else _mask(host, True)


@functools.lru_cache(maxsize=4096)
def _mask_host_cached(host: str) -> str:
    if not _MAYBE.search(host):
        return host
    if is_ip(host):
        return host  # where the request went, not the user's address
    return _mask(host, True)


def _collapsed(text: str, rx: re.Pattern) -> tuple[str, list[int]]:
    """`text` with each match of `rx` read as one space, and where each of its positions (and its end) was in
    `text`."""
    parts: list[str] = []
    at: list[int] = []
    last = 0
    for m in rx.finditer(text):
        parts += [text[last:m.start()], " "]
        at += [*range(last, m.start()), m.start()]
        last = m.end()
    parts.append(text[last:])
    at += [*range(last, len(text) + 1)]
    return "".join(parts), at


def _mask(text: str, host: bool) -> str:
    # here, not at import: `guardian-proxy logs` never loads stage 1
    from .extract.patterns import RECOGNIZERS, find

    hits = [h for v in {text, _GLUE.sub(" ", text)} for h in find(v)]  # same length: positions stay valid
    for rx, keep in ((_DIGIT_SEP, _DIGIT_SEP_ENTITIES), *(((_LABEL_SEP, None),) if host else ())):
        view, at = _collapsed(text, rx)
        if view == text:
            continue
        found = find(view) if keep is None else [h for r in RECOGNIZERS if r.ENTITY in keep for h in r.find(view)]
        hits += [(at[s], at[e], ent, sc) for s, e, ent, sc in found]
    if not hits:
        return text
    out, last = [], 0
    for start, end, entity, _ in sorted(hits, key=lambda h: (h[0], -h[1])):
        if start < last:  # inside (or overlapping) a value already replaced
            if end > last:
                last = end
            continue
        out += [text[last:start], f"[{entity}]"]
        last = end
    out.append(text[last:])
    return "".join(out)


_PLAIN = frozenset({int, float, bool, type(None)})


def mask_value(value, keep: frozenset[str] = frozenset()):
    """Every string in a JSON-like value masked (dict keys too), except under the top-level keys in `keep`."""
    t = type(value)
    if t is str:
        got = _MEMO.get(value)
        return mask(value) if got is None else got
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is str:
                mk = _MEMO.get(k)
                mk = mask(k) if mk is None else mk
            else:
                mk = k
            if k in keep or type(v) in _PLAIN:
                out[mk] = v
            elif type(v) is str:
                got = _MEMO.get(v)
                out[mk] = mask(v) if got is None else got
            else:
                out[mk] = mask_value(v)
        return out
    if t is list or t is tuple:
        return [mask_value(v) for v in value]
    return value


def mask_record(rec: dict, keep: frozenset[str] = OWN_FIELDS) -> dict:
    """A log / dashboard record with every string masked (the host as a host), except the fields in `keep`
    (ids; a path that `decision_log.safe_path` masked segment by segment already). Its own field names are
    the proxy's and stay as they are."""
    out = {}
    for k, v in rec.items():
        t = type(v)
        if k in keep or t in _PLAIN:
            out[k] = v
        elif t is str:
            if k == "host":
                out[k] = mask_host(v)
            else:
                got = _MEMO.get(v)
                out[k] = mask(v) if got is None else got
        else:
            out[k] = mask_value(v)
    return out


# ------------------------------------------------------------------ console lines

#: the loggers of the package (every module logs through one of these)
LOGGERS = ("guardian_proxy", "guardian_proxy.anonymize", "guardian_proxy.policy", "guardian_proxy.overrides",
           "guardian_proxy.likelihood", "guardian_proxy.dashboard")


class ConsoleMask(logging.Filter):
    """A console line is masked like a log record: its formatted message and its traceback text."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler's own error path
            return True
        record.msg, record.args = mask(msg), None
        if record.exc_info and not record.exc_text:
            record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
        return True


_CONSOLE = ConsoleMask()


def install_console_mask() -> None:
    """Put the console mask on every logger of the package (idempotent)."""
    for name in LOGGERS:
        lg = logging.getLogger(name)
        if _CONSOLE not in lg.filters:
            lg.addFilter(_CONSOLE)


def mask_handlers(logger: logging.Logger | None = None) -> None:
    """Put the console mask on the handlers of `logger` (default: the root logger, where mitmproxy's terminal
    log sits), so lines from outside the package are masked too — mitmproxy names the host of a failed TLS
    handshake (`… does not trust the proxy's certificate for <host>`). Call it once the handlers exist."""
    for h in (logger or logging.getLogger()).handlers:
        if _CONSOLE not in h.filters:
            h.addFilter(_CONSOLE)
