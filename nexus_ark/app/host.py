"""What NexusApp's parts ask of the root, declared below both: the parts import this module and never
nexus_ark.app itself, and NexusApp satisfies AppRoot.

The root's shared objects are read through it on use, not copied at construction: open() reads config.toml
and state.toml and replaces the settings and the state (and their stores), so a part holding the old ones
would act on stale settings.
"""

from __future__ import annotations

from typing import Protocol

from nexus_ark.clock import Clock
from nexus_ark.config import AppSettings, AppState, SettingsStore
from nexus_ark.events import EventHub
from nexus_ark.paths import DataLayout


class AppRoot(Protocol):
    """The shared objects every part may use: where the data lives, the time, the event hub, settings."""

    @property
    def layout(self) -> DataLayout: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def events(self) -> EventHub: ...

    @property
    def settings(self) -> AppSettings: ...

    @property
    def settings_store(self) -> SettingsStore[AppSettings]: ...

    @property
    def state(self) -> AppState: ...

    @property
    def state_store(self) -> SettingsStore[AppState]: ...
