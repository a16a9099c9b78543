"""Round trips of every memory component, on real SQLite (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_ark.memory.components import Drive, EmotionEntry, Episode, Goal, Insight, OpenQuestion
from nexus_ark.memory.store import MemoryStore


@pytest.fixture
def memory(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory.db")
    yield store
    store.close()


def test_core_memory_and_notepad(memory: MemoryStore) -> None:
    c = memory.components
    assert c.core_memory() == "" and c.notepad() == ""
    c.set_core_memory("I am Aria. Mika is my person.")
    c.set_notepad("Ask about the dentist tomorrow.")
    c.set_core_memory("I am Aria. Mika is my person. I promised to remind her of her mother's birthday.")
    assert "promised" in c.core_memory()
    assert c.notepad() == "Ask about the dentist tomorrow."
    core_items = memory.db.execute("select count(*), max(text) from items where kind = 'core'").fetchone()
    assert core_items[0] == 1 and "promised" in core_items[1]


def test_episodes_one_per_day(memory: MemoryStore) -> None:
    c = memory.components
    c.put_episode(
        Episode(
            date="2026-11-20",
            summary="Talked about Luna.",
            key_events=["vet visit"],
            emotional_tone="positive",
            source_ids=["m1", "m2"],
        )
    )
    c.put_episode(Episode(date="2026-11-20", summary="Talked about Luna and the vet.", source_ids=["m1"]))
    c.put_episode(Episode(date="2026-11-21", summary="A quiet day."))
    episodes = c.episodes()
    assert [e.date for e in episodes] == ["2026-11-20", "2026-11-21"]
    assert episodes[0].summary == "Talked about Luna and the vet." and episodes[0].source_ids == ["m1"]
    assert memory.archive.count("episode") == 2
    assert [e.date for e in c.episodes(since="2026-11-21")] == ["2026-11-21"]


def test_entities_are_edited_in_place(memory: MemoryStore) -> None:
    c = memory.components
    c.write_entity("Mika", "My person. Likes tea.", ["D1:1"])
    c.write_entity("mika", "My person. Likes tea and cats.", ["D2:4"])
    entity = c.entity("MIKA")
    assert entity is not None and entity.text == "My person. Likes tea and cats."
    assert entity.source_ids == ["D1:1", "D2:4"]
    assert memory.archive.count("entity") == 1
    assert [e.name for e in c.entities()] == ["Mika"]


def test_insights_goals_state_and_emotions(memory: MemoryStore) -> None:
    c = memory.components
    c.add_insight(
        Insight(
            trigger_topic="garden",
            insight="Mika relaxes when she gardens.",
            strategy="Ask about the tomatoes.",
            log_entry="I dreamt of green.",
            source_ids=["m9"],
        )
    )
    assert c.latest_strategy() == "Ask about the tomatoes."
    assert c.insights()[0].source_ids == ["m9"]
    goal = c.put_goal(Goal(term="short", goal="Learn Mika's favourite books", priority=1))
    assert goal.id.startswith("sh_")
    c.put_goal(goal.model_copy(update={"status": "completed", "progress_notes": ["asked on Monday"]}))
    assert c.goals(status="active") == []
    assert c.goals(status="completed")[0].progress_notes == ["asked on Monday"]
    c.set_reflection_meta("last_level2_date", "2026-11-21")
    assert c.reflection_meta() == {"last_level2_date": "2026-11-21"}
    c.set_drive(Drive(name="boredom", level=0.48, threshold=0.6, info={"last_interaction": "x"}))
    assert c.drives()[0].level == 0.48
    qid = c.add_question(OpenQuestion(question="Why does Mika like rain?", topic="weather", priority=0.8))
    assert [q.question for q in c.open_questions()] == ["Why does Mika like rain?"]
    c.resolve_question(qid)
    assert c.open_questions() == [] and c.open_questions(include_resolved=True)[0].resolved_at
    c.log_emotion(
        EmotionEntry(timestamp="2026-11-21T10:00:00+00:00", emotion="joy", value=1.0, snippet="yay")
    )
    assert c.emotions()[0].emotion == "joy"


def test_forget_deletes_the_memory_its_message_and_its_component(memory: MemoryStore) -> None:
    from nexus_ark.memory.conversation_index import Turn, index_turns

    message_id = memory.messages.add(speaker="user", role="user", content="My PIN is 4321.")
    ids = index_turns(
        memory.archive,
        [
            Turn(
                speaker="user",
                text="My PIN is 4321.",
                created_at="2026-01-01T10:00:00",
                source_id=f"msg:{message_id}",
            )
        ],
    )
    memory.components.write_entity("Bank", "Mika banks with Example Bank.")
    entity_item = memory.db.execute("select item_id from entities").fetchone()[0]
    memory.components.set_core_memory("I am Aria.")
    core_item = memory.db.execute("select id from items where kind = 'core'").fetchone()[0]

    assert memory.forget([ids[0], entity_item, core_item]) == 2
    assert memory.messages.count() == 0, "the message itself is gone"
    assert memory.components.entity("Bank") is None
    assert memory.archive.search("PIN 4321", None, mode="fts", include_archived=True) == []
    assert memory.components.core_memory() == "I am Aria.", "core memory is edited, never forgotten"


def test_forget_scrubs_the_text_from_neighbours(memory: MemoryStore) -> None:
    from nexus_ark.memory.conversation_index import Turn, index_turns

    ids = index_turns(
        memory.archive,
        [
            Turn(speaker="Mika", text="My PIN is 4321.", created_at="2026-01-01T10:00:00", source_id="a"),
            Turn(
                speaker="Mika",
                text="Anyway, how was your day?",
                created_at="2026-01-01T10:00:05",
                source_id="b",
            ),
        ],
    )
    neighbour = memory.archive.get(ids[1])
    assert "4321" in neighbour["context"] and "4321" in neighbour["embed_text"]
    memory.forget([ids[0]])
    neighbour = memory.archive.get(ids[1])
    assert "4321" not in neighbour["context"]
    assert neighbour["embed_text"] is None, "its vector will be remade from its own text only"
