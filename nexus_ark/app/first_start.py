"""The first start: who the person is and which mind the personas run on, for the window's first-start flow
and `nexus-ark setup` alike.

What this computer has is read here (servers already running on loopback, the catalogue's download for its
memory, whether that file is already downloaded), and a choice is applied here: the person's name for the
whole app, the chosen model as the app's default conversation model, and the personas still on the built-in
model following it (a persona that chose its own model keeps it). Everything here reads files or the
network on loopback: never on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from nexus_ark.app.download_speed import measured_download_speed
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.providers.catalogue import (
    Recommendation,
    installed_path,
    load_catalogue,
    persona_spec,
    recommended_download,
    total_ram_gb,
)
from nexus_ark.providers.local_servers import Candidate, FoundServer, probe_servers

if TYPE_CHECKING:
    from nexus_ark.app import NexusApp

# One plain sentence on what the built-in model cannot do (the window and `setup` say it beside the choice).
BUILT_IN_LIMIT = notice(
    "The built-in model answers at once on any computer, but it is tiny: its English is simple, it cannot "
    "really speak Japanese, and it is too small to reflect on your days."
)
MODEL_KEYS = {"spec", "api_base", "api_key"}


class SetupReport(BaseModel):
    """What `setup --json` prints and the window's "Which mind?" page lists."""

    user_name: str
    setup_done: bool
    chat_model: str  # the app's default conversation model now
    servers: list[FoundServer] = Field(default_factory=list)
    recommended: Recommendation | None = None
    recommended_path: str = ""  # the downloaded file when it is on disk already
    recommended_spec: str = ""  # the model setting that uses it once downloaded
    ram_gb: float | None = None
    built_in_limit: str = str(BUILT_IN_LIMIT)

    def as_json(self) -> dict[str, object]:
        rec = self.recommended
        return {
            "user_name": self.user_name,
            "setup_done": self.setup_done,
            "chat_model": self.chat_model,
            "ram_gb": round(self.ram_gb, 1) if self.ram_gb else None,
            "servers": [
                {
                    "kind": s.kind,
                    "name": s.name,
                    "url": s.url,
                    "models": [m.model_dump() for m in s.models],
                }
                for s in self.servers
            ],
            "recommended": None
            if rec is None
            else {
                "id": rec.entry.id,
                "name": rec.entry.name,
                "spec": self.recommended_spec or rec.entry.spec,
                "size_bytes": rec.size_bytes,
                "seconds": round(rec.seconds),
                "bytes_per_s": rec.bytes_per_s,
                "speed_measured": rec.speed_measured,
                "license": rec.entry.license,
                "accept_license": rec.entry.accept_license,
                "installed": bool(self.recommended_path),
                "get": f"nexus-ark model get {rec.entry.id}",
            },
            "built_in": {"spec": "bundled", "limit": self.built_in_limit},
        }


def setup_report(app: NexusApp, *, targets: list[Candidate] | None = None) -> SetupReport:
    """What this computer offers now (asks the loopback ports, reads the catalogue: about a second)."""
    ram = total_ram_gb()
    speed = measured_download_speed(app.layout.models_dir)
    recommendation = recommended_download(load_catalogue(), ram, bytes_per_s=speed)
    path = installed_path(recommendation.entry, app.layout.models_dir) if recommendation else None
    return SetupReport(
        user_name=app.settings.user_name,
        setup_done=app.state.setup_done,
        chat_model=app.settings.chat_model.spec or "bundled",
        servers=probe_servers(targets),
        recommended=recommendation,
        recommended_path=str(path) if path else "",
        recommended_spec=persona_spec(recommendation.entry, app.layout.models_dir) if recommendation else "",
        ram_gb=ram,
    )


def downloaded_spec(app: NexusApp, recommendation: Recommendation) -> str:
    """The model setting of a catalogue download (its full path in the data folder's models/)."""
    return persona_spec(recommendation.entry, app.layout.models_dir)


def use_as_default(app: NexusApp, config: ModelConfig) -> list[str]:
    """The app's default conversation model becomes `config` (as Settings > Default models sets it), and
    every persona still on the built-in model follows the default from its next turn. Returns the personas
    that were switched; one that chose another model keeps it."""
    ModelSpec.parse(config.spec)  # refused in words before anything is written
    chosen = app.settings.chat_model.model_copy(update=config.model_dump(include=MODEL_KEYS))
    app.admin.update_settings(chat_model=chosen)
    if chosen.parsed().kind == "bundled":
        return []
    switched = []
    for info in app.personas.all():
        if not info.ok:
            continue
        persona = app.personas.load(info.slug)
        if persona.settings.model.spec.strip() != "bundled":
            continue
        own = persona.settings.internal_model
        internal = own if own is not None and not own.is_default() else None
        app.personas.save_models(info.slug, {"spec": "", "api_base": "", "api_key": ""}, internal)
        switched.append(info.slug)
    return switched


def apply_setup(app: NexusApp, *, name: str | None = None, model: ModelConfig | None = None) -> list[str]:
    """Set what was chosen (None leaves it as it is) and mark the first start done. Returns the personas
    switched to the chosen model."""
    if name is not None:
        app.admin.set_user_name(name)
    switched = use_as_default(app, model) if model is not None else []
    if not app.state.setup_done:
        app.state_store.update(setup_done=True)
    return switched
