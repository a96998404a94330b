"""URL-encoded values inside a text: the decoded view, its offsets, and which runs count as a query or form body."""

from urllib.parse import quote_plus, unquote_plus

from guardian_proxy import urlencoded

SMS = ("ToCountry=GB&From=%2B447946218357&Body=Hi+its+Nadia+Sharif+late+at+7+Elm+Row&NumMedia=0 and "
       "https://x.example/s?q=Jos%C3%A9+Garc%C3%ADa then more")


def test_view_decodes_values_and_maps_every_character_back():
    v, offsets = urlencoded.view(SMS)
    assert "From=+447946218357&Body=Hi its Nadia Sharif late at 7 Elm Row&NumMedia=0" in v
    assert "q=José García\n then more" in v  # the run's last value ends a line: its spaces join nothing after it
    assert len(offsets) == len(v) + 1 and offsets[-1] == len(SMS)
    for value, sent in (("Nadia Sharif", "Nadia+Sharif"), ("+447946218357", "%2B447946218357"),
                        ("José García", "Jos%C3%A9+Garc%C3%ADa"), ("NumMedia", "NumMedia")):
        i = v.index(value)
        assert SMS[offsets[i]:offsets[i + len(value)]] == sent


def test_only_runs_of_pairs_or_a_query_are_decoded():
    assert urlencoded.view("x = a+b; y=c+d") is None  # an assignment, no query
    assert urlencoded.view("if (a==b && c==d) return 1+2") is None
    assert urlencoded.view("a=1&b=2") is None  # nothing encoded
    assert urlencoded.view("/search?q=caf%C3%A9")[0] == "/search?q=café"
    assert urlencoded.encoded_values("name=Ann+Lee&city=Oslo") == ((5, 12),)
    assert urlencoded.inside("name=Ann+Lee&city=Oslo", 5, 8) and not urlencoded.inside("name=Ann+Lee&x=1", 0, 8)


def test_bad_bytes_and_a_cut_escape_are_kept_as_characters():
    v, offsets = urlencoded.view("a=%FF%41+%4&b=%E2%82")
    assert v.startswith("a=\ufffdA %4&b=")
    assert len(offsets) == len(v) + 1


def test_in_view_maps_a_span_as_sent_to_the_view_and_refuses_half_an_escape():
    text = "q=Jos%C3%A9+Garc%C3%ADa&x=1"
    v, offsets = urlencoded.view(text)
    a = text.index("Jos")
    assert v[slice(*urlencoded.in_view(offsets, a, a + len("Jos%C3%A9")))] == "José"
    assert urlencoded.in_view(offsets, a, a + 5) is None  # ends inside "%C3%A9"


def test_encode_is_what_a_form_writes_and_unquote_plus_inverts_it():
    for s in ("Chris Hernandez", "+44 7700 900123", "ana@example.com", "Zoë Ó Murchú"):
        assert urlencoded.encode(s) == quote_plus(s, safe="") and unquote_plus(urlencoded.encode(s)) == s

