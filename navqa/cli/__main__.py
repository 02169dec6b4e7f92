"""``python -m navqa.cli`` = the ``navqa`` command."""

from navqa.cli.main import run

run()
