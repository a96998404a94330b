"""The JSON 403 (block kind "explain") an API client gets says what was stopped in words first, as the block page
does (guardian_proxy/dashboard/wording.py), then the explanation; its keys stay as they were."""

from __future__ import annotations

import json

from mitmproxy.test import tflow

from guardian_proxy.config import load_settings
from guardian_proxy.dashboard.wording import of_decision
from guardian_proxy.mitm.blocking import blocked_response
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import RawRequest

CARD = "4111 1111 1111 1111"


def test_the_json_403_gives_the_reason_in_words_first_then_the_explanation(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=False)
    body = json.dumps({"pan": CARD, "email": "jane.doe@gmail.com"}).encode()
    d = gw.evaluate(RawRequest(method="POST", url="https://ads.doubleclick.net/collect", body=body,
                               headers=[("content-type", "application/json"), ("user-agent", "python-httpx/0.27")]))
    assert d.action == "deny", d.explanation
    f = tflow.tflow()
    f.request.url = "https://ads.doubleclick.net/collect"
    f.request.headers.clear()
    f.request.headers["user-agent"] = "python-httpx/0.27"  # no browser: the JSON 403
    r = blocked_response(d, f)
    assert r.status_code == 403 and r.headers["x-guardian-blocked"] == "explain"
    got = json.loads(r.content)
    assert set(got) == {"error", "decision_id", "host", "reason"}  # the keys API clients read, unchanged
    assert got["error"] == "blocked_by_guardian_proxy" and got["decision_id"] == d.id
    words, _ = of_decision(d)
    reason = got["reason"]
    assert reason.startswith(words) and "stopped before" in words  # the words first, as on the block page
    assert reason.endswith(d.explanation) and reason.index(d.explanation) > len(words)  # then why
    assert CARD not in reason and "jane.doe" not in reason
