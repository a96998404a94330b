"""Files sent to AI services (session/files.py): decided like the prompt, through the real Gateway."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from guardian_proxy.bodies import files as F
from guardian_proxy.types import RawRequest

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "files"
NAME, EMAIL, SSN = "Maria Jensen", "maria.jensen@example.org", "536-22-1987"


def post(gateway, url, body, ctype="application/json", method="POST"):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return gateway.evaluate(RawRequest(method=method, url=url, headers=[("content-type", ctype)], body=raw))


def anthropic(doc_source, text="Summarise the attached letter."):
    return {"model": "claude-sonnet-4-5", "max_tokens": 200, "messages": [{"role": "user", "content": [
        {"type": "document", "source": doc_source}, {"type": "text", "text": text}]}]}


def test_a_text_file_in_an_anthropic_request_is_pseudonymised_in_place(gateway):
    data = (FIX / "contact.txt").read_bytes()
    assert NAME.encode() in data
    d = post(gateway, "https://api.anthropic.com/v1/messages", anthropic(
        {"type": "base64", "media_type": "text/plain", "data": base64.b64encode(data).decode()}))
    assert d.action == "transform" and d.extra["files"] == 1
    sent = json.loads(d.rewrite.body)["messages"][0]["content"][0]["source"]["data"]
    text = base64.b64decode(sent).decode()
    assert NAME not in text and EMAIL not in text and SSN not in text and "[BLOCKED]" in text
    assert text.count("\r\n") == data.decode().count("\r\n")  # its own line endings


def test_a_docx_in_an_openai_responses_request_is_rewritten_as_a_docx(gateway):
    data = (FIX / "letter.docx").read_bytes()
    url = "data:application/vnd.openxmlformats-officedocument.wordprocessingml.document;base64," + \
        base64.b64encode(data).decode()
    body = {"model": "gpt-5", "input": [{"role": "user", "content": [
        {"type": "input_file", "filename": "letter.docx", "file_data": url},
        {"type": "input_text", "text": "What does this letter ask for?"}]}]}
    d = post(gateway, "https://api.openai.com/v1/responses", body)
    assert d.action == "transform"
    out = json.loads(d.rewrite.body)["input"][0]["content"][0]["file_data"]
    ct, new = F.from_data_url(out)
    assert ct.endswith("wordprocessingml.document")
    text = F.read_text("docx", new).text
    assert NAME not in text and EMAIL not in text and SSN not in text


def test_a_pdf_with_values_cannot_be_rewritten_and_is_blocked_by_rule(gateway):
    pdf = (FIX / "letter.pdf").read_bytes()
    assert NAME in _pdf_text(FIX / "letter.pdf")
    d = post(gateway, "https://api.anthropic.com/v1/messages", anthropic(
        {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(pdf).decode()}))
    assert d.action == "deny" and d.rule == "file-not-rewritable"
    assert "PDF" in d.explanation and NAME not in d.explanation


def _pdf_text(p: Path) -> str:
    try:
        return F.read_text("pdf", p.read_bytes()).text
    except F.FileUnreadable:
        return ""


def test_a_raw_upload_to_chatgpts_file_store_is_rewritten(gateway):
    data = (FIX / "contact.txt").read_bytes()
    d = post(gateway, "https://files.oaiusercontent.com/file-abc123?se=2026&sig=x", data, "text/plain", "PUT")
    assert d.action == "transform" and d.extra.get("chat_api") == "ai_upload"
    text = d.rewrite.body.decode()
    assert NAME not in text and SSN not in text and "[BLOCKED]" in text


def test_a_file_without_personal_values_passes_unchanged(gateway):
    d = post(gateway, "https://api.anthropic.com/v1/messages", anthropic(
        {"type": "base64", "media_type": "text/plain",
         "data": base64.b64encode(b"Quarterly revenue grew 4% on higher volumes.\n").decode()}))
    assert d.action == "allow" and d.rewrite is None


def test_a_multipart_upload_to_the_openai_files_api_is_read_and_rewritten(gateway):
    docx = (FIX / "letter.docx").read_bytes()
    b = "----guardian-test-boundary"
    body = (f"--{b}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nuser_data\r\n"
            f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"letter.docx\"\r\n"
            "Content-Type: application/vnd.openxmlformats-officedocument.wordprocessingml.document\r\n\r\n"
            ).encode() + docx + f"\r\n--{b}--\r\n".encode()
    d = post(gateway, "https://api.openai.com/v1/files", body, f"multipart/form-data; boundary={b}")
    assert d.action == "transform" and d.extra.get("chat_api") == "ai_upload", d.explanation
    new = d.rewrite.body
    start = new.index(b"PK\x03\x04")
    end = new.rindex(f"\r\n--{b}--".encode())
    text = F.read_text("docx", new[start:end]).text
    assert NAME not in text and SSN not in text and b"user_data" in new


def test_a_prompt_to_an_ai_service_gets_the_same_verdict_as_json_or_as_a_form(gateway):
    from urllib.parse import parse_qs, urlencode

    text = f"I'm {NAME}, SSN {SSN}, write to {EMAIL} about my lease."
    as_json = post(gateway, "https://api.ai21.com/studio/v1/ask", {"question": text, "conversation_id": "c-1"})
    as_form = post(gateway, "https://api.ai21.com/studio/v1/ask", urlencode({"question": text}).encode(),
                   "application/x-www-form-urlencoded")
    for d, sent in ((as_json, json.loads(as_json.rewrite.body)["question"]),
                    (as_form, parse_qs(as_form.rewrite.body.decode())["question"][0])):
        assert d.action == "transform" and d.rule == "chat-session"
        assert NAME not in sent and EMAIL not in sent and SSN not in sent and "[BLOCKED]" in sent
