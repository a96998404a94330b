"""A rare word that is the recipient's own name is no residue (a replay leftover,
docs/benchmarks.md#replay-of-real-captures): a page title such as "Cinema+ Flixora - Watch TV Shows" in a
request to flixora.com (or sent by a page on flixora.com) carries the site's own name, which the anonymizer's
guesser reads as a rare capitalised word. Verified against the original, it escalated the rewrite L1→L3/L4 and
rewrote the city and the site's name: a needless change. The destination and the sending page know their own
name, and it says nothing of who the user is."""

from __future__ import annotations

import json

import pytest

from guardian_proxy.anonymize.verifier import Guess, LexicalVerifier, own_names
from guardian_proxy.types import RawRequest

TITLE = "Cinema+ Flixora - Watch TV Shows, Movies, Specials, Live Cricket & Football"
BODY = json.dumps({"event": "page_view", "context": {"traits": {"city": "Pune"}, "page": {"title": TITLE}}}).encode()


def test_own_names_are_the_name_labels_of_the_registrable_domains():
    assert own_names("flixora.com", None) == {"flixora"}
    assert own_names("bbc.co.uk", "my-shop.example") == {"bbc", "shop", "myshop"}


def test_a_guess_of_the_recipients_own_name_alone_is_not_verified():
    v = LexicalVerifier(f"{TITLE}\nPune", own_names("flixora.com"))
    assert not v.verified(Guess("Flixora", 0.85, "rare"))
    assert v.verified(Guess("Pune", 0.85, "rare"))  # anything else of the original still counts
    assert v.verified(Guess("Flixora Pune", 0.85, "llm"))
    assert LexicalVerifier(TITLE).verified(Guess("Flixora", 0.85, "rare"))  # to anyone else it is residue


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway

    tmp = tmp_path_factory.mktemp("own")
    (tmp / "config.yaml").write_text(f"state_dir: {tmp}\n")
    return Gateway.from_settings(load_settings(tmp / "config.yaml"), with_log=False)


def _transform(gw, url: str, headers: list[tuple[str, str]]):
    req = RawRequest(method="POST", url=url, body=BODY, headers=[("content-type", "application/json"), *headers])
    action = gw.extractor.extract(req)
    assert "Flixora" in {w for sp in action.spans for w in sp.text.split()}  # the title's name is located
    rw, level, _ = gw.transformer.transform(req, action, 1)
    return rw, level


@pytest.mark.slow
@pytest.mark.parametrize("url, headers", [
    ("https://events.flixora.com/v1/track", [("origin", "https://www.flixora.com")]),  # the site's own telemetry
    ("https://collect.metrics.example/v1/track", [("origin", "https://www.flixora.com"),
                                                  ("referer", "https://www.flixora.com/in/home")]),  # the page's
])
def test_the_sites_own_name_in_a_title_does_not_escalate_the_rewrite(gw, url, headers):
    rw, level = _transform(gw, url, headers)
    assert level == 1 and not rw.stats["upgrade_cues"], rw.stats
    assert rw.body is None or TITLE.encode() in rw.body  # the title is left as the page wrote it


@pytest.mark.slow
def test_to_a_recipient_that_is_not_the_named_site_the_name_is_still_residue(gw):
    rw, level = _transform(gw, "https://collect.metrics.example/v1/track", [])
    assert level > 1 and rw.stats["upgrade_cues"].get("rare"), rw.stats
