import json

import pytest

from guardian_proxy.domains import registrable_domain as site_domain
from guardian_proxy.extract import recipients
from guardian_proxy.extract.extractor import initiating_site
from guardian_proxy.resources import DATA_DIR
from guardian_proxy.types import RECIPIENT_CLASSES, RawRequest


def cls(host, site=None, port=None, path="/", **kw):
    return recipients.classify(host, site, port, path, **kw)


@pytest.mark.parametrize("host,site,port,path,want,owner", [
    ("ads.doubleclick.net", None, None, "/collect", "ad_network", "Google"),
    ("support.zendesk.com", None, None, "/api/tickets", "service_provider", "Zendesk"),
    ("acme.zendesk.com", None, None, "/", "service_provider", "Zendesk"),
    ("region1.google-analytics.com", "shop.example.com", None, "/g/collect", "analytics", "Google"),
    ("platform.twitter.com", None, None, "/widgets.js", "social", "Twitter"),
    ("x.acxiom.com", None, None, "/", "data_broker", "Acxiom LLC"),
    ("api.openai.com", None, None, "/v1/chat/completions", "ai_service", "OpenAI"),
    ("api.anthropic.com", None, None, "/v1/messages", "ai_service", "Anthropic"),
    ("generativelanguage.googleapis.com", None, None, "/v1beta/models/x:generateContent", "ai_service", "Google"),
    ("us-central1-aiplatform.googleapis.com", None, None, "/", "ai_service", "Google"),
    ("bedrock-runtime.eu-west-1.amazonaws.com", None, None, "/model/x/invoke", "ai_service", "Amazon"),
    ("api.mistral.ai", None, None, "/v1/chat/completions", "ai_service", "Mistral AI"),
    ("api.groq.com", None, None, "/openai/v1/chat/completions", "ai_service", "Groq"),
    ("openrouter.ai", None, None, "/api/v1/chat/completions", "ai_service", "OpenRouter"),
    ("api.together.xyz", None, None, "/v1/chat/completions", "ai_service", "Together AI"),
    ("api.cohere.ai", None, None, "/v1/chat", "ai_service", "Cohere"),
    ("localhost", None, 11434, "/api/tags", "ai_service", "local model server"),
    ("127.0.0.1", None, 8000, "/v1/chat/completions", "ai_service", "local model server"),
    ("127.0.0.1", None, 8080, "/index.html", "first_party", None),
    ("llm.corp-example.com", None, None, "/v1/chat/completions", "ai_service", None),
    ("at-o.net", None, None, "/hit.xiti", "analytics", "AT Internet (formerly XiTi)"),
    ("cdn.example.org", None, None, "/x", "unknown_third_party", None),
    ("www.o2.pl", "wp.pl", None, "/", "first_party", "o2.pl"),
    ("static.doubleclick.net", "youtube.com", None, "/", "ad_network", "Google"),  # a tracker keeps its class
    ("api.shop-example.com", "shop-example.com", None, "/cart", "first_party", None),
])
def test_classify(host, site, port, path, want, owner):
    r = cls(host, site, port, path)
    assert (r.cls, r.owner) == (want, owner)
    assert r.cls in RECIPIENT_CLASSES


def test_cname_cloaked_tracker_is_unmasked():
    resolver = {"metrics.shop-example.com": "shop-example.com.at-o.net.", "api.shop-example.com": None}.get
    r = cls("metrics.shop-example.com", "shop-example.com", resolve_cname=resolver)
    assert (r.cls, r.rule, r.flags) == ("analytics", "cname-cloaked", ["cname_cloaked"])
    assert cls("api.shop-example.com", "shop-example.com", resolve_cname=resolver).cls == "first_party"
    # a first-party name served by a CDN stays first party
    cdn = {"img.shop-example.com": "d111111abcdef8.cloudfront.net"}.get
    assert cls("img.shop-example.com", "shop-example.com", resolve_cname=cdn).cls == "first_party"


