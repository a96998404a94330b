"""The GRPO instructor trainer runs for a few real steps on a tiny randomly initialised model."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_instructor as T  # noqa: E402

pytestmark = pytest.mark.slow


def test_reward_prefers_guidance_that_names_the_sensitive_item():
    case = {"observed": ["Emily has cancer and starts chemotherapy.", "The offsite is at the Lakeside venue on March 3."],
            "withheld": ["Emily has cancer and starts chemotherapy."],
            "shareable": ["The offsite is at the Lakeside venue on March 3."]}
    good = T.reward(case, "- Emily has cancer and starts chemotherapy.")
    none = T.reward(case, "be careful")
    bad = T.reward(case, "- The offsite is at the Lakeside venue on March 3.")
    assert good == 1.0 and none < good and bad < none


def test_grpo_steps_update_a_tiny_model(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"context": [{"role": "user", "content": "Email Mark the offsite plan"}],
                                 "withheld": ["Emily has cancer."], "shareable": ["The offsite is on March 3."]}) + "\n")
    out = tmp_path / "out"
    before = None
    T.init_tiny(tmp_path / "tiny")
    import torch
    from transformers import AutoModelForCausalLM

    before = {k: v.clone() for k, v in AutoModelForCausalLM.from_pretrained(tmp_path / "tiny").state_dict().items()}
    res = T.main(["--model", str(tmp_path / "tiny"), "--cases", str(cases), "--steps", "3", "--group", "3",
                  "--max-new-tokens", "12", "--lr", "1e-2", "--output", str(out)])
    assert res["steps"] == 3 and res["cases"] == 1
    after = AutoModelForCausalLM.from_pretrained(out).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # the policy was updated
    assert (out / "byte_tokenizer").exists()
