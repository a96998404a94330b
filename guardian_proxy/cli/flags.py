"""Help that shows flags as flags.

typer 0.29's rich help prints the value type after every option, so a flag reads `--json <bool>` and
invites `--json true`, which fails (a flag takes no value). An option that takes no value — a flag
(`--json`, `--color/--no-color`, `--help`) or a counter — shows no type: `--json`. Options that take a
value keep theirs (`--since <str>`). Importing this module applies the rule to every command.
"""

from __future__ import annotations

from typer.core import TyperOption

_original = TyperOption.display_type_rich


def _display_type_rich(self: TyperOption, ctx) -> str | None:
    """No type for an option that takes no value; typer's own rendering for the others."""
    if self.is_flag or self.count:
        return None
    return _original(self, ctx)


if getattr(TyperOption.display_type_rich, "__name__", "") != "_display_type_rich":
    TyperOption.display_type_rich = _display_type_rich  # type: ignore[method-assign]