def test_site_domain_and_initiating_site():
    assert site_domain("www.shop.example") == "shop.example"
    assert site_domain("tracker.eu.example.co.uk") == "example.co.uk"
    assert site_domain("192.168.1.2") == "192.168.1.2"
    req = RawRequest(method="GET", url="https://a.example.com/", headers=[("referer", "https://www.shop.example/x")])
    assert initiating_site(req) == "shop.example"
    nav = RawRequest(method="GET", url="https://news.example.com/", headers=[("sec-fetch-mode", "navigate"),
                                                                          ("sec-fetch-site", "none")])
    assert initiating_site(nav) == "example.com"
    assert initiating_site(RawRequest(method="GET", url="https://a.example.com/", headers=[("origin", "null")])) is None
    # a link followed from another site opens the destination: it is the top-level page, hence first party
    link = RawRequest(method="GET", url="https://www.shop-example.com/p/1", headers=[
        ("referer", "https://news.example.org/"), ("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "document"),
        ("sec-fetch-site", "cross-site"), ("sec-fetch-user", "?1")])
    assert initiating_site(link) == "shop-example.com"
    frame = RawRequest(method="GET", url="https://platform.twitter.com/w", headers=[
        ("referer", "https://news.example.org/"), ("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "iframe")])
    assert initiating_site(frame) == "example.org"


def test_shipped_table_and_notices():
    table = json.loads((DATA_DIR / "recipients.json").read_text())
    assert len(table["trackers"]) > 4000 and len(table["brokers"]) > 400 and len(table["related_sets"]) > 200
    assert set(table["category_class"].values()) <= set(RECIPIENT_CLASSES)
    assert all(v[0] in RECIPIENT_CLASSES for v in table["trackers"].values())
    notice = (DATA_DIR / "NOTICE-recipients.md").read_text()
    for needle in ("CC BY 4.0", "Apache License 2.0", "MIT", "WhoTracks.me", "related-website-sets", "cname-trackers"):
        assert needle in notice
    assert {"adguard-cname-trackers-LICENSE", "ca-data-brokers-LICENSE.md", "related-website-sets-LICENSE",
            "whotracksme-LICENSE.md"} <= {p.name for p in (DATA_DIR / "licenses").iterdir()}


@pytest.mark.parametrize("host,site,path,want,rule", [
    # the class follows the destination: a broker reached by a form on a shop page is a broker
    ("www.liveramp.com", "liveramp.com", "/enroll", "data_broker", "data-broker"),
    ("www.liveramp.com", "shop.example", "/enroll", "data_broker", "data-broker"),
    ("rp.liadm.com", "news.example", "/j", "data_broker", "tracker-db"),  # a registered broker's match endpoint
    # AI chat web apps are AI services on their own pages
    ("chat.deepseek.com", "deepseek.com", "/api/v0/chat/completion", "ai_service", "ai-host"),
    ("www.perplexity.ai", "perplexity.ai", "/rest/sse/perplexity_ask", "ai_service", "ai-host"),
    ("chat.mistral.ai", "mistral.ai", "/api/chat", "ai_service", "ai-host"),
    ("copilot.microsoft.com", "microsoft.com", "/c/api/conversations", "ai_service", "ai-host"),
    # identity providers and payment processors: first party on their own site, service providers from another
    ("accounts.google.com", "shop.example", "/v3/signin/identifier", "service_provider", "identity_provider"),
    ("accounts.google.com", "google.com", "/v3/signin/identifier", "first_party", "identity_provider"),
    ("login.microsoftonline.com", "corp.example", "/common/oauth2/v2.0/token", "service_provider", "identity_provider"),
    ("cognito-idp.eu-west-1.amazonaws.com", "app.example", "/", "service_provider", "identity_provider"),
    ("checkout.stripe.com", "stripe.com", "/c/pay", "first_party", "payment_processor"),
    ("checkoutshopper-live.adyen.com", "shop.example", "/checkoutshopper/v1/payments", "service_provider",
     "payment_processor"),
    ("github.com", "shop.example", "/login/oauth/authorize", "service_provider", "identity_provider"),
    ("github.com", "shop.example", "/explore", "service_provider", "tracker-db"),
    # a site's own back end on a platform
    ("shop-example.myshopify.com", "shop.example", "/api/2024-07/graphql.json", "service_provider", "platform"),
    ("abc123.execute-api.eu-west-1.amazonaws.com", "app.example", "/prod/orders", "service_provider", "platform"),
    # a private name is the same site on all its subdomains
    ("static.app.corp.internal", "app.corp.internal", "/common.js", "first_party", "same-site"),
    ("wiki.eng.lan", "eng.lan", "/", "first_party", "same-site"),
    ("portal.home.arpa", "portal.home.arpa", "/", "first_party", "same-site"),
    ("cdn.shop.test.example", "shop.test.example", "/x.js", "first_party", "same-site"),
])
def test_class_follows_the_destination(host, site, path, want, rule):
    r = cls(host, site, None, path)
    assert (r.cls, r.rule) == (want, rule)


def test_private_names_are_their_own_site():
    for host in ("app.corp.internal", "wiki.eng.lan", "portal.home.arpa", "shop.test.example"):
        req = RawRequest(method="GET", url=f"https://{host}/common.js", headers=[
            ("referer", f"https://{host}/"), ("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "no-cors"),
            ("sec-fetch-dest", "script")])
        assert cls(host, initiating_site(req)).cls == "first_party", host
        assert site_domain(host) == initiating_site(req)


def test_digests_to_ad_tech_are_match_keys_but_asset_names_are_not():
    from guardian_proxy.extract import Extractor
    from guardian_proxy.extract.detector import Detector

    ex = Extractor(Detector(ner=False, quasi=False))
    sha = "ef561d840948dd7d1311472361295cc32ff2fa2e9387f9936c3190584ca55b1e"
    pixel = RawRequest(method="GET", url=f"https://tr.snapchat.com/p?pid=1&ev=PURCHASE&x_hem={sha}",
                       headers=[("referer", "https://www.shop.example/"), ("sec-fetch-site", "cross-site")])
    a = ex.extract(pixel)
    assert [(s.entity, s.text) for s in a.spans if s.entity == "HASHED_IDENTIFIER"] == [("HASHED_IDENTIFIER", sha)]
    widget = RawRequest(method="GET", url="https://platform.twitter.com/widgets/widget_iframe.2f70fb173b9000da126c79afe2098f02.html",
                        headers=[("referer", "https://news.example/"), ("sec-fetch-site", "cross-site")])
    assert not [s for s in ex.extract(widget).spans if s.entity == "HASHED_IDENTIFIER"]
    provider = RawRequest(method="GET", url=f"https://api.example-cdn.net/v1/file?sum={sha}",
                          headers=[("referer", "https://news.example/")])
    assert not [s for s in ex.extract(provider).spans if s.entity == "HASHED_IDENTIFIER"]


# --------------------------------------------------------------------------- who addressed whom (R-ADDRESSED)
from guardian_proxy.extract import addressee  # noqa: E402

CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


def raw(method="GET", url="https://www.shop-example.com/login", **h):
    return RawRequest(method=method, url=url, headers=[(k.replace("_", "-"), v) for k, v in h.items()])


@pytest.mark.parametrize("r,want", [
    (raw("POST", user_agent="curl/8.5.0", accept="*/*"), "tool"),
    (raw("POST", user_agent="python-httpx/0.27.0"), "tool"),
    (raw("POST"), "tool"),  # no User-Agent at all: a script
    (raw("POST", user_agent="node"), "tool"),
    (raw("POST", user_agent=CHROME), "tool"),  # a browser always sends Fetch Metadata over HTTPS: a borrowed name
    (raw("POST", user_agent="Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240805.005)"), "app"),
    (raw("POST", user_agent="MyApp/4.12 CFNetwork/1494.0.7 Darwin/23.4.0"), "app"),
    (raw(url="http://dev.shop-example.com:3000/", user_agent=CHROME, upgrade_insecure_requests="1"), "navigation"),
    (raw(url="http://dev.shop-example.com:3000/app.js", user_agent=CHROME), "browser"),
    (raw("POST", origin="https://www.shop-example.com", user_agent="curl/8.5.0"), "page"),
    (raw(referer="https://www.shop-example.com/"), "page"),
    (raw(sec_fetch_site="cross-site"), "page"),
    (raw("POST", origin="null"), "page"),
])
def test_who_made_the_request(r, want):
    assert addressee.client(r) == want


@pytest.mark.parametrize("host,path,want,rule", [
    ("www.shop-example.com", "/login", "first_party", "addressed"),  # curl -d 'email=…&password=…'
    ("support.zendesk.com", "/api/v2/requests", "first_party", "addressed"),  # the user's own ticket
    ("api.crm-example.io", "/v2/contacts", "first_party", "addressed"),
    ("www.google-analytics.com", "/collect", "analytics", "tracker-db"),  # a tracker keeps its class
    ("ads.doubleclick.net", "/collect", "ad_network", "tracker-db"),
    ("api.segment.io", "/v1/identify", "analytics", "tracker-db"),
    ("platform.twitter.com", "/widgets.js", "social", "tracker-db"),
    ("x.acxiom.com", "/", "data_broker", "data-broker"),
    ("shop-example.com.at-o.net", "/", "analytics", "cname-tracker"),  # a CNAME-tracker vendor reached directly
    ("api.openai.com", "/v1/chat/completions", "ai_service", "ai-host"),  # a prompt is still a prompt
    ("api.stripe.com", "/v1/payment_methods", "service_provider", "payment_processor"),  # keeps its role
])
def test_request_no_page_made_is_addressed_to_its_host(host, path, want, rule):
    r = cls(host, None, None, path, addressed=True)
    assert (r.cls, r.rule) == (want, rule)
    assert ("addressed" in r.flags) == (rule == "addressed")
    # without `addressed` (a page made it, or a mobile app's SDK) nothing changes
    if rule == "addressed":
        assert cls(host, None, None, path).cls != "first_party"


def test_addressed_host_that_is_a_cname_to_a_tracker_is_that_tracker():
    resolver = {"go.shop-example.com": "shop-example.eulerian.net."}.get
    r = cls("go.shop-example.com", None, None, "/newsletter", resolve_cname=resolver, addressed=True)
    assert (r.cls, r.rule, r.flags) == ("analytics", "cname-cloaked", ["cname_cloaked"])
    assert cls("www.shop-example.com", None, resolve_cname=resolver, addressed=True).cls == "first_party"


def test_cname_tracker_list_names_the_vendors_behind_cloaked_names():
    table = json.loads((DATA_DIR / "recipients.json").read_text())
    assert len(table["cname_trackers"]) > 50 and table["cname_trackers"].get("eulerian.net")
    for target in ("shop-example.eulerian.net", "x.at-o.net"):  # classify consults it for first-party-looking names
        r = cls("m.shop-example.com", "shop-example.com", resolve_cname={"m.shop-example.com": target}.get)
        assert r.cls in ("analytics", "ad_network") and "cname_cloaked" in r.flags


@pytest.mark.parametrize("host,site,want,rule", [
    ("abs.twimg.com", "twitter.com", "first_party", "same-owner"),  # a site's own family of domains
    ("pbs.twimg.com", "x.com", "first_party", "same-owner"),
    ("api.twitter.com", "x.com", "first_party", "same-owner"),  # the page's own auth_token cookies
    ("api.x.com", "twitter.com", "first_party", "same-owner"),
    ("matrix.redditspace.com", "reddit.com", "first_party", "same-brand"),  # the site's own chat server
    ("www.redditstatic.com", "reddit.com", "first_party", "same-owner"),
    ("use.typekit.net", "adobe.com", "first_party", "same-owner"),
    ("www.o2.pl", "wp.pl", "first_party", "same-owner"),  # a related-website set
    ("static.doubleclick.net", "youtube.com", "ad_network", "tracker-db"),  # a tracker of the same owner stays one
    ("analytics.twitter.com", "x.com", "analytics", "tracker-db"),
    ("ads-twitter.com", "x.com", "ad_network", "tracker-db"),
    ("www.google-analytics.com", "google.com", "analytics", "tracker-db"),
    # a tracking owner's pixel or ads host the DB does not name stays a tracker on its own pages (replay: a follow
    # button's p.twitter.com/f.gif carried the embedding page to Twitter as "first party")
    ("p.twitter.com", "twitter.com", "analytics", "tracker-label"),
    ("p.twitter.com", "x.com", "social", "tracker-db"),
    ("ads.twitter.com", "twitter.com", "ad_network", "tracker-label"),
    ("api.twitter.com", "twitter.com", "first_party", "same-site"),
    ("xample-cdn.com", "x.com", "unknown_third_party", "default"),  # a one-letter brand extends to nothing
    ("cdn.newsfeed.net", "news.org", "unknown_third_party", "default"),  # a brand under five letters: no family
])
def test_site_family_is_first_party(host, site, want, rule):
    r = cls(host, site)
    assert (r.cls, r.rule) == (want, rule)


@pytest.mark.parametrize("host,site,path,vendor", [
    # a vendor served under the site's own name (CNAME smetrics.<site>), with no DNS answer to show it
    ("smetrics.fellcraft-outdoor.example", "fellcraft-outdoor.example", "/b/ss/fellcraftprod/1/JS-2.23.0-LDQM/s7514",
     "Adobe (Analytics, AppMeasurement)"),
    ("logs1.shop.example", "shop.example", "/hit.xiti", "AT Internet (Piano Analytics)"),
    ("sgtm.shop.example", "shop.example", "/g/collect", "Google (Analytics 4)"),  # server-side tag manager
    ("metrics.shop.example", None, "/b/ss/shopprod/1/JS-2.23.0/s1", "Adobe (Analytics, AppMeasurement)"),  # a script
])
def test_a_vendors_collection_protocol_is_that_vendor_on_any_host(host, site, path, vendor):
    r = cls(host, site, path=path)
    assert (r.cls, r.owner, r.rule, r.flags) == ("analytics", vendor, "vendor-path", ["vendor_path"])


@pytest.mark.parametrize("path", ["/b/sso/login", "/api/b/ss", "/g/collection", "/collect",
                                  "/matomo.php", "/com.snowplowanalytics.snowplow/tp2"])
def test_paths_other_software_uses_are_no_vendor_protocol(path):
    """Nor a self-hostable collector's (Matomo, Snowplow): on the site's own name it keeps the data with the site."""
    assert recipients.tracker_path(path) is None


@pytest.mark.parametrize("host,site,path,want,rule,role", [
    # the user's own homeserver, whichever web client on whichever domain talks to it (Element on app.element.io)
    ("matrix-client.matrix.org", "element.io", "/_matrix/client/v3/rooms/!a:matrix.org/send/m.room.message/t1",
     "service_provider", "account-protocol", "account_protocol"),
    ("chat.jane-family.example", "element.io", "/_matrix/media/v3/upload", "service_provider", "account-protocol",
     "account_protocol"),  # self-hosted
    ("cloud.jane-family.example", "nextcloud-client.example", "/remote.php/dav/files/jane/a.txt", "service_provider",
     "account-protocol", "account_protocol"),
    ("api.fastmail.com", "fastmail.com", "/jmap/api/", "first_party", "same-site", None),  # its own site: the site
    ("www.google-analytics.com", "element.io", "/_matrix/client/v3/sync", "analytics", "tracker-db", None),
    ("chat.jane-family.example", "element.io", "/_matrix_client/v3/sync", "unknown_third_party", "default", None),
])
def test_an_open_account_protocol_is_the_users_own_server(host, site, path, want, rule, role):
    r = cls(host, site, path=path)
    assert (r.cls, r.rule, r.role) == (want, rule, role)
    assert recipients.account_protocol("/_matrix/client/v3/login?x=1") == "Matrix homeserver (Client-Server API)"
    assert recipients.account_protocol("/api/_matrix/client") is None  # the protocol's path, from the root


@pytest.mark.parametrize("host,path,want", [
    ("chatgpt.com", "/ces/v1/t", "analytics"),  # Segment-like client: track
    ("chatgpt.com", "/ces/v1/rgstr", "analytics"),  # Statsig-like exposure log
    ("chatgpt.com", "/ces/v1/m", "analytics"),
    ("chatgpt.com", "/ces/statsc/flush", "analytics"),
    ("chatgpt.com", "/ces/v1/telemetry/intake", "analytics"),
    ("claude.ai", "/api/event_logging/batch", "ai_service"),
    ("claude.ai", "/v1/t", "analytics"),
    ("gemini.google.com", "/_/BardChatUi/data/batchexecute", "ai_service"),
    ("chatgpt.com", "/backend-api/f/conversation", "ai_service"),
    ("chatgpt.com", "/backend-api/conversation/metrics", "ai_service"),  # a chat path is never telemetry
    ("api.openai.com", "/v1/chat/completions", "ai_service"),
    ("api.anthropic.com", "/v1/messages", "ai_service"),
    ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.0-flash:generateContent", "ai_service"),
])
def test_analytics_endpoints_on_ai_hosts_are_trackers(host, path, want):
    r = cls(host, "chatgpt.com", None, path)
    assert r.cls == want
    if want == "analytics":
        assert r.rule == "ai-telemetry" and r.owner


@pytest.mark.parametrize("host,site,path,want,rule", [
    # replay: the anti-bot vendor's frame served below the chat app's name, from the app's own page
    ("tcr9i.chat.openai.com", "openai.com", "/fc/a/", "first_party", "same-site"),
    ("tcr9i.chat.openai.com", "openai.com", "/fc/gt2/public_key/35536E1E", "first_party", "same-site"),
    # the app itself, a chat path below it, or nobody's page: still the AI service
    ("chat.openai.com", "openai.com", "/backend-api/user_system_messages", "ai_service", "ai-host"),
    ("tcr9i.chat.openai.com", "openai.com", "/backend-api/conversation", "ai_service", "ai-host"),
    ("tcr9i.chat.openai.com", None, "/fc/a/", "ai_service", "ai-host"),
    ("api.openai.com", "openai.com", "/v1/models", "ai_service", "ai-host"),
])
def test_a_name_below_an_ai_app_that_no_dialect_addresses_is_the_site(host, site, path, want, rule):
    r = recipients.classify(host, site, None, path)
    assert (r.cls, r.rule) == (want, rule)


def test_plain_http_navigation_opens_its_site():
    # a developer's own build on a non-standard port, reloaded over plain HTTP: browsers send no Fetch Metadata
    # outside secure contexts, so the reload looked like "no page" and its session cookie went to "a third party"
    reload = raw(url="http://dev.shop-example.com:3000/account", user_agent=CHROME, upgrade_insecure_requests="1",
                 cookie="session=abc")
    assert initiating_site(reload) == "shop-example.com"
    assert cls("dev.shop-example.com", initiating_site(reload), 3000, "/account").cls == "first_party"
    # not a navigation (no Upgrade-Insecure-Requests) and no page header: nothing is assumed
    assert initiating_site(raw(url="http://dev.shop-example.com:3000/x.js", user_agent=CHROME)) is None
    # a local or private address is the user's own whatever its port
    for host in ("localhost", "192.168.1.20", "10.0.0.5", "devbox.local"):
        assert cls(host, None, 5173, "/api/login").cls == "first_party"


@pytest.mark.parametrize("host,path", [
    ("collector.unknown-example.net", "/in"), ("telemetry.tool-example.dev", "/v1/batch"),
    ("api.tool-example.dev", "/v1/telemetry"), ("t.tracker-example.com", "/"), ("px.shop-example.com", "/pixel"),
])
def test_a_tools_own_telemetry_is_not_the_users_addressee(host, path):
    # no list names these, but the name says it measures: the user did not address a collector
    r = cls(host, None, None, path, addressed=True)
    assert r.cls == "unknown_third_party" and "addressed" not in r.flags


def test_raw_streams_and_plain_http_sub_resources_are_not_tools():
    assert addressee.client(raw("SEND", url="tcp://chat.example.net:7000/")) == "stream"
    assert addressee.client(raw(url="http://www.shop-example.com/a.js", user_agent=CHROME)) == "browser"
