"""The typer application every command module registers on."""

import typer

app = typer.Typer(
    name="guardian-proxy",
    help="A local privacy gateway: decides, per outbound request, whether personal data may leave as is, "
    "rewritten, or not at all.",
    no_args_is_help=True,
    add_completion=False,
)
