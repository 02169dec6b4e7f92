"""What every CLI command receives: the loaded configuration."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from navqa.config import NavqaConfig, load_config


@dataclass
class CliState:
    config_path: Path | None = None
    verbose: int = 0
    _config: NavqaConfig | None = None

    @property
    def config(self) -> NavqaConfig:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliState):
        obj = CliState()
        ctx.find_root().obj = obj
    return obj
