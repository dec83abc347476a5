"""One ACP session as the front-end keeps it: its update mapper, mode and model choices.

ACP session ids are agentd session ids. Modes are agentd's permission modes, offered both
as ACP session modes (``session/set_mode``) and as the first config option (category
``mode``); the model is the second config option (category ``model``), its values
``provider/model`` from ``models/list``. The mode and model shown are the session's, taken
from its ``settings_changed`` events (a change from the editor or from any other client).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentd.acp.updates import UpdateMapper
from agentd.errors import InvalidParams
from agentd.protocol.acp import (
    ConfigOption,
    ConfigOptionUpdate,
    ConfigSelectOption,
    CurrentModeUpdate,
    SessionMode,
    SessionModeState,
    SessionUpdate,
)
from agentd.protocol.events import SettingsChanged
from agentd.protocol.methods import ModelInfo, PermissionMode

MODES: dict[str, SessionMode] = {
    "ask": SessionMode(
        id="ask",
        name="Ask",
        description="Reads run at once; edits and commands wait for your approval.",
    ),
    "auto": SessionMode(
        id="auto",
        name="Auto",
        description="Every tool runs without asking (deny rules still apply).",
    ),
    "read-only": SessionMode(
        id="read-only",
        name="Read-only",
        description="Reads and searches only; edits and commands are refused.",
    ),
}
MODE_OPTION = "mode"
MODEL_OPTION = "model"


def model_value(provider: str, model: str) -> str:
    """The config-option value naming ``model`` of ``provider``."""
    return f"{provider}/{model}"


@dataclass
class AcpSession:
    """What the front-end knows about one session opened on this ACP connection."""

    session_id: str
    cwd: str
    mode: PermissionMode
    provider: str
    model: str
    models: list[ModelInfo] = field(default_factory=list)
    mapper: UpdateMapper = field(init=False)

    def __post_init__(self) -> None:
        self.mapper = UpdateMapper(self.cwd)

    @property
    def context_window(self) -> int | None:
        """The current model's context window, when the configuration knows it."""
        for info in self.models:
            if info.provider == self.provider and info.model == self.model:
                return info.context_window
        return None

    def apply(self, event: SettingsChanged) -> list[SessionUpdate]:
        """Take the session's model and mode from its ``settings_changed`` event (whichever
        client changed them); the updates that tell the editor."""
        self.mode, self.provider, self.model = event.permission_mode, event.provider, event.model
        return [
            CurrentModeUpdate(current_mode_id=self.mode),
            ConfigOptionUpdate(config_options=self.config_options()),
        ]

    def modes(self) -> SessionModeState:
        return SessionModeState(current_mode_id=self.mode, available_modes=list(MODES.values()))

    def config_options(self) -> list[ConfigOption]:
        mode = ConfigOption(
            id=MODE_OPTION,
            name="Permissions",
            category="mode",
            current_value=self.mode,
            options=[
                ConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in MODES.values()
            ],
        )
        current = model_value(self.provider, self.model)
        choices = [model_value(m.provider, m.model) for m in self.models]
        if current not in choices:
            choices.insert(0, current)
        model = ConfigOption(
            id=MODEL_OPTION,
            name="Model",
            category="model",
            current_value=current,
            options=[ConfigSelectOption(value=value, name=value) for value in choices],
        )
        return [mode, model]


def check_mode(mode_id: str) -> PermissionMode:
    """``mode_id`` as a permission mode; InvalidParams naming the valid ones otherwise."""
    if mode_id not in MODES:
        raise InvalidParams(f"unknown mode {mode_id!r}; use one of {', '.join(MODES)}")
    return mode_id  # type: ignore[return-value]


def split_model(value: str) -> tuple[str | None, str]:
    """``provider/model`` → (provider, model); a value without ``/`` is a model name."""
    provider, slash, model = value.partition("/")
    if not slash or not provider or not model:
        return None, value
    return provider, model
