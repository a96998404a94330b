"""Values that belong to no one: the stock examples people paste when they ask about code, formats and tools.

Each is no one's by a published reservation or by being the textbook example, never by how often it was seen:

- an e-mail address at a reserved domain (RFC 2606 / RFC 6761: `example.com`, `.net`, `.org` and their
  subdomains, the `.example`, `.test`, `.invalid` and `.localhost` TLDs) whose local part is a stock word ("user",
  "test", "john.doe", "your.name", "alice" …): `user@example.com` in a regex question is the regex's example. An
  address there with an ordinary person's name is kept as what the writer meant (data sets and tests plant real
  names at these domains to stand for someone);
- the placeholder names of the English-speaking law and forms ("John Doe", "Jane Doe", "Joe Bloggs", "John Q.
  Public") and their German and Dutch counterparts ("Max Mustermann", "Jan Jansen");
- an IP address no one outside the machine's own network can reach: private (RFC 1918, RFC 4193), loopback,
  link-local, unspecified (`192.168.1.20` in a log line says nothing about who sent it);
- an organisation's role mailbox (`support@`, `info@`, `sales@`, `privacy@` … at the organisation's own domain,
  not at a consumer mailbox provider where anyone may hold that name): it reaches a desk, not a person, so a
  prompt that asks to translate a notice or draft a letter to it keeps it (`role_mailbox`);
- a password that is a default or a placeholder of documentation and local setups (`changeme`, `password`,
  `postgres`, `example`, `mysecretpassword`, or the service's own name like `app`, `db`, `root`: the Postgres and
  MySQL images' documented examples and a docker-compose file's usual values), not a secret anyone holds, nor a
  reference to one kept elsewhere or a mask (`${DB_PASSWORD}`, `%DB_PASS%`, `{{ secrets.TOKEN }}`,
  `<your-password>`, `********`): the config names where the secret is, it holds none;
- a number whose digits are one digit repeated or a run counting up or down (`123456789012` and `111122223333`,
  AWS's documented example accounts; `0000000000`; `9876543210`): the shape of an example, not an issued number.
"""

from __future__ import annotations

import ipaddress
import re
from itertools import groupby

from .standins import DOC_NETS, is_reserved_email

#: the reserved top-level names (RFC 2606, RFC 6761); the reserved second-level ones are standins'
_RESERVED_TLD = ("example", "test", "invalid", "localhost")
#: local parts that are stock words of documentation, forms and tutorials, not a person's mailbox
_STOCK_LOCAL = frozenset({
    "user", "username", "user1", "user2", "name", "yourname", "your.name", "your_name", "your-name", "you", "your",
    "youremail", "your.email", "your_email", "me", "myname", "email", "mail", "e-mail", "address", "someone",
    "somebody", "anyone", "person", "test", "tester", "testing", "test1", "test2", "demo", "sample", "example",
    "foo", "bar", "baz", "foobar", "qux", "admin", "administrator", "root", "info", "contact", "hello", "hi",
    "support", "help", "sales", "team", "office", "noreply", "no-reply", "no_reply", "donotreply", "webmaster",
    "postmaster", "hostmaster", "abuse", "nobody", "first.last", "firstname.lastname", "first_last", "firstname",
    "lastname", "john.doe", "jane.doe", "johndoe", "janedoe", "john_doe", "jane_doe", "jdoe", "alice", "bob",
    "carol", "dave", "eve", "mallory",
})
#: placeholder names for an unknown or any person (legal and form usage)
_PLACEHOLDER_NAMES = frozenset({
    "john doe", "jane doe", "richard doe", "baby doe", "john q. public", "john q public", "joe bloggs",
    "joe public", "fred bloggs", "john smith doe", "max mustermann", "erika mustermann", "jan jansen",
    "jan modaal", "joe schmoe", "joe sixpack", "tommy atkins",
})


#: an e-mail address in text, bounded so a search stays linear on a long run of word characters (RFC 5321's
#: lengths); read by the session (a sample record's row) and the agents (a record's and a call's parties)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")

#: the default and placeholder passwords of documentation, images and local development setups
_STOCK_PASSWORDS = frozenset({
    "password", "passw0rd", "pass", "changeme", "change_me", "change-me", "secret", "mysecretpassword", "example",
    "test", "testing", "demo", "sample", "guest", "admin", "root", "toor", "postgres", "mysql", "mariadb", "redis",
    "app", "dev", "db", "user", "default", "letmein", "your_password", "yourpassword", "your-password", "<password>",
    "xxx", "xxxx", "xxxxxx", "***", "****", "******", "12345", "123456", "1234", "qwerty", "rootpassword", "hunter2",
})


#: a reference to a secret kept elsewhere, or a mask, where a config or a template writes a password: "${DB_PASSWORD}",
#: "$PGPASSWORD", "%DB_PASS%", "{{ secrets.DB_PASSWORD }}", "<your-password>", "********"
_SECRET_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]{0,63}(?::?-[^}]{0,40})?\}?|(?-i:\$[A-Z_][A-Z0-9_]{1,63})|"
                               r"%[A-Za-z_][A-Za-z0-9_]{0,63}%|"
                               r"\{\{\s{0,3}[\w.-]{1,80}\s{0,3}\}\}|<[\w .-]{1,40}>|[*•x]{4,64}|\[(?:redacted|hidden|masked)\]",
                               re.I)


def stock_password(text: str) -> bool:
    """A password that is a documented default or a local setup's placeholder, or a reference to one kept elsewhere
    (an environment variable, a template's secret, a mask: see the module's rules)."""
    value = text.strip().strip("'\"")
    return value.casefold() in _STOCK_PASSWORDS or _SECRET_REFERENCE.fullmatch(value) is not None


