"""Find every compiled regex in guardian_proxy and time it on 100 KB adversarial inputs.

Run as a child process (`python -m tests.support.regex_probe [--skip ID ...]`) so a catastrophic pattern
can be killed: it prints `start ID NAME` before each pattern and `done ID MS` after it, as JSON lines.
Found: `re.Pattern` objects and Presidio `Pattern`s (anything with a `.regex` string) at module level
and in class attributes, also inside lists, tuples, sets and dict values (3 levels deep).

Each pattern is run the way its module uses it: a module-level pattern that its module only ever calls
with `.match(`/`.fullmatch(` is timed with `match` (anchored at the start); every other pattern with
`search`, the worst case (a search retries from every position).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
import time

SIZE = 100_000
UNITS = ["a", "A", "1", " ", "@", ".", "-", "a@", "a.", "1-", "1 ", "Aa ", "a1_", "\n", "{", "[", "\"", "\\",
         "a:", "/", "%", "=", "&", "a'", "\u00e9", "x\u200b"]


def inputs(units: list[str]) -> list[tuple[str, str]]:
    out = [(u, u * (SIZE // len(u))) for u in units]
    out += [(u + " +!", u * (SIZE // len(u)) + "!") for u in units[:4]]  # for patterns anchored at the end
    out.append(("noise", "".join(chr(33 + (i * 7919) % 94) for i in range(SIZE))))
    return out


_REPR = {"CATEGORY_DIGIT": "1", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a", "CATEGORY_NOT_DIGIT": "a",
         "CATEGORY_NOT_SPACE": "a", "CATEGORY_NOT_WORD": " "}


def _sequence(parsed, out: list[str], depth: int = 0) -> None:
    """Representative characters of a parsed pattern, in order (first branch of alternations too)."""
    from re import _constants as c

    for op, av in parsed:
        if len(out) > 40 or depth > 6:
            return
        if op is c.LITERAL:
            out.append(chr(av))
        elif op is c.ANY:
            out.append("a")
        elif op is c.IN and av and av[0][0] is c.NEGATE:
            out.append("a")
        elif op is c.IN:
            for iop, iav in av:
                if iop is c.LITERAL:
                    out.append(chr(iav))
                    break
                if iop is c.RANGE:
                    out.append(chr(iav[0]))
                    break
                if iop is c.CATEGORY:
                    out.append(_REPR.get(str(iav), "a"))
                    break
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            _sequence(av[2], out, depth + 1)
        elif op is c.SUBPATTERN:
            _sequence(av[-1], out, depth + 1)
        elif op is c.BRANCH:
            for branch in av[1][:3]:
                _sequence(branch, out, depth + 1)


def pattern_units(pattern: str, flags: int) -> list[str]:
    """Repeatable units made of the pattern's own characters: singles, pairs and triples in pattern order,
    and each character followed by a letter — what makes a backtracking pattern retry from every position."""
    try:
        from re import _parser

        seq: list[str] = []
        _sequence(_parser.parse(pattern, flags & ~re.VERBOSE if isinstance(flags, int) else 0), seq)
    except Exception:
        return []
    units: list[str] = []
    for n in (2, 3, 1):
        units += ["".join(seq[k:k + n]) for k in range(len(seq) - n + 1)]
    units += [ch + "a" for ch in seq]
    return list(dict.fromkeys(u for u in units if u.strip() or u))[:24]


def _patterns_in(obj, depth: int = 0):
    if isinstance(obj, re.Pattern):
        yield obj
    elif hasattr(obj, "regex") and isinstance(getattr(obj, "regex", None), str) and not isinstance(obj, type):
        import regex  # Presidio compiles its Pattern objects with `regex`, with these default flags

        yield regex.compile(obj.regex, regex.DOTALL | regex.MULTILINE | regex.IGNORECASE)
    elif depth < 3 and isinstance(obj, list | tuple | set | frozenset):
        for x in obj:
            yield from _patterns_in(x, depth + 1)
    elif depth < 3 and isinstance(obj, dict):
        for x in obj.values():
            yield from _patterns_in(x, depth + 1)


def _match_only(mod, name: str) -> bool:
    """True when the module calls this pattern only with .match/.fullmatch (and at least once)."""
    import inspect

    try:
        src = inspect.getsource(mod)
    except (OSError, TypeError):
        return False
    used = set(re.findall(rf"\b{re.escape(name)}\.(\w+)\(", src))
    passed = re.search(rf"\b{re.escape(name)}\b(?!\s*=[^=])(?!\.)", src.split(f"{name} =", 1)[-1])
    return bool(used) and used <= {"match", "fullmatch"} and passed is None


def collect() -> list[tuple[str, object, str]]:
    import guardian_proxy

    seen: dict[tuple[str, int, str], tuple[str, object, str]] = {}
    for info in pkgutil.walk_packages(guardian_proxy.__path__, "guardian_proxy."):
        try:
            mod = importlib.import_module(info.name)
        except Exception as e:  # an optional back end that is not installed
            print(json.dumps({"skip_module": info.name, "why": type(e).__name__}), flush=True)
            continue
        for name, value in list(vars(mod).items()):
            where = f"{info.name}.{name}"
            owners = [(where, value)]
            if isinstance(value, type) and value.__module__ == info.name:
                owners = [(f"{where}.{k}", v) for k, v in vars(value).items()]
            for label, v in owners:
                how = "match" if isinstance(v, re.Pattern) and label.count(".") == where.count(".") \
                    and _match_only(mod, name) else "search"
                for p in _patterns_in(v):
                    seen.setdefault((repr(p.pattern), p.flags, type(p).__module__), (label, p, how))
    return sorted(seen.values(), key=lambda x: x[0])


def main(argv: list[str]) -> None:
    skip = {int(x) for x in argv[argv.index("--skip") + 1:]} if "--skip" in argv else set()
    pats = collect()
    print(json.dumps({"count": len(pats)}), flush=True)
    base = inputs(UNITS)
    for i, (label, p, how) in enumerate(pats):
        if i in skip:
            continue
        raw = isinstance(p.pattern, bytes)  # a bytes pattern gets the same inputs, UTF-8 encoded
        text = p.pattern.decode("latin-1") if raw else p.pattern
        print(json.dumps({"start": i, "name": label, "how": how, "pattern": text[:200]}), flush=True)
        worst, worst_unit, total = 0.0, "", time.perf_counter()
        run = p.match if how == "match" else p.search
        own = [u for u in pattern_units(text, p.flags & ~re.ASCII if raw else p.flags) if u not in UNITS]
        for unit, s in base + [(u, u * (SIZE // len(u))) for u in own]:
            data = s.encode("utf-8") if raw else s
            t = time.perf_counter()
            run(data)
            dt = time.perf_counter() - t
            if dt > worst:
                worst, worst_unit = dt, unit
        print(json.dumps({"done": i, "ms": round(worst * 1000, 1), "input": worst_unit,
                          "total_ms": round((time.perf_counter() - total) * 1000)}), flush=True)
    print(json.dumps({"finished": True}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
