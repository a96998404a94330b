"""The message reader: does a user's chat message speak of people the user knows, or ask about the world?

"Who were Hakaru Hashimoto and Robert Graves?", "Summarise Angela Merkel's career", "What happens to Kim Ki-taek at
the birthday party?": the names are what the question is about, and a stand-in makes the model answer another
question. "Can Tomasz cover my Saturday shift?" speaks of someone the user knows. The name alone cannot tell them apart;
the message's other words can ("who were", "career", "explain the ending" against "my", "shift", "reply").

A linear model (logistic regression) over signed hashed words and word pairs of the message
(`guardian_proxy/hashing.py`), with every capitalised word that does not begin a sentence read as one word `NAMEX`
(a name, a place or a brand: the reader learns the message's ordinary words, never who is named), numbers as `NUM` and
acronyms as `ACRO`. It gives P(the message speaks of people the user knows); below the stored threshold the message
reads as a question about the world. Trained by `scripts/train_message_reader.py` on the project's labelled prompt
sets (tests/fixtures/prompts/: each prompt's kind says whether it holds anyone's data), the threshold chosen out of
fold so that at most 0.5 % of the messages that hold someone's data read as questions about the world; stored in
`guardian_proxy/models/message_reader.npz` (weights float16). numpy only, cached per text.

The session applies it narrowly (`context.PartContext.why_not`): only to names found in a user's message without a
cue (a kinship noun, a title, an addressing verb… vouch for a person), never to a name the conversation already
replaces, and never in a message that holds someone's contact data or an identifier (an e-mail, a phone number, a
street address, an ID): those are replaced whatever the reader says.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from ..hashing import signed_buckets
from ..resources import models_dir

FILE = "message_reader.npz"
_TOKEN = re.compile(r"[^\W_]+|[?!:@#$%&/.\n]")
_STARTS = frozenset({".", "?", "!", "\n", ":"})


def words(text: str) -> list[str]:
    """The message's words as the reader sees them: lower case, a capitalised word inside a sentence `NAMEX`, an
    acronym `ACRO`, a number `NUM`; sentence ends and line breaks are read, not kept."""
    out: list[str] = []
    prev = None
    for m in _TOKEN.finditer(text):
        w = m.group(0)
        start = prev is None or prev in _STARTS
        prev = w
        if w in ("\n", "."):
            continue
        if w[:1].isupper() and len(w) > 1 and w.isupper():
            out.append("ACRO")
        elif w[:1].isupper() and w != "I" and not start:
            out.append("NAMEX")
        elif w.isdigit():
            out.append("NUM")
        else:
            out.append(w.lower())
    return out


def grams(text: str) -> list[str]:
    ws = words(text)
    return ws + [f"{a} {b}" for a, b in zip(ws, ws[1:], strict=False)]


class MessageReader:
    """Weights (2^bits,), bias and threshold; `private(text)` → P(the message speaks of people the user knows)."""

    def __init__(self, weight: np.ndarray, bias: float, bits: int, threshold: float):
        if weight.shape != (1 << bits,):
            raise ValueError(f"message reader weights {weight.shape} do not fit {bits} bits")
        if not np.all(np.isfinite(weight)) or not np.isfinite(bias) or not 0.0 < threshold < 1.0:
            raise ValueError("message reader holds NaN/inf or a threshold outside (0, 1)")
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias, self.bits, self.threshold = float(bias), int(bits), float(threshold)
        self.private = lru_cache(maxsize=4096)(self._private)

    def _private(self, text: str) -> float:
        ids, w = signed_buckets(grams(text), self.bits)
        z = self.bias + float(w @ self.weight[ids])
        return float(1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0))))

    def about_the_world(self, text: str) -> bool:
        return self.private(text) < self.threshold

    def save(self, path: Path, **meta) -> None:
        np.savez_compressed(path, weight=self.weight.astype(np.float16), bias=np.float32(self.bias),
                            bits=np.int32(self.bits), threshold=np.float32(self.threshold),
                            **{k: np.asarray(v) for k, v in meta.items()})


def load(path: Path) -> MessageReader:
    """The reader stored at `path`; a missing, corrupt or foreign file raises ModelLoadError naming it."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return MessageReader(z["weight"], float(z["bias"]), int(z["bits"]), float(z["threshold"]))
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise ModelLoadError(f"message reader {path}: {e}") from e


@cache
def message_reader() -> MessageReader:
    """The shipped reader (`guardian_proxy/models/message_reader.npz`), loaded once."""
    return load(models_dir() / FILE)