def stock_email(text: str) -> bool:
    """An address at a reserved domain whose local part is a stock word: no one's mailbox."""
    local, at, domain = text.strip().rpartition("@")
    if not at or not local:
        return False
    reserved = is_reserved_email(text.strip()) or domain.casefold().rstrip(".").rsplit(".", 1)[-1] in _RESERVED_TLD
    if not reserved:
        return False
    base = local.casefold().split("+", 1)[0]
    if base in _STOCK_LOCAL:
        return True
    # no piece of it a given name or a surname of the lists ("a+tag", "test.user", "qa-bot"): a sample, no one's
    from .person_names import faker_names

    names = faker_names("first_names", "last_names")
    return not any(len(p) >= 3 and p in names for p in re.split(r"[._+\-\d]+", local.casefold()))


def placeholder_name(text: str) -> bool:
    """"John Doe", "Jane Doe", "Max Mustermann" …: the name that stands for an unknown or any person."""
    return " ".join(text.replace("\u00a0", " ").split()).casefold() in _PLACEHOLDER_NAMES


def local_ip(text: str) -> bool:
    """A private, loopback, link-local or unspecified address (with or without a port or a zone)."""
    t = text.strip().strip("[]")
    if t.count(":") == 1 and "." in t:  # 10.0.0.5:8080
        t = t.split(":", 1)[0]
    t = t.split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(t)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    # the documentation ranges (RFC 5737 / 3849) are "private" to Python, but they stand in for public addresses
    # (the proxy's own stand-ins are drawn from them): not local
    documentation = any(ip.version == n.version and ip in n for n in DOC_NETS)
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or (ip.is_private and not documentation)


_DIGITS = re.compile(r"\d")


def stock_number(text: str) -> bool:
    """At least six digits (separators ignored) that repeat one digit or count up or down by one (wrapping
    9→0), or runs of one length that do (`123456789012`, `000-00-0000`, `9876543210`, `111122223333`)."""
    digits = [int(c) for c in _DIGITS.findall(text)]
    if len(digits) < 6:
        return False
    steps = {(b - a) % 10 for a, b in zip(digits, digits[1:], strict=False)}
    if len(steps) == 1 and steps.pop() in (0, 1, 9):
        return True
    # runs of one length, each one digit, counting up or down: AWS's other example account `111122223333`
    runs = [(d, len(list(g))) for d, g in groupby(digits)]
    if len(runs) < 3 or len({n for _, n in runs}) != 1 or runs[0][1] < 2:
        return False
    steps = {(b - a) % 10 for (a, _), (b, _) in zip(runs, runs[1:], strict=False)}
    return len(steps) == 1 and steps.pop() in (1, 9)


#: local parts that name a desk or a function of an organisation, not a person
_ROLE_LOCAL = frozenset({
    "support", "help", "helpdesk", "info", "information", "contact", "contactus", "hello", "sales", "team", "office",
    "admin", "billing", "accounts", "accounting", "invoices", "careers", "jobs", "recruiting", "press", "media",
    "marketing", "noreply", "no-reply", "no_reply", "donotreply", "do-not-reply", "webmaster", "postmaster",
    "hostmaster", "abuse", "security", "privacy", "dpo", "gdpr", "legal", "compliance", "hr", "service",
    "customerservice", "customer.service", "customercare", "care", "enquiries", "inquiries", "orders", "booking",
    "bookings", "reservations", "feedback", "newsletter", "notifications", "alerts", "returns", "shipping",
})
#: consumer mailbox providers: `support@gmail.com` is somebody's account, not Google's desk
_CONSUMER_MAIL = frozenset({
    "gmail.com", "googlemail.com", "yahoo.com", "ymail.com", "outlook.com", "hotmail.com", "live.com", "msn.com",
    "icloud.com", "me.com", "mac.com", "aol.com", "proton.me", "protonmail.com", "pm.me", "gmx.com", "gmx.de",
    "gmx.net", "web.de", "t-online.de", "mail.com", "mail.ru", "yandex.ru", "yandex.com", "qq.com", "163.com",
    "126.com", "naver.com", "zoho.com", "fastmail.com", "tutanota.com", "hey.com", "orange.fr", "free.fr",
    "libero.it", "laposte.net", "btinternet.com", "comcast.net",
})


def role_mailbox(text: str) -> bool:
    """An organisation's role mailbox ("support@acme-widgets.com", "privacy@bank.example"): a desk's address at
    its own domain, not at a consumer mailbox provider (nor a Yahoo or Hotmail of any country)."""
    local, at, domain = text.strip().rpartition("@")
    domain = domain.casefold().rstrip(".")
    if not at or local.casefold().split("+", 1)[0] not in _ROLE_LOCAL or domain in _CONSUMER_MAIL:
        return False
    return domain.split(".", 1)[0] not in ("yahoo", "hotmail", "outlook", "live", "gmx", "yandex")


def no_ones(entity: str, text: str) -> bool:
    """Whether `text`, found as `entity`, is a stock example that belongs to no one (see the module's rules)."""
    if entity == "EMAIL_ADDRESS":
        return stock_email(text)
    if entity == "PERSON":
        return placeholder_name(text)
    if entity == "IP_ADDRESS":
        return local_ip(text)
    if entity == "PASSWORD":
        return stock_password(text)
    if any(c.isdigit() for c in text) and entity not in ("DATE", "DATE_TIME", "DATE_OF_BIRTH", "AGE", "AMOUNT"):
        return stock_number(text)
    return False
