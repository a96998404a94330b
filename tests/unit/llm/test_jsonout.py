"""JSON answers: extraction from chatty completions, schema validation, guided decoding."""

import json
import time

import numpy as np
import pytest

from guardian_proxy.errors import BackendError
from guardian_proxy.likelihood.slow import SCHEMA
from guardian_proxy.llm import guided, jsonout


def test_extract_and_validate():
    assert jsonout.parse('Sure! ```json\n{"likelihood": 0.4, "reason": "ok"}\n```', SCHEMA) == \
        {"likelihood": 0.4, "reason": "ok"}
    for bad in ('{"likelihood": 2, "reason": "x"}', '{"likelihood": 0.1}', '{"likelihood": 0.1, "reason": "x", "y": 1}',
                'no json here', '{"likelihood": "0.1", "reason": "x"}', '[1, 2]'):
        with pytest.raises(BackendError):
            jsonout.parse(bad, SCHEMA)
    nested = {"type": "object", "required": ["guesses"], "properties": {"guesses": {
        "type": "array", "maxItems": 2, "items": {"type": "object", "required": ["value"],
                                                  "properties": {"value": {"type": "string"}}}}}}
    jsonout.validate({"guesses": [{"value": "a"}]}, nested)
    with pytest.raises(BackendError, match=r"guesses\[0\]"):
        jsonout.validate({"guesses": [{"v": "a"}]}, nested)
    assert guided.is_flat(SCHEMA) and not guided.is_flat(nested)


class ScriptedStepper:
    """A 'model' over a toy vocabulary that prefers the tokens of a script, in order."""

    def __init__(self, script: list[str]):
        self.vocab = ["<eos>", "0", ".", "7", "5", "1", "2", "high", " risk", '"', "\\", "}", ", ", "true", "false"]
        self.eos = {0}
        self.script = list(script)

    def _next(self) -> np.ndarray:
        logits = np.zeros(len(self.vocab), dtype=np.float32)
        want = self.script.pop(0) if self.script else "<eos>"
        logits[self.vocab.index(want)] = 10.0
        return logits

    def feed_text(self, text):
        return self._next()

    def feed_token(self, token):
        return self._next()


def tok(stepper):
    return lambda text: [stepper.vocab.index(text)] if text in stepper.vocab else [0]


def test_guided_object_is_well_formed_and_in_range():
    st = ScriptedStepper(["0", ".", "7", "5", '"', "high", " risk", '"', '"'])
    text = guided.guided_object(st, guided.TokenClasses(st.vocab), SCHEMA, np.zeros(len(st.vocab)), 32,
                                time.monotonic() + 5, tok(st))
    assert json.loads(text) == {"likelihood": 0.75, "reason": "high risk"}
    jsonout.validate(json.loads(text), SCHEMA)


def test_guided_number_cannot_leave_the_unit_interval():
    st = ScriptedStepper(["7", "5", "<eos>"])  # the model wants 75: only a valid prefix of [0, 1] is kept
    text = guided.guided_object(st, guided.TokenClasses(st.vocab), SCHEMA, np.zeros(len(st.vocab)), 32,
                                time.monotonic() + 5, tok(st))
    value = json.loads(text)["likelihood"]
    assert 0.0 <= value <= 1.0


def test_guided_enum_boolean_and_deadline():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}, "level": {"enum": ["high", "0"]}}}
    st = ScriptedStepper(["false", "high"])
    text = guided.guided_object(st, guided.TokenClasses(st.vocab), schema, np.zeros(len(st.vocab)), 8,
                                time.monotonic() + 5, tok(st))
    assert json.loads(text) == {"ok": False, "level": "high"}
    with pytest.raises(BackendError, match="timeout"):
        st = ScriptedStepper(["0", ".", "5"])
        guided.guided_object(st, guided.TokenClasses(st.vocab), SCHEMA, np.zeros(len(st.vocab)), 8,
                             time.monotonic() - 1, tok(st))
