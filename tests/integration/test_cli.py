"""`nexus-ark` as scripts drive it: a fresh process, the real bundled model, a temporary data dir."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from nexus_ark.cli.chat import one_line
from nexus_ark.memory.store import MemoryStore
from tests.conftest import cli_command, run_cli, subprocess_env

pytestmark = pytest.mark.integration


def test_persona_list_puts_the_persona_name_first(data_dir: Path) -> None:
    proc = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert proc.returncode == 0, proc.stderr
    first_fields = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    assert first_fields == ["aria", "hikari"]
    assert "ひかり" in proc.stdout


@pytest.mark.slow
def test_persona_create_then_chat_with_it(data_dir: Path) -> None:
    created = run_cli("--data-dir", str(data_dir), "persona", "create", "Mika", "--language", "ja")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "mika"
    assert (data_dir / "personas" / "mika" / "persona.md").is_file()
    chat = run_cli("--data-dir", str(data_dir), "chat", "--persona", "mika", stdin="こんにちは、ミカ。\n")
    assert chat.returncode == 0, chat.stderr
    store = MemoryStore(data_dir / "personas" / "mika" / "memory.db")
    try:
        rows = store.messages.recent()
    finally:
        store.close()
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[0].content == "こんにちは、ミカ。"
    assert rows[1].status == "complete" and rows[1].content.strip()
    assert chat.stdout == one_line(rows[1].content) + "\n", "what was printed is what was stored"


@pytest.mark.slow
def test_personas_are_named_as_the_window_shows_them(data_dir: Path) -> None:
    """`nexus-ark chat ひかり` was an unknown argument and `--persona ひかり` no persona (its folder is
    hikari): the name the window shows, in any case; and the chat says on stderr, as the window does, that
    ひかり's model does not speak Japanese."""
    said = run_cli("--data-dir", str(data_dir), "chat", "ひかり", stdin="こんにちは\n")
    assert said.returncode == 0, said.stderr
    # As the window's notice: ひかり's model, the bundled one, writes no Japanese; the reply alone on stdout.
    assert "note: ひかり speaks Japanese, but its model (SmolLM2-135M-Instruct Q4_1) does not" in said.stderr
    assert "nexus-ark model get qwen2.5-1.5b" in said.stderr and "note:" not in said.stdout
    searched = run_cli("--data-dir", str(data_dir), "memory", "search", "--persona", "ひかり", "こんにちは")
    assert searched.returncode == 0 and "user: こんにちは" in searched.stdout, searched.stderr
    english = run_cli("--data-dir", str(data_dir), "chat", "--persona", "Aria", stdin="Hello\n")
    assert english.returncode == 0 and "note:" not in english.stderr, english.stderr
    exported = run_cli("--data-dir", str(data_dir), "persona", "export", "ARIA", str(data_dir / "aria.json"))
    assert exported.returncode == 0 and (data_dir / "aria.json").is_file(), exported.stderr
    unknown = run_cli("--data-dir", str(data_dir), "chat", "--persona", "nobody", stdin="hi\n")
    assert unknown.returncode == 2 and "no persona 'nobody'" in unknown.stderr


def test_piped_chat_answers_each_line_and_remembers(data_dir: Path) -> None:
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "chat",
        "--persona",
        "aria",
        stdin="Hello! What is your name?\nWhat do you like?\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        rows = store.messages.recent()
    finally:
        store.close()
    assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[0].content == "Hello! What is your name?"
    assert all(r.status == "complete" and r.content for r in rows)
    # What was printed is what was stored.
    assert proc.stdout == f"{one_line(rows[1].content)}\n{one_line(rows[3].content)}\n"


