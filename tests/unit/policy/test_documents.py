"""guardian_proxy.policy.documents: HTML/Markdown/text → blocks, bad input, privacy-page heuristics."""

from guardian_proxy.policy import documents
from guardian_proxy.policy.documents import is_policy_page, policy_url_kind, to_text

HTML = """<!doctype html><html><head><title>Privacy Policy | Example</title>
<script>var tracking = "We collect everything";</script><style>p{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<header><div>Sign in</div></header>
<main><h1>Privacy Policy</h1>
<p>We collect your email address when you create an account.</p>
<h2>Sharing</h2><p>We share device identifiers with advertising partners.</p>
<ul><li>Service providers who host our site.</li><li>Law enforcement when required by law.</li></ul>
<div hidden>Hidden text that nobody sees.</div>
</main><footer>© Example Inc. Cookie settings</footer></body></html>"""


def test_html_drops_scripts_navigation_and_keeps_structure():
    d = to_text(HTML, "text/html; charset=utf-8")
    assert d.format == "html" and d.title == "Privacy Policy | Example"
    assert "tracking" not in d.text and "color" not in d.text and "Shop" not in d.text
    assert "Sign in" not in d.text and "Cookie settings" not in d.text and "Hidden" not in d.text
    kinds = [(b.kind, b.text) for b in d.blocks]
    assert ("heading", "Sharing") in kinds
    assert ("item", "Service providers who host our site.") in kinds
    for b in d.blocks:  # offsets point into the normalised text
        assert d.text[b.start:b.end] == b.text


def test_unclosed_nav_falls_back_to_the_whole_page():
    page = "<html><body><nav><a>Home</a>" + "<p>We collect your email address to send receipts.</p>" * 20
    d = to_text(page, "text/html")
    assert "html_fallback" in d.flags and "email address" in d.text


def test_markdown_links_emphasis_headings_items():
    md = ("Privacy\n=======\n\n## What we collect\n\nWe collect **your name** and [email address](https://x.example/e).\n\n"
          "* Location data from your device\n* Payment details\n\n| Data | Purpose |\n| --- | --- |\n| Email | Login |\n")
    d = to_text(md, name="policy.md")
    assert d.format == "markdown"
    kinds = [(b.kind, b.text) for b in d.blocks]
    assert kinds[0] == ("heading", "Privacy") and ("heading", "What we collect") in kinds
    assert ("para", "We collect your name and email address.") in kinds
    assert ("item", "Payment details") in kinds and ("para", "Email; Login") in kinds


def test_empty_and_non_english_are_flagged():
    assert "empty" in to_text("").flags
    assert "empty" in to_text("<html><script>x()</script></html>", "text/html").flags
    fr = ("Nous collectons vos données personnelles afin de fournir nos services. Vos données sont conservées "
          "pendant trois ans et partagées avec nos partenaires publicitaires. ") * 5
    assert "non_english" in to_text(fr).flags
    de = "Wir verarbeiten personenbezogene Daten nur im Rahmen der gesetzlichen Bestimmungen. " * 5
    assert "non_english" in to_text(de).flags


def test_enormous_documents_are_cut_and_say_so(monkeypatch):
    monkeypatch.setattr(documents, "MAX_TEXT_CHARS", 5000)
    d = to_text("We collect your email address for login.\n\n" * 2000)
    assert "truncated" in d.flags and len(d.text) <= 5000
    monkeypatch.setattr(documents, "MAX_INPUT_CHARS", 1000)
    assert "truncated" in to_text("x" * 5000).flags


def test_bytes_and_garbage_never_raise():
    for junk in (b"\xff\xfe\x00garbage\x00" * 100, "<<<>>></p></div><li>", "\x00" * 50, "#" * 1000):
        to_text(junk)


def test_policy_page_heuristics():
    assert policy_url_kind("https://www.example.com/privacy-policy") == "policy"
    assert policy_url_kind("https://example.de/datenschutz") == "policy"
    assert policy_url_kind("https://example.com/legal/terms") == "maybe"
    assert policy_url_kind("https://example.com/products/42") is None
    assert policy_url_kind("https://example.com/article?gdpr=1&consent=privacy") is None
    assert is_policy_page("https://example.com/legal/notice", "Privacy Notice – Example")
    assert not is_policy_page("https://example.com/legal/terms", "Terms of Service")
    assert not is_policy_page("https://example.com/privacy", "Login", "Enter your password to continue.")
