"""When LevelRenderer draws surrogates: not below L4 (no level under it shows one), and at L4/L5 every person's
first, in reading order, whatever field or type comes first in the text."""

from guardian_proxy.anonymize.levels import LevelRenderer
from guardian_proxy.anonymize.spans import merge, propagate
from guardian_proxy.anonymize.surrogates import Surrogates
from guardian_proxy.types import ENTITIES, Span, TextField

FIELDS = [TextField(path="body:$.a", text="Write to anna.christou@mail.example about the invoice, please."),
          TextField(path="body:$.b", text="Mrs Anna Christou asked Ben Okafor to call her back; Christou is away.")]


def find(field, value, entity):
    i = field.text.index(value)
    cat, direct = ENTITIES[entity]
    return Span(path=field.path, start=i, end=i + len(value), entity=entity, category=cat, text=value, direct=direct)


class Recording(Surrogates):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.calls: list[tuple[str, str]] = []

    def render(self, entity, value):
        self.calls.append((entity, value))
        return super().render(entity, value)


def renderer():
    spans = [find(FIELDS[0], "anna.christou@mail.example", "EMAIL_ADDRESS"),
             find(FIELDS[1], "Mrs Anna Christou", "PERSON"), find(FIELDS[1], "Ben Okafor", "PERSON")]
    spans = merge(propagate(FIELDS, spans))
    text = "\n".join(f.text for f in FIELDS)
    return LevelRenderer(FIELDS, spans, Recording(text, seed=b"t"))


def test_no_surrogate_is_drawn_below_l4():
    r = renderer()
    for level in (1, 2, 3):
        assert r.render(level)
    assert r.surrogates.calls == []


def test_persons_are_drawn_first_in_reading_order_then_the_rest():
    r = renderer()
    r.render(2)
    out = r.render(4)
    assert [e for e, _ in r.surrogates.calls[:3]] == ["PERSON"] * 3
    assert [v for _, v in r.surrogates.calls[:3]] == ["Anna Christou", "Ben Okafor", "Christou"]
    assert ("EMAIL_ADDRESS", "anna.christou@mail.example") in r.surrogates.calls[3:]
    fresh = renderer()
    assert fresh.render(4) == out  # the same surrogates whether a lower level was rendered first or not
    full = out["body:$.b"].split(" asked")[0]
    assert "Christou" not in out["body:$.b"]
    assert out["body:$.b"].endswith(f"; {full.split()[-1]} is away.")  # "Christou" alone follows "Anna Christou"
