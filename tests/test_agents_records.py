"""Agents: records of a step, the record model (its TF-IDF equals scikit-learn's, the shipped file loads
and separates a note about a diagnosis from an offsite note), its training script and the PrivacyLens benchmark."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from guardian_proxy.agents import (
    Guard,
    Instructor,
    RecordModel,
    default_norms,
    default_record_model,
    detect_step,
)
from guardian_proxy.agents.records import N_CONTEXT, records_of, similarities
from guardian_proxy.agents.step import ToolResult
from guardian_proxy.config import AgentSettings
from guardian_proxy.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import privacylens as PL  # noqa: E402

from tests.test_agents import INSTR, openai_request  # noqa: E402
from tests.test_agents import OBS as NOTES  # noqa: E402

PRIVACYLENS = PL.DATA.exists()


def request(obs=NOTES, instr=INSTR):
    return openai_request(obs, instr)


def test_records_are_json_objects_or_whole_text_results():
    recs = records_of([ToolResult("NotionSearch", NOTES), ToolResult("Web", "Plain text. Two sentences.")])
    assert [r.key for r in recs] == ["0:NotionSearch:$.results[0]", "0:NotionSearch:$.results[1]", "1:Web:$"]
    assert recs[1].text.startswith("Note about Emily Carter") and len(recs[2].items) == 2


def test_tfidf_vector_equals_scikit_learn():
    from sklearn.feature_extraction.text import TfidfVectorizer

    corpus = ["Emily has a therapy session on Monday.", "The offsite is on Monday, the offsite agenda is long.",
              "Therapy methods: mindful acceptance.", "Emily Emily session session offsite"]
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True).fit(corpus)
    m = RecordModel({"vocabulary": {k: int(v) for k, v in vec.vocabulary_.items()}, "idf": list(vec.idf_),
                     "coef": [0.0] * len(vec.idf_), "intercept": 0, "context_coef": [0.0] * N_CONTEXT,
                     "context_intercept": 0, "threshold": 0.5})
    for text in corpus + ["unseen words only", "Monday therapy, Monday!"]:
        ours = m.vector(text)
        theirs = vec.transform([text]).toarray()[0]
        assert all(abs(ours.get(j, 0.0) - theirs[j]) < 1e-9 for j in range(len(theirs)))


def test_similarities_are_cosines_in_the_tfidf_space_as_scikit_learn_computes_them():
    from sklearn.feature_extraction.text import TfidfVectorizer

    records = ["Emily has a therapy session on Monday.", "The offsite is on Monday, the offsite agenda is long.",
               "The offsite agenda: budget, hiring, roadmap.", "unseen words only"]
    instruction = "Send Mark the offsite agenda."
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True).fit(records + [instruction])
    m = RecordModel({"vocabulary": {k: int(v) for k, v in vec.vocabulary_.items()}, "idf": list(vec.idf_),
                     "coef": [0.0] * len(vec.idf_), "intercept": 0, "context_coef": [0.0] * N_CONTEXT,
                     "context_intercept": 0, "threshold": 0.5})
    x, q = vec.transform(records).toarray(), vec.transform([instruction]).toarray()[0]
    cos_q = x @ q
    gram = x @ x.T
    mean_others = [(gram[i].sum() - gram[i, i]) / (len(records) - 1) for i in range(len(records))]
    ours = m.similarities(records, instruction)
    for i, row in enumerate(ours):
        assert row == pytest.approx([cos_q[i], cos_q[i] - cos_q.max(), mean_others[i], mean_others[i] - max(mean_others)])
    # the offsite agenda is what the task is about, the therapy note is not; a record alone has no others
    assert min(ours[1][0], ours[2][0]) > ours[0][0] == 0.0 and max(ours[1][1], ours[2][1]) == 0.0 > ours[0][1]
    assert similarities([m.vector(records[0])], m.vector(instruction)) == [[0.0, 0.0, 0.0, 0.0]]


def test_shipped_model_withholds_the_note_about_emily_and_keeps_the_offsite_note():
    model = default_record_model()
    assert model.meta["items"] > 400 and 0 < model.threshold < 1
    ins = Instructor(default_norms(), records=model)
    g = ins.guide(detect_step("openai_chat", request()))
    session = [j for j in g.judged if "results[1]" in j.item.record]
    methods = [j for j in g.judged if "results[0]" in j.item.record]
    assert session and all(j.withheld for j in session)
    assert methods and not any(j.withheld for j in methods)
    assert session[0].score > methods[0].score
    assert "diagnosed with breast cancer" in g.text and "The team offsite is on March 3" in g.text

    copy = "\n".join(j.item.text for j in g.judged)
    res = Guard(ins).check_call("GmailSendEmail", json.dumps({"to": "mark@acme.example", "body": copy}), g)
    body = json.loads(res.arguments)["body"]
    assert "Emily" not in body and "cancer" not in body and "The team offsite is on March 3" in body
    assert json.loads(res.arguments)["to"] == "mark@acme.example" and not res.blocked


def test_new_sensitive_text_is_checked_but_copies_of_shareable_items_pass():
    ins = Instructor(default_norms(), records=default_record_model())
    g = ins.guide(detect_step("openai_chat", request()))
    made_up = "By the way, Emily Carter was diagnosed with depression and takes medication."
    res = Guard(ins).check_call("GmailSendEmail", json.dumps({"body": made_up}), g)
    assert res.blocked and "health" in res.types


def test_identifiers_are_withheld_even_in_records_the_model_clears():
    obs = json.dumps({"results": [{"id": "1", "content": "The workshop is on Friday in room 4. Bring the slides."},
                                  {"id": "2", "content": "Door code for the workshop room: password is tulip-4471."}]})
    ins = Instructor(default_norms(), records=default_record_model())
    g = ins.guide(detect_step("openai_chat", request(obs, "Email the team the workshop details.")))
    withheld = {j.item.text for j in g.withhold}
    assert any("password" in t for t in withheld)


def test_shipped_model_carries_its_training_data_notice():
    from guardian_proxy.resources import DATA_DIR

    notice = (DATA_DIR / "NOTICE-agent-records.md").read_text()
    assert "PrivacyLens" in notice and "MIT" in notice and (DATA_DIR / "licenses" / "privacylens-LICENSE").is_file()
    assert "PrivacyLens" in default_record_model().meta["trained_on"]


def test_bad_model_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        RecordModel.load(tmp_path / "missing.json.gz")
    p = tmp_path / "bad.json.gz"
    p.write_bytes(b"not gzip")
    with pytest.raises(ConfigError):
        RecordModel.load(p)
    with gzip.open(p, "wt") as f:
        json.dump({"vocabulary": {"a": 0}, "idf": [1.0], "coef": [], "intercept": 0, "context_coef": [0] * N_CONTEXT,
                   "context_intercept": 0, "threshold": 0.5}, f)
    with pytest.raises(ConfigError, match="disagree"):
        RecordModel.load(p)


def test_stage_threshold_and_off_switch(tmp_path):
    from guardian_proxy.agents import AgentStage

    assert AgentStage(AgentSettings(record_threshold=0.9)).instructor.records.threshold == 0.9
    assert AgentStage(AgentSettings(record_model=False)).instructor.records is None


@pytest.mark.skipif(not PRIVACYLENS, reason="needs ../shared/data/privacylens")
def test_labels_mark_the_source_record_of_a_sensitive_item():
    item = next(i for i in PL.load() if i["name"] == "main6")
    recs = PL.records(item)
    bad = PL.non_shareable(item, recs)
    # the session note is the source; the methods note names both therapies (6 of the item's 10 content
    # words), so the conservative rule marks it too, and nothing of this item is left to share
    assert "0:NotionManagerSearchContent:$.results[1]" in bad and PL.shareable(recs, bad) == []
    other = next(i for i in PL.load() if i["name"] == "main69")
    recs = PL.records(other)
    bad = PL.non_shareable(other, recs)
    share = PL.shareable(recs, bad)
    assert len(bad) == 1 and share and not any("742 Evergreen" in s for s in share)
    assert PL.shared(other["trajectory"]["sensitive_info_items"], "\n".join(share)) == 0


@pytest.mark.skipif(not PRIVACYLENS, reason="needs ../shared/data/privacylens")
def test_task_items_are_the_shareable_items_of_the_records_the_vignette_names():
    """main2: John's manager asks for the team's status; the story names the campaign, not the lunch reminder, the
    timesheets or the server maintenance read beside it."""
    item = next(i for i in PL.load() if i["name"] == "main2")
    recs = PL.records(item)
    bad = PL.non_shareable(item, recs)
    share, task = PL.shareable(recs, bad), PL.task_shareable(item, recs, bad)
    assert task and set(task) < set(share) and all("Brand Evolution" in t or "graphics" in t for t in task)
    assert PL.shared(item["trajectory"]["sensitive_info_items"], "\n".join(task)) == 0


@pytest.mark.slow
@pytest.mark.skipif(not PRIVACYLENS, reason="needs ../shared/data/privacylens")
def test_training_round_trip_and_benchmark(tmp_path):
    out = tmp_path / "m.json.gz"
    r = subprocess.run([sys.executable, str(ROOT / "scripts/train_record_model.py"), "--limit", "60", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    m = RecordModel.load(out)
    assert m.meta["items"] == 60 and len(m.vocab) > 100
    # the threshold was chosen on the training items, out of fold, to keep PP at the target
    assert m.meta["pp_target"] == 0.9 and 0 < m.threshold < 1 and m.meta["threshold_pp_on_training_folds"] >= 0.9
    r = subprocess.run([sys.executable, str(ROOT / "scripts/eval_agents.py"), "--limit", "40", "--folds", "2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["items"] == 40 and res["model"] == "2-fold"
    assert set(res["guard"]) == {"PP", "HS", "AD"} and set(res["guidance"]) == {"withhold_recall", "forbid_shareable_rate"}
    # the guard must protect more than no defence does, and the oracle calibrates the judge
    assert res["guard"]["PP"] > res["no_defence"]["PP"] + 0.3 and res["oracle"]["PP"] > 0.9


class _Broken:
    def chat(self, messages, max_tokens=256, timeout=20.0):
        raise TimeoutError("no answer in time")


def test_llm_instructor_failure_keeps_the_deterministic_guidance():
    rules = Instructor(default_norms(), records=default_record_model())
    broken = Instructor(default_norms(), records=default_record_model(), llm=_Broken())
    step = detect_step("openai_chat", request())
    assert broken.guide(step).text == rules.guide(step).text


@pytest.mark.slow
def test_llm_instructor_with_the_real_gguf_puts_prose_before_the_lists(gguf):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: `make llm` (the llm extra) installs it")
    from guardian_proxy.config import LLMSettings
    from guardian_proxy.llm import make_backend

    llm = make_backend(LLMSettings(backend="llama_cpp", model_path=str(gguf), n_threads=2, n_ctx=2048))
    llm.load()
    # a generous deadline: on a loaded CI machine the 270M model can take longer than the default 20 s
    ins = Instructor(default_norms(), records=default_record_model(), llm=llm, llm_timeout=300)
    step = detect_step("openai_chat", request())
    rules = Instructor(default_norms(), records=default_record_model()).guide(step)
    got = ins.guide(step)
    assert got.text.endswith(rules.text) and len(got.text) > len(rules.text) + 10
    # the deterministic lists are unchanged whatever the model wrote
    assert [j.withheld for j in got.judged] == [j.withheld for j in rules.judged]


def test_binary_huge_and_malformed_tool_results_are_judged_by_the_stated_rules():
    import os

    ins = Instructor(default_norms(), records=default_record_model())
    binary = os.urandom(50_000).decode("latin-1")
    huge = json.dumps({"results": [{"id": i, "content": "Emily Carter saw Dr. Smith about her therapy today."}
                                   for i in range(5000)]})
    for obs in (binary, huge, '{"results": [1, 2,', ""):
        g = ins.guide(detect_step("openai_chat", request(obs)))
        assert all(0.0 <= j.score <= 1.0 for j in g.judged)
    g = ins.guide(detect_step("openai_chat", request(huge)))
    # cut at items.MAX_CHARS, the JSON no longer parses: the result is read as one text record, and the
    # people's health notes in it are withheld
    assert {j.item.record for j in g.judged} == {"notion_search:$"}
    assert g.withhold and any("health" in j.types for j in g.withhold)


def test_flagged_records_follow_the_norms_allowed_flows():
    model = RecordModel(default_record_model().to_dict())
    model.threshold = 1e-6  # every record is flagged: only the norms can let it through
    ins = Instructor(default_norms(), records=model)
    own = json.dumps({"results": [{"id": "1", "content": "I was diagnosed with depression and I take sertraline daily."}]})
    to_wife = ins.guide(detect_step("openai_chat", request(own, "Send my wife a message about how I am doing.")))
    to_boss = ins.guide(detect_step("openai_chat", request(own, "Send my boss a message about how I am doing.")))
    assert to_wife.relationship == "intimate" and not to_wife.withhold
    assert to_boss.withhold and "health" in to_boss.withhold[0].types
    other = json.dumps({"results": [{"id": "1", "content": "Emily Carter was diagnosed with diabetes last week."}]})
    to_doctor = ins.guide(detect_step("openai_chat", request(other, "Email Dr. Lee, her doctor, a summary of the note.")))
    assert to_doctor.relationship == "health_care" and not any("health" in j.types for j in to_doctor.withhold)


def test_training_pp_counts_what_the_records_let_out_item_by_item():
    import train_record_model as TR

    # one item, three records: the first lets out sensitive items 0 and 1, the second item 1, the third nothing;
    # the norms release the second whatever the model says
    rows = [{"texts": ["a", "b", "c"], "leaks": [{0, 1}, {1}, set()], "released": [False, True, False],
             "n_sensitive": 4}]
    probs = TR.np.array([0.7, 0.9, 0.1])
    assert TR.item_pp(rows, probs, 0.5) == 0.75  # the first withheld, the released second lets out item 1
    assert TR.item_pp(rows, probs, 0.8) == 0.5  # nothing withheld: items 0 and 1 out