def test_second_process_on_the_same_data_dir_is_refused(data_dir: Path) -> None:
    holder = subprocess.Popen(
        cli_command("--data-dir", str(data_dir), "chat", "--persona", "aria"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (data_dir / ".nexus-ark.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (data_dir / ".nexus-ark.pid").exists(), "the first process never claimed the data dir"
        second = run_cli("--data-dir", str(data_dir), "persona", "list")
        assert second.returncode == 2
        assert "Another Nexus Ark" in second.stderr and str(data_dir) in second.stderr
        assert str(holder.pid) in second.stderr
    finally:
        holder.communicate("", timeout=60)
    # Once the first has gone, the data dir is free again.
    assert run_cli("--data-dir", str(data_dir), "persona", "list").returncode == 0


def test_broken_persona_toml_is_named_and_kept(data_dir: Path) -> None:
    assert run_cli("--data-dir", str(data_dir), "persona", "list").returncode == 0
    settings = data_dir / "personas" / "aria" / "persona.toml"
    settings.write_text('name = "Aria"\nlanguage = en\n', encoding="utf-8")
    proc = run_cli("--data-dir", str(data_dir), "chat", "--persona", "aria", stdin="hi\n")
    assert proc.returncode == 2
    assert str(settings) in proc.stderr and "line 2" in proc.stderr
    assert settings.read_text(encoding="utf-8") == 'name = "Aria"\nlanguage = en\n'
    listed = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert "aria\t(unusable)" in listed.stdout and "hikari\tひかり" in listed.stdout


def test_missing_model_file_is_named(data_dir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "gone.gguf"
    proc = run_cli(
        "--data-dir", str(data_dir), "chat", "--persona", "aria", "--model", f"gguf:{missing}", stdin="hi\n"
    )
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "does not exist" in proc.stderr


@pytest.mark.slow
def test_any_gguf_path_works(data_dir: Path, bundled_model: Path) -> None:
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "chat",
        "--persona",
        "aria",
        "--model",
        f"gguf:{bundled_model}",
        stdin="Say hello.\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_unwritable_data_dir_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_cli("--data-dir", str(blocker / "data"), "persona", "list")
    assert proc.returncode == 2
    assert str(blocker / "data") in proc.stderr and "--data-dir" in proc.stderr


def test_doctor_reports_what_works(data_dir: Path) -> None:
    proc = run_cli("--data-dir", str(data_dir), "doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {line.split()[1]: line for line in proc.stdout.splitlines()}
    assert lines["memory"].startswith("ok") and "sqlite-vec v0.1.9" in lines["memory"]
    assert lines["bundled"].startswith("ok") and "SmolLM2" in lines["bundled"]
    assert "window" in lines and "notifications" in lines


def _chat_on(
    data_dir: Path, model: str, api_base: str, stdin: str, *, verbose: bool = False
) -> subprocess.CompletedProcess[str]:
    """`nexus-ark chat` with aria on MODEL at API_BASE, the messages piped in."""
    verbose_flag = ["-v"] if verbose else []
    command = ["--data-dir", str(data_dir), *verbose_flag, "chat", "--persona", "aria", "--model", model]
    return run_cli(*command, "--api-base", api_base, stdin=stdin)


def _stored(data_dir: Path) -> list:
    """Aria's messages as stored (read after the command has ended)."""
    store = MemoryStore(data_dir / "personas" / "aria" / "memory.db")
    try:
        return store.messages.recent()
    finally:
        store.close()


@pytest.mark.slow
def test_chat_through_litellm_and_an_openai_compatible_server(data_dir: Path, llama_server: str) -> None:
    proc = _chat_on(data_dir, "litellm:openai/local", llama_server, "Say hello.\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    reply = _stored(data_dir)[-1]
    assert reply.meta["model"] == "litellm:openai/local" and reply.status == "complete"


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
@pytest.mark.slow
def test_litellm_logs_stay_off_stdout(data_dir: Path, llama_server: str, verbose: bool) -> None:
    """stdout is the scripting contract: two piped messages give the two replies and nothing else, even with
    -v (LiteLLM's own handler printed "LiteLLM completion() model= ..." there, between the replies)."""
    proc = _chat_on(
        data_dir, "litellm:openai/local", llama_server, "Say hello.\nName a colour.\n", verbose=verbose
    )
    assert proc.returncode == 0, proc.stderr
    assert "LiteLLM" not in proc.stdout, proc.stdout
    replies = [m.content for m in _stored(data_dir) if m.role == "assistant"]
    assert len(replies) == 2
    printed = " ".join(proc.stdout.split())
    assert printed == " ".join(" ".join(replies).split()), proc.stdout
    if verbose:
        assert "LiteLLM" in proc.stderr, "with -v LiteLLM's details go to stderr"


@pytest.mark.slow
def test_a_litellm_stream_cut_without_done_is_a_failed_reply(data_dir: Path, ollama_wire) -> None:
    """A body that ends mid-event with no finish_reason and no [DONE] is not a complete reply (LiteLLM makes
    up a "stop" for it): kept as a failed reply, exit 1, worded as the same fault through Ollama."""
    proc = _chat_on(data_dir, "litellm:openai/fault-unterminated", f"{ollama_wire.url}/v1", "Say hello.\n")
    assert proc.returncode == 1, proc.stderr
    assert "closed in the middle of the reply" in proc.stderr
    reply = _stored(data_dir)[-1]
    # Kept with the text that came, marked as the failed reply it is (as the same fault through Ollama).
    assert reply.role == "assistant" and reply.content == "Hello" and reply.status == "error", reply


def test_chat_through_ollama(data_dir: Path, ollama_wire) -> None:
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "chat",
        "--persona",
        "aria",
        "--model",
        "ollama:smollm2:135m",
        "--api-base",
        ollama_wire.url,
        stdin="Say hello.\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_ollama_not_running_is_said_in_words(data_dir: Path) -> None:
    from tests.integration.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "chat",
        "--persona",
        "aria",
        "--model",
        "ollama:qwen2.5",
        "--api-base",
        url,
        stdin="hi\n",
    )
    # The input was right and no reply came: 1, as for a failed reply (it was 2, "bad input").
    assert proc.returncode == 1
    assert f"Ollama is not running at {url}" in proc.stderr


@pytest.mark.parametrize("api_base", ["bundled", "localhost:11434", "http://127.0.0.1:99999", "http://"])
def test_an_api_base_that_is_not_a_server_address_is_refused_when_read(data_dir: Path, api_base: str) -> None:
    """A non-URL api_base was accepted and failed at the first message ("Port could not be cast",
    "Ollama is not running at bundled"); now persona.toml and --api-base are refused naming the field."""
    proc = run_cli(
        "--data-dir", str(data_dir), "chat", "--persona", "aria", "--model", "ollama:qwen2.5",
        "--api-base", api_base, stdin="hi\n",
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "api_base: not a server address" in proc.stderr and repr(api_base) in proc.stderr

    toml = data_dir / "personas" / "aria" / "persona.toml"
    toml.write_text(f'name = "Aria"\n[model]\nspec = "ollama:qwen2.5"\napi_base = "{api_base}"\n', "utf-8")
    listed = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert "model.api_base: not a server address" in listed.stdout and "(unusable)" in listed.stdout


def test_a_reader_that_stops_early_ends_the_command_quietly(data_dir: Path) -> None:
    """`nexus-ark persona list | head -1` printed a BrokenPipeError traceback."""
    proc = subprocess.Popen(
        cli_command("--data-dir", str(data_dir), "persona", "list"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    proc.stdout.close()  # the reader is gone before the first line is written
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()


def test_unknown_model_spec_is_named(data_dir: Path) -> None:
    proc = run_cli("--data-dir", str(data_dir), "chat", "--persona", "aria", "--model", "gpt4", stdin="hi\n")
    assert proc.returncode == 2 and "'gpt4'" in proc.stderr and "litellm:" in proc.stderr


@pytest.mark.slow
def test_memory_import_and_search_contract(data_dir: Path, tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    rows = [
        {
            "id": "t1",
            "speaker": "Mika",
            "text": "My cat Luna turned twelve today.",
            "timestamp": "2026-03-01T10:00:00",
        },
        "{broken line",
        {"id": "t2", "speaker": "Aria", "text": "Happy birthday, Luna!", "timestamp": "2026-03-01T10:00:10"},
        {
            "id": "t3",
            "speaker": "Mika",
            "text": "I start my new job on Monday.",
            "timestamp": "2026-03-05T09:00:00",
        },
    ]
    turns.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    imported = run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns))
    assert imported.returncode == 1, "a bad line makes the exit code say so"
    assert f"{turns}:2" in imported.stderr and "imported 3 turns" in imported.stdout

    single = run_cli(
        "--data-dir",
        str(data_dir),
        "memory",
        "search",
        "--persona",
        "aria",
        "-k",
        "2",
        "--json",
        "How old is the cat?",
    )
    assert single.returncode == 0, single.stderr
    hits = [json.loads(line) for line in single.stdout.splitlines()]
    assert len(hits) == 2 and hits[0]["source_id"] == "t1"
    assert set(hits[0]) == {"source_id", "kind", "text", "score", "timestamp"}

    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q1", "query": "new job"}\n{"id": "q2", "query": "How old is Luna now?"}\n')
    batch = run_cli(
        "--data-dir",
        str(data_dir),
        "memory",
        "search",
        "--persona",
        "aria",
        "--queries",
        str(queries),
        "--json",
        "-k",
        "1",
    )
    assert batch.returncode == 0, batch.stderr
    lines = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [(r["id"], r["hits"][0]["source_id"]) for r in lines] == [("q1", "t3"), ("q2", "t1")]


@pytest.mark.slow
def test_memory_export_restore_backup_and_kb(data_dir: Path, tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        '{"id": "t1", "speaker": "Mika", "text": "Genmaicha is my favourite tea.", '
        '"timestamp": "2026-03-01T10:00:00"}\n',
        encoding="utf-8",
    )
    assert (
        run_cli("--data-dir", str(data_dir), "memory", "import", "--persona", "aria", str(turns)).returncode
        == 0
    )
    notes = tmp_path / "garden.md"
    notes.write_text("# Garden\nThe tomatoes go in the sunny corner by the fence.", encoding="utf-8")
    kb = run_cli("--data-dir", str(data_dir), "memory", "kb", "--persona", "aria", "add", str(notes))
    assert kb.returncode == 0 and "\tdone\tgarden\t" in kb.stdout
    export = run_cli(
        "--data-dir", str(data_dir), "memory", "export", "--persona", "aria", str(tmp_path / "out")
    )
    assert export.returncode == 0 and (tmp_path / "out" / "memory.json").exists()
    restored = run_cli(
        "--data-dir", str(data_dir), "memory", "restore", "--persona", "hikari", str(tmp_path / "out")
    )
    assert restored.returncode == 0, restored.stderr
    found = run_cli(
        "--data-dir",
        str(data_dir),
        "memory",
        "search",
        "--persona",
        "hikari",
        "--json",
        "-k",
        "1",
        "Where do the tomatoes go?",
    )
    assert "sunny corner" in found.stdout
    backup = run_cli("--data-dir", str(data_dir), "memory", "backup", "--persona", "aria")
    assert backup.returncode == 0 and Path(backup.stdout.strip()).exists()
