"""A policy page's text is decoded with its Content-Type's charset (utf-8 when it names none)."""

import pytest

from guardian_proxy.mitm.learning import charset_of


@pytest.mark.parametrize(("ctype", "charset"), [
    ("text/html; charset=ISO-8859-1", "ISO-8859-1"),
    ('text/html; Charset="windows-1252"', "windows-1252"),
    ("text/html; boundary=x; charset='koi8-r'", "koi8-r"),
    ("text/html", "utf-8"),
    ("text/html; charset=", "utf-8"),
])
def test_charset_of(ctype, charset):
    assert charset_of(ctype) == charset
