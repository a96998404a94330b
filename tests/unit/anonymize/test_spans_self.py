"""anonymize/spans.py `propagate`: an ordinary one-word job found once is not hidden everywhere, unless the writer
named it as their own (self_disclosure.py): then each mention tells it."""

from guardian_proxy.anonymize.spans import propagate
from guardian_proxy.types import Span, TextField


def _job(field: TextField, start: int, end: int) -> Span:
    return Span(path=field.path, start=start, end=end, entity="OCCUPATION", category="demographic",
                text=field.text[start:end], direct=False)


def test_the_writers_own_job_is_hidden_at_each_mention():
    f = TextField(path="body:$.text", text="chef here - long shifts. who's head chef vs line cook, really?")
    out = propagate([f], [_job(f, 0, 4)])
    assert sorted(f.text[s.start:s.end] for s in out) == ["chef", "chef"]


def test_someone_elses_job_is_not():
    f = TextField(path="body:$.text", text="the chef cooked well. who's head chef vs line cook, really?")
    out = propagate([f], [_job(f, 4, 8)])
    assert [(s.start, s.end) for s in out] == [(4, 8)]
