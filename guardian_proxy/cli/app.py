"""The typer application every command module registers on, with the top-level `--version` and `-h`."""

from importlib import metadata

import typer

app = typer.Typer(
    name="guardian-proxy",
    help="A local privacy gateway: decides, per outbound request, whether personal data may leave as is, "
    "rewritten, or not at all.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def version() -> str:
    """The installed distribution's version (the checkout's pyproject version under an editable install)."""
    try:
        return metadata.version("guardian-proxy")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"guardian-proxy {version()}")
        raise typer.Exit()


@app.callback()
def main(
    _version: bool = typer.Option(False, "--version", "-V", callback=_print_version, is_eager=True,
                                  help="Print the version and exit."),
) -> None:
    """A local privacy gateway: decides, per outbound request, whether personal data may leave as is, rewritten,
    or not at all."""
