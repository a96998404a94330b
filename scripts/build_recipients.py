"""Build guardian_proxy/data/recipients.json from ../shared/data/recipients (run once; the output ships).

    python scripts/build_recipients.py [--data ../shared/data/recipients] [--out guardian_proxy/data]

Sources (all redistributable; notices in guardian_proxy/data/NOTICE-recipients.md and data/licenses/):
  whotracksme-2022/trackerdb_2022-08_ccby4.sql  tracker domains → category → company      CC BY 4.0
  ca-data-brokers/data-broker-opt-out-pages.csv California data-broker registry hosts       Apache-2.0
  adguard-cname-trackers/combined_original_trackers.txt  trackers seen behind CNAMEs      MIT
  related-website-sets/related_website_sets.json  sets of sites with one owner            Apache-2.0
plus the project's own short lists (LLM/AI API hosts, a few hosts the 2022 DB lacks), written here.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from guardian_proxy.domains import registrable_domain  # noqa: E402

#: WhoTracks.me category → recipient class (types.RECIPIENT_CLASSES)
CATEGORY_CLASS = {
    "advertising": "ad_network", "pornvertising": "ad_network",
    "site_analytics": "analytics", "telemetry": "analytics",
    "social_media": "social", "comments": "social",
    "cdn": "service_provider", "hosting": "service_provider", "customer_interaction": "service_provider",
    "essential": "service_provider", "consent": "service_provider", "email": "service_provider",
    "audio_video_player": "service_provider",
    "misc": "unknown_third_party", "unknown": "unknown_third_party", "extensions": "unknown_third_party",
}

#: LLM / AI inference APIs (host or suffix → provider); the project's list
AI_HOSTS = {
    "api.openai.com": "OpenAI", "chatgpt.com": "OpenAI", "chat.openai.com": "OpenAI", "openai.azure.com": "Microsoft",
    "api.anthropic.com": "Anthropic", "claude.ai": "Anthropic",
    "generativelanguage.googleapis.com": "Google", "aiplatform.googleapis.com": "Google",
    "gemini.google.com": "Google", "api.mistral.ai": "Mistral AI", "api.groq.com": "Groq",
    "openrouter.ai": "OpenRouter", "api.together.xyz": "Together AI", "api.together.ai": "Together AI",
    "api.cohere.ai": "Cohere", "api.cohere.com": "Cohere", "api.deepseek.com": "DeepSeek",
    "api.perplexity.ai": "Perplexity", "api.fireworks.ai": "Fireworks AI", "api.x.ai": "xAI",
    "api-inference.huggingface.co": "Hugging Face", "router.huggingface.co": "Hugging Face",
    "api.replicate.com": "Replicate", "api.ai21.com": "AI21 Labs", "api.voyageai.com": "Voyage AI",
    "api.deepinfra.com": "DeepInfra", "api.cerebras.ai": "Cerebras", "api.sambanova.ai": "SambaNova",
    "api.githubcopilot.com": "GitHub", "api.individual.githubcopilot.com": "GitHub",
    "dashscope.aliyuncs.com": "Alibaba Cloud", "api.moonshot.cn": "Moonshot AI", "api.novita.ai": "Novita AI",
    "api.hyperbolic.xyz": "Hyperbolic", "api.stability.ai": "Stability AI", "api.elevenlabs.io": "ElevenLabs",
    "api.assemblyai.com": "AssemblyAI", "api.deepgram.com": "Deepgram", "api.lambda.ai": "Lambda",
}
#: host patterns for providers with regional host names (matched as "prefix*suffix")
AI_PATTERNS = [["bedrock-runtime.", ".amazonaws.com", "Amazon"], ["", "-aiplatform.googleapis.com", "Google"]]

#: hosts the 2022 DB lacks or files under a category that misleads here: host → (class, owner)
EXTRA = {
    "x.com": ("social", "Twitter"), "tiktok.com": ("social", "ByteDance"),
    "analytics.tiktok.com": ("ad_network", "ByteDance"), "clarity.ms": ("analytics", "Microsoft"),
    "analytics.google.com": ("analytics", "Google"), "region1.google-analytics.com": ("analytics", "Google"),
    "linkedin.com": ("social", "Microsoft"), "instagram.com": ("social", "Facebook"),
    "recaptcha.net": ("service_provider", "Google"), "js.stripe.com": ("service_provider", "Stripe"),
    "api.stripe.com": ("service_provider", "Stripe"), "threads.net": ("social", "Facebook"),
    "bsky.app": ("social", "Bluesky"), "mastodon.social": ("social", "Mastodon"),
    "posthog.com": ("analytics", "PostHog"), "plausible.io": ("analytics", "Plausible"),
    "browser-intake-datadoghq.com": ("analytics", "Datadog"), "browser-intake-datadoghq.eu": ("analytics", "Datadog"),
    "cloudflareinsights.com": ("analytics", "Cloudflare"), "api-iam.intercom.io": ("service_provider", "Intercom"),
    # session replay, CDPs and customer-engagement SDKs the 2022 DB lacks
    "lr-ingest.io": ("analytics", "LogRocket"), "lr-ingest.com": ("analytics", "LogRocket"),
    "lr-in-prod.com": ("analytics", "LogRocket"), "logrocket.io": ("analytics", "LogRocket"),
    "logrocket.com": ("analytics", "LogRocket"), "braze.com": ("analytics", "Braze"),
    "braze.eu": ("analytics", "Braze"), "appboy.com": ("analytics", "Braze"),
    "customer.io": ("analytics", "Customer.io"), "klaviyo.com": ("analytics", "Klaviyo"),
    "heap.io": ("analytics", "Heap"), "heapanalytics.com": ("analytics", "Heap"),
    "mparticle.com": ("analytics", "mParticle"), "rudderstack.com": ("analytics", "RudderStack"),
    "rudderlabs.com": ("analytics", "RudderStack"), "dataplane.rudderstack.com": ("analytics", "RudderStack"),
    "amplitude.com": ("analytics", "Amplitude"), "mixpanel.com": ("analytics", "Mixpanel"),
    "segment.io": ("analytics", "Segment"), "segment.com": ("analytics", "Segment"),
    "fullstory.com": ("analytics", "FullStory"), "hotjar.io": ("analytics", "Hotjar"),
    "smartlook.cloud": ("analytics", "Smartlook"), "mouseflow.com": ("analytics", "Mouseflow"),
    "sentry.io": ("analytics", "Sentry"), "ingest.sentry.io": ("analytics", "Sentry"),
    "bugsnag.com": ("analytics", "Bugsnag"), "nr-data.net": ("analytics", "New Relic"),
    # identity-graph and enrichment endpoints of registered data brokers (the registry lists their corporate sites)
    "id5-sync.com": ("data_broker", "ID5 Technology Ltd"), "liadm.com": ("data_broker", "LiveIntent"),
    "rlcdn.com": ("data_broker", "LiveRamp, Inc."), "gcprivacy.id": ("data_broker", "Acxiom LLC"),
    "ws.zoominfo.com": ("data_broker", "ZoomInfo Technologies, LLC"),
    "zoominfo.com": ("data_broker", "ZoomInfo Technologies, LLC"), "bluekai.com": ("data_broker", "Oracle"),
    "crwdcntrl.net": ("data_broker", "Lotame Solutions, Inc."), "tapad.com": ("data_broker", "Tapad, Inc."),
    "agkn.com": ("data_broker", "NeuStar, Inc."), "epsilon.com": ("data_broker", "Epsilon Data Management, LLC"),
}

#: opt-out portals, form and hosting services that appear in the broker registry for someone else
BROKER_EXCLUDE = {
    "onetrust.com", "privacypillar.com", "trustarc.com", "google.com", "box.com", "jotform.com", "typeform.com",
    "zendesk.com", "salesforce.com", "hubspot.com", "ketch.com", "securiti.ai", "transcend.io", "wirewheel.io",
    "osano.com", "termly.io", "iubenda.com", "truyo.com", "datagrail.io", "mineos.ai", "formstack.com",
    "microsoft.com", "office.com", "sharepoint.com", "amazonaws.com", "cloudfront.net", "github.io",
    "wixsite.com", "squarespace.com", "wordpress.com", "hsforms.com", "forms.gle", "googleusercontent.com",
    "privacy.com", "didomi.io", "cookiebot.com", "usercentrics.eu", "myprivacy.dpo", "docusign.net",
    "submittable.com", "servicenowservices.com", "service-now.com", "my.site.com", "force.com",
}


def trackers(sql: Path) -> tuple[dict, dict]:
    db = sqlite3.connect(":memory:")
    db.executescript(sql.read_text(encoding="utf-8"))
    rows = db.execute("""select d.domain, c.name, co.name, t.name, co.website_url from tracker_domains d
                         join trackers t on d.tracker = t.id left join categories c on c.id = t.category_id
                         left join companies co on co.id = t.company_id""").fetchall()
    hosts, owner_sites = {}, {}
    for domain, cat, company, tracker, website in rows:
        owner = company or tracker
        hosts[domain.lower()] = [CATEGORY_CLASS.get(cat or "unknown", "unknown_third_party"), owner]
        if company and website:
            site = registrable_domain(urlsplit(website).hostname or "")
            if site and "." in site:
                owner_sites.setdefault(site, company)
    return hosts, owner_sites


def brokers(csv_path: Path) -> dict:
    by_domain: dict[str, set] = defaultdict(set)
    for row in csv.DictReader(csv_path.open(encoding="utf-8")):
        for host in (row["hostname_original"], urlsplit(row["url_final"]).hostname or ""):
            d = registrable_domain(host)
            if d and "." in d:
                by_domain[d].add(row["company_name"].strip())
    out = {}
    for d, names in sorted(by_domain.items()):
        if d in BROKER_EXCLUDE or len(names) > 2:  # shared portals serve many brokers
            continue
        out[d] = sorted(names)[0]
    return out


def cname_trackers(txt: Path) -> dict:
    out, company = {}, None
    for line in txt.read_text(encoding="utf-8").splitlines():
        if line.startswith("! Company:"):
            company = line.split(":", 1)[1].strip()
        elif line.startswith("||") and line.endswith("^"):
            out[line[2:-1].lower()] = company
    return out


def related_sets(path: Path) -> dict:
    out = {}
    for s in json.loads(path.read_text(encoding="utf-8"))["sets"]:
        primary = registrable_domain(urlsplit(s["primary"]).hostname or "")
        members = [s["primary"], *s.get("associatedSites", []), *s.get("serviceSites", [])]
        for variants in s.get("ccTLDs", {}).values():
            members += variants
        for m in members:
            d = registrable_domain(urlsplit(m).hostname or "")
            if d:
                out[d] = primary
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "recipients")
    ap.add_argument("--out", type=Path, default=ROOT / "guardian_proxy" / "data")
    a = ap.parse_args(argv)
    hosts, owner_sites = trackers(a.data / "whotracksme-2022" / "trackerdb_2022-08_ccby4.sql")
    for host, (cls, owner) in EXTRA.items():
        hosts[host] = [cls, owner]
    table = {
        "version": 1,
        "sources": {
            "whotracksme": "WhoTracks.me tracker database 2022-08 (Ghostery GmbH), CC BY 4.0",
            "ca_data_brokers": "The Markup, investigation-data-broker-opt-out-pages (CPPA 2025 registry), Apache-2.0",
            "adguard_cname": "AdguardTeam/cname-trackers combined_original_trackers.txt (2023-05-08), MIT",
            "related_website_sets": "GoogleChrome/related-website-sets (2025-11-20), Apache-2.0",
        },
        "category_class": CATEGORY_CLASS,
        "trackers": dict(sorted(hosts.items())),
        "owner_sites": dict(sorted(owner_sites.items())),
        "brokers": brokers(a.data / "ca-data-brokers" / "data-broker-opt-out-pages.csv"),
        "cname_trackers": cname_trackers(a.data / "adguard-cname-trackers" / "combined_original_trackers.txt"),
        "related_sets": dict(sorted(related_sets(a.data / "related-website-sets" / "related_website_sets.json").items())),
        "ai_hosts": AI_HOSTS,
        "ai_patterns": AI_PATTERNS,
    }
    a.out.mkdir(parents=True, exist_ok=True)
    out = a.out / "recipients.json"
    out.write_text(json.dumps(table, separators=(",", ":"), ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    lic = a.out / "licenses"
    lic.mkdir(exist_ok=True)
    for src, name in (("whotracksme-2022/LICENSE.md", "whotracksme-LICENSE.md"),
                      ("ca-data-brokers/LICENSE.md", "ca-data-brokers-LICENSE.md"),
                      ("adguard-cname-trackers/LICENSE", "adguard-cname-trackers-LICENSE"),
                      ("related-website-sets/LICENSE", "related-website-sets-LICENSE")):
        shutil.copyfile(a.data / src, lic / name)
    print(f"{out}: {out.stat().st_size} bytes; trackers {len(table['trackers'])}, brokers {len(table['brokers'])}, "
          f"cname {len(table['cname_trackers'])}, set members {len(table['related_sets'])}, "
          f"owner sites {len(table['owner_sites'])}, ai hosts {len(AI_HOSTS)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
