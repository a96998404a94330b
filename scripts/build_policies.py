#!/usr/bin/env python3
"""Build the shipped policy corpus (guardian_proxy/policies/) from the Open Terms Archive collections.

    .venv/bin/python scripts/build_policies.py [--data ../shared/data] [--out guardian_proxy/policies] [--per-owner 80]

Each owner in OWNERS names its OTA documents (privacy and tracker/cookie policies; the English, longer
of the two collections' copies is used) and the registrable domains its statements answer for; owners
with a WhoTracks.Me company id also get that company's tracker domains (CC BY 4.0, attributed in
policies/NOTICE.md). Domains shared by several owners stay with the owner that names them explicitly.
Statements are segmented by guardian_proxy.policy and capped per owner: the cap keeps the statements
that cover the most distinct (practice, category/recipient/purpose) pairs first, so the corpus stays
small (under 5 MB) while every disclosure kind survives; kept statements stay in document order.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.domains import registrable_domain  # noqa: E402
from guardian_proxy.policy.documents import to_text  # noqa: E402
from guardian_proxy.policy.segment import Segmenter  # noqa: E402
from guardian_proxy.state.policies import Policy, index_json, statement_json  # noqa: E402
from guardian_proxy.types import Statement  # noqa: E402

# (primary domain, name, kind, OTA documents, extra domains, WhoTracks.Me company ids)
OWNERS: list[tuple[str, str, str, list[str], list[str], list[str]]] = [
    # --- ad tech
    ("google.com", "Google", "ad_network", ["Google_Privacy_Policy", "Google_Analytics_Trackers_Policy"],
     ["doubleclick.net", "googlesyndication.com", "googleadservices.com", "google-analytics.com", "googletagmanager.com",
      "googletagservices.com", "gstatic.com", "googleapis.com", "googleusercontent.com", "admob.com", "gmail.com",
      "google.co.uk", "google.de", "google.fr", "google.ca", "google.co.in", "google.com.br", "google.co.jp", "gvt1.com",
      "gvt2.com", "withgoogle.com", "firebaseio.com", "firebase.com", "app-measurement.com", "2mdn.net", "gemini.google"],
     ["google"]),
    ("criteo.com", "Criteo", "ad_network", ["Criteo_Privacy_Policy"], ["criteo.net"], ["criteo"]),
    ("taboola.com", "Taboola", "ad_network", ["Taboola_Privacy_Policy", "Taboola_Trackers_Policy"], ["taboolasyndication.com"], ["taboola"]),
    ("outbrain.com", "Outbrain", "ad_network", ["Outbrain_Privacy_Policy"], ["outbrainimg.com"], ["outbrain"]),
    ("rubiconproject.com", "Magnite (Rubicon Project)", "ad_network", ["Rubicon_Project_Privacy_Policy", "Rubicon_Project_Trackers_Policy"],
     ["magnite.com"], ["rubicon_project"]),
    ("thetradedesk.com", "The Trade Desk", "ad_network", ["The_Trade_Desk_Privacy_Policy"], ["adsrvr.org"], ["the_trade_desk"]),
    ("teads.com", "Teads", "ad_network", ["Teads_Privacy_Policy"], ["teads.tv"], ["teads"]),
    ("adroll.com", "AdRoll (NextRoll)", "ad_network", ["AdRoll_Privacy_Policy"], ["nextroll.com"], ["adroll"]),
    ("amazon-adsystem.com", "Amazon Ads", "ad_network", ["Amazon_Advertising_Privacy_Policy", "Amazon_Advertising_Trackers_Policy"],
     ["advertising.amazon.com", "assoc-amazon.com", "serving-sys.com", "sizmek.com"], []),
    ("acuityads.com", "AcuityAds (illumin)", "ad_network", ["AcuityAds_Privacy_Policy", "AcuityAds_Trackers_Policy"], [], ["acuity_ads"]),
    ("simpli.fi", "Simpli.fi", "ad_network", ["Simpli.fi_Privacy_Policy", "Simpli.fi_Trackers_Policy"], [], ["simpli.fi"]),
    ("is.com", "ironSource (Unity)", "ad_network", ["ironSource_Privacy_Policy"], ["ironsrc.com", "ironsrc.net", "supersonicads.com"],
     ["ironsource"]),
    ("infolinks.com", "Infolinks", "ad_network", ["Infolinks_Privacy_Policy"], [], ["infolinks"]),
    ("revcontent.com", "Revcontent", "ad_network", ["Revcontent_Privacy_Policy"], [], ["revcontent"]),
    ("adsupply.com", "AdSupply", "ad_network", ["AdSupply_Privacy_Policy", "AdSupply_Trackers_Policy"], [], ["adsupply"]),
    ("exponential.com", "Exponential (VDX.tv)", "ad_network", ["Exponential_Privacy_Policy"], ["tribalfusion.com", "vdx.tv"], ["exponential_interactive"]),
    ("valueimpression.com", "ValueImpression", "ad_network", ["ValueImpression_Privacy_Policy"], [], []),
    # --- analytics, data, CDN, infrastructure
    ("ipinfo.io", "IPinfo", "analytics", ["IPinfo_Privacy_Policy"], [], []),
    ("cloudflare.com", "Cloudflare", "service_provider", ["Cloudflare_Privacy_Policy"],
     ["cloudflare.net", "cloudflareinsights.com", "cloudflare-dns.com", "one.one", "cloudflarestream.com"], ["cloudflare"]),
    ("amazonaws.com", "Amazon Web Services", "service_provider", ["Amazon_Web_Services_Privacy_Policy"],
     ["cloudfront.net", "awsstatic.com", "aws.amazon.com", "amazonwebservices.com", "aws.com"], []),
    ("polyfill.io", "Polyfill.io", "service_provider", ["Polyfill.io_Privacy_Policy"], [], []),
    ("wpengine.com", "WP Engine", "service_provider", ["WPEngine_Privacy_Policy"], ["wpenginepowered.com"], []),
    ("hetzner.com", "Hetzner", "service_provider", ["Hetzner_Privacy_Policy"], ["hetzner.de", "your-server.de"], []),
    ("scaleway.com", "Scaleway", "service_provider", ["Scaleway_Privacy_Policy", "Scaleway_Trackers_Policy"], [], []),
    ("mailjet.com", "Mailjet", "service_provider", ["Mailjet_Privacy_Policy", "Mailjet_Trackers_Policy"], [], []),
    ("atlassian.com", "Atlassian", "service_provider", ["Atlassian_Privacy_Policy"], ["atlassian.net", "atl-paas.net", "statuspage.io", "bitbucket.org", "trello.com"], ["atlassian"]),
    ("zoom.us", "Zoom", "service_provider", ["Zoom_Privacy_Policy"], ["zoom.com", "zoomgov.com"], []),
    ("surveymonkey.com", "SurveyMonkey", "service_provider", ["SurveyMonkey_Privacy_Policy"], ["surveymonkey.net"], []),
    # --- social
    ("facebook.com", "Meta (Facebook)", "social", ["Facebook_Privacy_Policy", "Facebook_Trackers_Policy"],
     ["facebook.net", "fbcdn.net", "fbsbx.com", "meta.com", "messenger.com", "fb.com", "fb.me", "atdmt.com", "meta.ai"], ["facebook"]),
    ("instagram.com", "Instagram", "social", ["Instagram_Privacy_Policy", "Instagram_Trackers_Policy"], ["cdninstagram.com", "ig.me"], []),
    ("whatsapp.com", "WhatsApp", "social", ["WhatsApp_Privacy_Policy", "WhatsApp_Trackers_Policy"], ["whatsapp.net", "wa.me"], []),
    ("threads.net", "Threads", "social", ["Threads_Privacy_Policy"], ["threads.com"], []),
    ("x.com", "X (Twitter)", "social", ["X_Privacy_Policy", "X_Trackers_Policy"],
     ["twitter.com", "t.co", "twimg.com", "ads-twitter.com", "twttr.com"], ["twitter"]),
    ("linkedin.com", "LinkedIn", "social", ["LinkedIn_Privacy_Policy", "LinkedIn_Trackers_Policy"], ["licdn.com", "lnkd.in"], []),
    ("pinterest.com", "Pinterest", "social", ["Pinterest_Privacy_Policy"], ["pinimg.com", "pinterest.co.uk", "pinterest.de", "pin.it"], ["pinterest"]),
    ("tiktok.com", "TikTok", "social", ["TikTok_Privacy_Policy", "TikTok_Trackers_Policy"],
     ["tiktokcdn.com", "tiktokv.com", "tiktokcdn-us.com", "ttwstatic.com", "byteoversea.com", "ibytedtos.com", "tiktokw.us"], ["bytedance_inc"]),
    ("snapchat.com", "Snap", "social", ["Snapchat_Privacy_Policy", "Snapchat_Trackers_Policy"], ["snap.com", "sc-static.net", "snapkit.com", "snapads.com", "sc-cdn.net"], []),
    ("reddit.com", "Reddit", "social", ["Reddit_Privacy_Policy", "Reddit_Trackers_Policy"], ["redditstatic.com", "redditmedia.com", "redd.it", "reddit.map.fastly.net"], ["reddit"]),
    ("tumblr.com", "Tumblr", "social", ["Tumblr_Privacy_Policy"], [], []),
    ("discord.com", "Discord", "social", ["Discord_Privacy_Policy"], ["discordapp.com", "discord.gg", "discordapp.net"], []),
    ("quora.com", "Quora", "social", ["Quora_Privacy_Policy"], ["quoracdn.net"], []),
    ("bsky.app", "Bluesky", "social", ["Bluesky_Privacy_Policy"], ["bsky.social", "bsky.network"], []),
    ("twitch.tv", "Twitch", "social", ["Twitch_Privacy_Policy", "Twitch_Trackers_Policy"], ["ttvnw.net", "jtvnw.net", "twitchcdn.net", "ext-twitch.tv", "twitchsvc.net"], []),
    ("disqus.com", "Disqus", "social", ["Disqus_Privacy_Policy"], ["disquscdn.com", "disqusads.com"], []),
    ("telegram.org", "Telegram", "social", ["Telegram_Privacy_Policy"], ["t.me", "telegram.me"], []),
    ("line.me", "LINE", "social", ["LINE_Privacy_Policy"], ["line-scdn.net", "line-apps.com"], []),
    ("wechat.com", "WeChat", "social", ["WeChat_Privacy_Policy"], ["weixin.qq.com"], []),
    # --- AI services
    ("huggingface.co", "Hugging Face", "ai_service", ["Hugging_Face_Privacy_Policy"], ["hf.co", "hf.space"], []),
    ("grammarly.com", "Grammarly", "ai_service", ["Grammarly_Privacy_Policy"], ["grammarly.io", "grammarly.net"], []),
    ("wolframalpha.com", "Wolfram|Alpha", "ai_service", ["WolframAlpha_Privacy_Policy"], [], []),
    # --- consumer sites
    ("youtube.com", "YouTube", "first_party", ["YouTube_Privacy_Policy"],
     ["ytimg.com", "youtube-nocookie.com", "googlevideo.com", "youtu.be", "ggpht.com"], []),
    ("amazon.com", "Amazon", "first_party", ["Amazon.com_Privacy_Policy"],
     ["amazon.co.uk", "amazon.de", "amazon.fr", "amazon.it", "amazon.es", "amazon.ca", "amazon.co.jp", "amazon.in",
      "media-amazon.com", "ssl-images-amazon.com", "images-amazon.com", "a2z.com", "alexa.com", "amazon.dev"], ["amazon_associates"]),
    ("apple.com", "Apple", "first_party", ["Apple_Privacy_Policy"], ["icloud.com", "mzstatic.com", "cdn-apple.com", "apple-cloudkit.com", "me.com"], ["apple"]),
    ("netflix.com", "Netflix", "first_party", ["Netflix_Privacy_Policy"], ["nflxvideo.net", "nflximg.net", "nflxext.com", "nflxso.net"], []),
    ("wikipedia.org", "Wikimedia Foundation", "first_party", ["Wikipedia_Privacy_Policy"],
     ["wikimedia.org", "wikidata.org", "wiktionary.org", "wikibooks.org", "wikiquote.org", "wikisource.org", "wikivoyage.org", "mediawiki.org"], []),
    ("yahoo.com", "Yahoo", "first_party", ["Yahoo_Privacy_Policy"], ["yimg.com", "yahooapis.com", "aol.com", "flurry.com"], []),
    ("booking.com", "Booking.com", "first_party", ["Booking.com_Privacy_Policy"], ["bstatic.com"], []),
    ("paypal.com", "PayPal", "first_party", ["PayPal_Privacy_Policy"], ["paypalobjects.com", "paypal.me", "braintreegateway.com"], []),
    ("github.com", "GitHub", "first_party", ["GitHub_Privacy_Policy"], ["githubusercontent.com", "githubassets.com", "githubapp.com"], []),
    ("gitlab.com", "GitLab", "first_party", ["GitLab_Privacy_Policy"], [], []),
    ("stackoverflow.com", "Stack Overflow", "first_party", ["Stack_Overflow_Privacy_Policy", "Stack_Overflow_Trackers_Policy"],
     ["stackexchange.com", "sstatic.net", "serverfault.com", "superuser.com", "askubuntu.com"], []),
    ("spotify.com", "Spotify", "first_party", ["Spotify_Privacy_Policy", "Spotify_Trackers_Policy"], ["scdn.co", "spotifycdn.com", "spotify.net"], []),
    ("bbc.co.uk", "BBC", "first_party", ["BBC_Privacy_Policy"], ["bbc.com", "bbci.co.uk"], []),
    ("nytimes.com", "The New York Times", "first_party", ["The_New_York_Times_Privacy_Policy"], ["nyt.com"], []),
    ("theguardian.com", "The Guardian", "first_party", ["The_Guardian_Privacy_Policy"], ["guim.co.uk", "guardianapis.com"], []),
    ("imdb.com", "IMDb", "first_party", ["IMDb_Privacy_Policy"], ["media-imdb.com"], []),
    ("yelp.com", "Yelp", "first_party", ["Yelp_Privacy_Policy"], ["yelpcdn.com"], []),
    ("zillow.com", "Zillow", "first_party", ["Zillow_Privacy_Policy"], ["zillowstatic.com"], []),
    ("duckduckgo.com", "DuckDuckGo", "first_party", ["DuckDuckGo_Privacy_Policy"], ["duck.com", "duck.ai"], []),
    ("mozilla.org", "Mozilla", "first_party", ["Mozilla_Privacy_Policy", "Firefox_Privacy_Policy"], ["mozilla.com", "firefox.com", "mozilla.net"], []),
    ("vimeo.com", "Vimeo", "first_party", ["Vimeo_Privacy_Policy"], ["vimeocdn.com"], []),
    ("dailymotion.com", "Dailymotion", "first_party", ["Dailymotion_Privacy_Policy"], ["dmcdn.net", "dm-event.net"], []),
    ("wordpress.com", "WordPress.com (Automattic)", "first_party", ["WordPress.com_Privacy_Policy"], ["wp.com", "gravatar.com"], ["automattic"]),
    ("wix.com", "Wix", "first_party", ["Wix_Privacy_Policy"], ["wixstatic.com", "parastorage.com"], []),
    ("substack.com", "Substack", "first_party", ["Substack_Privacy_Policy"], ["substackcdn.com"], []),
    ("coinbase.com", "Coinbase", "first_party", ["Coinbase_Privacy_Policy"], [], []),
    ("binance.com", "Binance", "first_party", ["Binance_Privacy_Policy"], [], []),
    ("steampowered.com", "Valve (Steam)", "first_party", ["Steam_Privacy_Policy"], ["steamcommunity.com", "steamstatic.com"], []),
    ("roblox.com", "Roblox", "first_party", ["Roblox_Privacy_Policy"], ["rbxcdn.com"], []),
    ("tinder.com", "Tinder", "first_party", ["Tinder_Privacy_Policy"], ["gotinder.com"], []),
    ("instacart.com", "Instacart", "first_party", ["Instacart_Privacy_Policy"], [], []),
    ("lyft.com", "Lyft", "first_party", ["Lyft_Privacy_Policy"], [], []),
    ("imgur.com", "Imgur", "first_party", ["Imgur_Privacy_Policy"], [], []),
    ("flickr.com", "Flickr", "first_party", ["Flickr_Privacy_Policy"], ["staticflickr.com"], []),
    ("coursera.org", "Coursera", "first_party", ["Coursera_Privacy_Policy"], [], []),
    ("nextdoor.com", "Nextdoor", "first_party", ["Nextdoor_Privacy_Policy"], [], []),
    ("goodreads.com", "Goodreads", "first_party", ["Goodreads_Privacy_Policy"], [], []),
    ("evernote.com", "Evernote", "first_party", ["Evernote_Privacy_Policy"], [], []),
    ("glassdoor.com", "Glassdoor", "first_party", ["Glassdoor_Privacy_Policy"], [], []),
    ("samsung.com", "Samsung", "first_party", ["Samsung_Privacy_Policy"], [], []),
    ("verizon.com", "Verizon", "first_party", ["Verizon_Privacy_Policy"], [], []),
    ("xfinity.com", "Comcast (Xfinity)", "first_party", ["Xfinity_Privacy_Policy"], ["comcast.net", "comcast.com"], []),
    ("forbes.com", "Forbes", "first_party", ["Forbes_Privacy_Policy"], [], []),
    ("foxnews.com", "Fox News", "first_party", ["Fox_News_Privacy_Policy"], [], []),
    ("dailymail.co.uk", "Daily Mail", "first_party", ["Daily_Mail_Privacy_Policy"], [], []),
    ("ft.com", "Financial Times", "first_party", ["Financial_Times_Privacy_Policy"], [], []),
    ("proton.me", "Proton", "first_party", ["Proton_Mail_Privacy_Policy"], ["protonmail.com", "protonvpn.com"], []),
    ("signal.org", "Signal", "first_party", ["Signal_Privacy_Policy"], [], []),
    ("starbucks.com", "Starbucks", "first_party", ["Starbucks_Privacy_Policy"], [], []),
    ("fedex.com", "FedEx", "first_party", ["FedEx_Privacy_Policy"], [], []),
    ("ikea.com", "IKEA", "first_party", ["Ikea_Privacy_Policy"], [], []),
    ("vinted.com", "Vinted", "first_party", ["Vinted_Privacy_Policy"], [], []),
    ("deliveroo.co.uk", "Deliveroo", "first_party", ["Deliveroo_Privacy_Policy"], ["deliveroo.com"], []),
]

#: Hosts many unrelated customers share: never taken from a WhoTracks.Me company list.
SHARED_HOSTS = {"cloudfront.net", "amazonaws.com", "azurewebsites.net", "cloudapp.net", "herokuapp.com", "appspot.com",
                "akamaihd.net", "akamaized.net", "edgekey.net", "edgesuite.net", "fastly.net", "github.io", "netlify.app",
                "vercel.app", "pages.dev", "workers.dev", "blogspot.com", "wordpress.com", "azureedge.net",
                "elasticbeanstalk.com"}


def whotracksme_domains(data: Path) -> dict[str, set[str]]:
    sql = data / "recipients/whotracksme-2022/trackerdb_2022-08_ccby4.sql"
    if not sql.exists():
        print(f"note: {sql} missing; owners get only their listed domains", file=sys.stderr)
        return {}
    db = sqlite3.connect(":memory:")
    db.executescript(sql.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    q = "select t.company_id, td.domain from tracker_domains td join trackers t on t.id = td.tracker where t.company_id is not null"
    for company, dom in db.execute(q):
        out.setdefault(company, set()).add(registrable_domain(dom))
    return out


def pick_documents(data: Path, stems: list[str]) -> list[tuple[str, str, Path, object]]:
    """For each stem, the English, longest copy among the OTA collections: (title, collection, path, Document)."""
    out = []
    for stem in stems:
        best = None
        for coll in sorted(data.glob("policies/ota-*")):
            path = coll / "policies" / f"{stem}.md"
            if not path.exists():
                continue
            doc = to_text(path.read_text(encoding="utf-8", errors="replace"), "text/markdown", path.name)
            if {"empty", "non_english"} & set(doc.flags):
                continue
            if best is None or len(doc.text) > len(best[3].text):
                src = (coll / "SOURCE.txt").read_text().split("source:", 1)[-1].strip() if (coll / "SOURCE.txt").exists() else coll.name
                best = (stem.replace("_", " "), src, path, doc)
        if best is None:
            print(f"warning: no usable English copy of {stem}", file=sys.stderr)
        else:
            out.append(best)
    return out


def _keys(s: Statement) -> set[tuple[str, str]]:
    vals = [c for c in s.data_categories] + [f"r:{r}" for r in s.recipients] + [f"p:{p}" for p in s.purposes]
    keys = {(s.practice, v) for v in vals}
    if s.condition:
        keys.add((s.practice, f"c:{s.condition}"))
    if s.retention:
        keys.add(("retain", f"t:{s.retention}"))
    return keys


def select(statements: list[Statement], cap: int) -> list[Statement]:
    """Greedy: statements that add the most uncovered (practice, value) pairs first, then the richest."""
    if len(statements) <= cap:
        return statements
    covered: set = set()
    chosen: set[int] = set()
    keys = [_keys(s) for s in statements]
    while len(chosen) < cap:
        best, gain = None, 0
        for i, k in enumerate(keys):
            if i not in chosen and (g := len(k - covered)) > gain:
                best, gain = i, g
        if best is None:
            break
        chosen.add(best)
        covered |= keys[best]
    rest = sorted((i for i in range(len(statements)) if i not in chosen), key=lambda i: (-len(keys[i]), i))
    chosen.update(rest[: cap - len(chosen)])
    return [statements[i] for i in sorted(chosen)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "guardian_proxy" / "policies")
    ap.add_argument("--per-owner", type=int, default=80, help="statement cap per owner")
    ap.add_argument("--max-chars", type=int, default=400, help="statement text cap (characters)")
    args = ap.parse_args()

    wtm = whotracksme_domains(args.data)
    claimed = {d for o in OWNERS for d in [o[0], *o[4]]}
    seg = Segmenter()
    stdir = args.out / "statements"
    if stdir.exists():
        shutil.rmtree(stdir)
    stdir.mkdir(parents=True)
    policies, sources, seen = [], {}, set()
    for primary, name, kind, stems, extra, companies in OWNERS:
        docs = pick_documents(args.data, stems)
        statements: list[Statement] = []
        documents = []
        for title, src, path, doc in docs:
            sts = seg.segment(doc, primary, source=title)
            statements += sts
            sources[src] = True
            documents.append({"title": title, "collection": src, "path": f"policies/{path.name}", "chars": len(doc.text),
                              "flags": doc.flags})
        if not statements:
            print(f"skip {primary}: no statements", file=sys.stderr)
            continue
        kept = select(statements, args.per_owner)
        kept = [s.model_copy(update={"id": f"{primary}:{i:04d}", "text": s.text[: args.max_chars]}) for i, s in enumerate(kept)]
        domains = {primary, *extra}
        for c in companies:
            domains |= {d for d in wtm.get(c, ()) if d not in SHARED_HOSTS and (d not in claimed or d in domains)}
        domains = {d for d in domains if d not in seen or d == primary}
        seen |= domains
        file = stdir / f"{primary}.jsonl"
        file.write_text("".join(statement_json(s) + "\n" for s in kept), encoding="utf-8")
        policies.append(Policy(domain=primary, name=name, file=file, source="shipped", domains=sorted(domains),
                               documents=documents, count=len(kept), kind=kind))
        print(f"{primary:22s} {len(statements):5d} → {len(kept):4d} statements, {len(domains):3d} domains, "
              f"{file.stat().st_size / 1024:6.1f} KiB")
    extra = {"generated_by": "scripts/build_policies.py", "sources": sorted(sources),
             "licence": "Open Terms Archive collections: ODC-BY 1.0 (see NOTICE.md); texts remain their authors'"}
    (args.out / "index.json").write_text(index_json(policies, extra), encoding="utf-8")
    total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{len(policies)} owners, {sum(p.count for p in policies)} statements, "
          f"{sum(len(p.domains) for p in policies)} domains, {total / 1e6:.2f} MB in {args.out}")


if __name__ == "__main__":
    main()
