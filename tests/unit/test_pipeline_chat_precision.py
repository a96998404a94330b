"""Chat prompts through the real Gateway (Presidio + spaCy, the session stage) as the seventh round of 2026-12-03 found
them in held-out prompts (holdout34: developers' and agents' traffic, holdout35: questions about the world): what
must change, what must stay, and that one value stays one value in every format it is written in."""

import json
import re

import pytest

from guardian_proxy.types import RawRequest

pytestmark = pytest.mark.slow  # loads Presidio + spaCy


def sent(gateway, text: str, n: int) -> str:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}
    d = gateway.evaluate(RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                                    headers=[("Host", "api.openai.com"), ("Content-Type", "application/json"),
                                             ("Authorization", f"Bearer sk-chat-precision-{n}")],
                                    body=json.dumps(body).encode()), log=False)
    assert d.action != "deny", d.explanation
    if d.rewrite is None or d.rewrite.body is None:
        return text
    return json.loads(d.rewrite.body)["messages"][-1]["content"]


def test_one_phone_number_in_a_fixture_and_its_assertion_gets_one_stand_in(gateway):
    text = ('This pytest fails, why?\n\n    row = {"full_name": "Nguyen Thi Thu Ha", "phone": "+84 912 407 385"}\n'
            '    assert normalise(row)["phone"] == "+84912407385"\n')
    out = sent(gateway, text, 1)
    assert "912 407 385" not in out and "912407385" not in out
    spaced = re.search(r'"phone": "(\+84[\d ]+)"', out).group(1)
    compact = re.search(r'== "(\+84\d+)"', out).group(1)
    assert spaced.replace(" ", "") == compact  # still the same number, so the test still says what it said


def test_a_log_lines_customer_name_and_ip_and_a_queried_surname_are_replaced(gateway):
    text = ('Why does the receipt task fail for this customer?\n'
            'customer_id=48213 name="Funmilayo Oyelaran" ip=102.89.47.213 retries=3\n'
            "Logs show GET /reset/confirm 404 from 190.237.14.82. Please fix.\n"
            "SELECT id FROM customers c WHERE c.email = 'seb.lacroix@orange.fr'\n  AND c.last_name = 'Lacroix-Morel'\n")
    out = sent(gateway, text, 2)
    for value in ("Funmilayo", "Oyelaran", "102.89.47.213", "190.237.14.82", "Lacroix-Morel"):
        assert value not in out, out
    assert "customer_id=48213" in out and "retries=3" in out and "GET /reset/confirm 404" in out


def test_a_question_about_history_keeps_its_people_and_dates(gateway):
    text = ("Why did Weimar hyperinflation peak in November 1923 at about 4.2 trillion marks to the US dollar, and how "
            "did Hjalmar Schacht, Hans Luther and the Rentenmark end it so quickly?")
    assert sent(gateway, text, 3) == text


def test_a_public_persons_husband_and_a_companys_ceo_stay(gateway):
    text = ("Marie Curie discovered polonium and radium with her husband Pierre Curie. Microsoft today announced "
            "that Chairman and CEO Satya Nadella will deliver the opening keynote at Build.")
    out = sent(gateway, text, 4)
    assert "Pierre Curie" in out and "Satya Nadella" in out


def test_a_public_programme_stays_and_an_employer_and_a_given_name_are_replaced(gateway):
    text = ("Can you explain this Medicare Summary Notice for my mother-in-law Rosa Delgado? Medicare approved $312.56 "
            "and she wants to message the clinic on WhatsApp. My sister Marta works at PayPal.")
    out = sent(gateway, text, 5)
    assert out.count("Medicare") == 2 and "WhatsApp" in out
    for value in ("Rosa Delgado", "Marta", "PayPal"):
        assert value not in out, out
