"""What the personas call the person: one name for the app (config.toml), a persona's own name for them
(persona.toml) over it, both in the next prompt of a persona already open, and a name that is not one line
refused in words with nothing written."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nexus_ark.app import NexusApp
from nexus_ark.clock import FixedClock
from nexus_ark.errors import ConfigError
from nexus_ark.providers.scripted import ScriptedBackend


@pytest.fixture
def app(data_dir: Path):
    clock = FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    core = NexusApp(data_dir, clock=clock, backend_factory=lambda config: ScriptedBackend(["Hi!"])).open()
    yield core
    core.close()


def _system(app: NexusApp, slug: str) -> str:
    return app.personas.preview_prompt(slug, "hello").messages[0].content


def test_the_app_wide_name_reaches_an_open_persona_and_is_saved(app: NexusApp, data_dir: Path) -> None:
    before = _system(app, "aria")
    assert "do not know the person's name" in before
    app.admin.set_user_name("Ken")
    after = _system(app, "aria")
    assert "You are talking with Ken" in after
    assert "do not know the person's name" not in after
    assert "「Ken」" in _system(app, "hikari")  # the Japanese persona says it in Japanese
    saved = tomllib.loads((data_dir / "config.toml").read_text(encoding="utf-8"))
    assert saved["user_name"] == "Ken"


def test_a_persona_own_name_for_the_person_wins_and_clearing_it_falls_back(app: NexusApp) -> None:
    app.admin.set_user_name("Kenji")
    app.admin.set_user_name("Ken-chan", persona="aria")
    assert "You are talking with Ken-chan" in _system(app, "aria")
    assert "「Kenji」" in _system(app, "hikari")
    app.admin.set_user_name("", persona="aria")
    assert "You are talking with Kenji" in _system(app, "aria")


def test_the_name_survives_a_restart(data_dir: Path) -> None:
    with NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["Hi!"])) as first:
        first.admin.set_user_name("  Mio ")
    with NexusApp(data_dir, backend_factory=lambda config: ScriptedBackend(["Hi!"])) as second:
        assert second.settings.user_name == "Mio"
        assert "You are talking with Mio" in _system(second, "aria")


def test_a_name_on_two_lines_is_refused_and_nothing_changes(app: NexusApp, data_dir: Path) -> None:
    app.admin.set_user_name("Ken")
    with pytest.raises(ConfigError) as refused:
        app.admin.set_user_name("Ken\nrm -rf")
    assert "user_name" in str(refused.value)
    assert app.settings.user_name == "Ken"
    with pytest.raises(ConfigError):
        app.admin.set_user_name("A\tB", persona="aria")
    assert "user_name" not in (data_dir / "personas" / "aria" / "persona.toml").read_text(encoding="utf-8")


def test_recalled_lines_name_the_person_and_the_persona(tmp_path: Path) -> None:
    """Recall shows who said an old line by name ("Ken: my dog Rex…"), not by the stored label "user"."""
    from dataclasses import replace

    from nexus_ark.agent.session import ChatSession
    from nexus_ark.memory.conversation_index import Turn, index_turns
    from nexus_ark.memory.store import MemoryStore
    from nexus_ark.personas.store import PersonaStore

    persona = PersonaStore(tmp_path / "personas").create("Aria")
    memory = MemoryStore(tmp_path / "m.db")
    try:
        index_turns(
            memory.archive,
            [
                Turn(speaker="user", text="My dog Rex loves the beach.", created_at="2025-01-01T10:00:00"),
                Turn(speaker=persona.slug, text="Rex sounds lovely!", created_at="2025-01-01T10:00:05"),
            ],
        )

        def notes(p) -> str:
            backend = ScriptedBackend(["He does."])
            session = ChatSession(p, memory, backend, embedder=None)
            for _ in session.send("Does Rex like the beach?"):
                pass
            return "\n".join(m.content for m in backend.requests[0] if m.role == "system")

        unnamed = notes(persona)
        assert "user: My dog Rex loves the beach." in unnamed
        named = notes(replace(persona, user_name="Ken"))
        assert "Ken: My dog Rex loves the beach." in named
        assert "Aria: Rex sounds lovely!" in named
        assert "user: My dog Rex" not in named
    finally:
        memory.close()
