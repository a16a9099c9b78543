"""`nexus-ark say`, `transcribe`, `voice list | get | remove`, and the speech of `chat --speak` (issue 36).

stdout is only the answer (the file written, the words heard, the voices); notes go to stderr. A voice that
cannot be spoken or heard (no audio device, an engine that is down, a damaged voice file) is one line on
stderr and exit 2: VoiceError's message and its hint joined on that line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO, get_args

import numpy as np

from nexus_ark.app import NexusApp
from nexus_ark.cli.model import describe_progress
from nexus_ark.config import load_app_settings
from nexus_ark.errors import NexusArkError
from nexus_ark.providers.model_download import Progress, human_bytes
from nexus_ark.voice.audio_out import open_output
from nexus_ark.voice.base import Audio, EngineName, VoiceError
from nexus_ark.voice.speaking import SpeechEvent, SpeechQueue

SPEECH_WAIT_S = 600.0  # the longest `say` or a spoken reply may play before the command gives up on it


def add_voice_parsers(sub: Any) -> None:
    say = sub.add_parser("say", help="speak TEXT in a persona's voice, or write it to a WAV file (-o)")
    say.add_argument(
        "--persona",
        help="the persona's name as `persona list` prints it first (default: the last one chatted with)",
    )
    say.add_argument(
        "-o", "--output", type=Path, metavar="OUT.wav", help="write a WAV file instead of playing"
    )
    say.add_argument("--engine", choices=get_args(EngineName), help="this engine instead of the persona's")
    say.add_argument(
        "--voice", metavar="ID", help="this voice (an id from `voice list`) instead of the persona's"
    )
    say.add_argument(
        "--device",
        metavar="NAME",
        help="the audio output: a number or part of its name (default: Settings → Voice)",
    )
    say.add_argument("text", help='what to say ("-": read it from stdin)')
    transcribe = sub.add_parser("transcribe", help="print the words spoken in an audio file (WAV, FLAC, OGG)")
    transcribe.add_argument("file", type=Path, metavar="FILE.wav", help="a WAV, FLAC or OGG file")
    transcribe.add_argument(
        "--language",
        choices=["ja", "en"],
        help="the language spoken (default: detected; the shipped recogniser hears English only)",
    )
    transcribe.add_argument("--json", action="store_true", help='one object: {"text", "language", "seconds"}')
    voice = sub.add_parser("voice", help="list, download or remove voices and recognisers")
    vsub = voice.add_subparsers(dest="voice_command", metavar="ACTION", required=True)
    listing = vsub.add_parser(
        "list", help="a header line, then engine, id, language, installed and size, tab-separated"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    get = vsub.add_parser("get", help="download a voice or recogniser from `voice list` (resumable)")
    get.add_argument("id")
    remove = vsub.add_parser("remove", help="delete a downloaded voice or recogniser")
    remove.add_argument("id")
    reading = vsub.add_parser(
        "reading", help="how a name the persona knows is read aloud (no NAME: list them; READING '': forget)"
    )
    reading.add_argument("--persona", required=True)
    reading.add_argument("name", nargs="?", help="a person, pet or thing in the persona's memory")
    reading.add_argument("reading", nargs="?", help="how to say it, e.g. in kana: あかり")


def run_voice_cli(args: argparse.Namespace) -> int:
    """say, transcribe, voice. Only `say` and `voice reading` open the data folder (a persona's memory is
    read): the others work while the window runs, as `model` does. A refusal (VoiceError, a download that
    failed, an unknown persona) is one line of stderr, its message and hint together, and exit 2."""
    run = {"say": run_say, "transcribe": run_transcribe, "voice": run_voice_command}[args.command]
    app = NexusApp(args.data_dir)
    try:
        if args.command == "say" or getattr(args, "voice_command", "") == "reading":
            app.open()
            if args.persona:  # the name the window shows (ひかり) or `persona list`'s first field
                args.persona = app.personas.store.slug_for(args.persona)
        elif app.layout.config_file.is_file():  # [transcription], read only
            app.settings = load_app_settings(app.layout.config_file)
        return run(app, args)
    except NexusArkError as exc:
        message = str(exc.message).rstrip()
        if exc.hint and message and message[-1] not in ".!?。！？":
            message += "."  # the message ends its sentence before the hint follows on the same line
        hint = f" {exc.hint}" if exc.hint else ""  # a hint of several sentences (a download's) too
        print(f"error: {message}{hint}".replace("\n", " "), file=sys.stderr)
        return 2
    finally:
        app.close()


def run_say(app: NexusApp, args: argparse.Namespace) -> int:
    slug = args.persona or app.admin.default_persona()
    text = sys.stdin.read() if args.text == "-" else args.text
    # Playing: the device is opened first, so a machine without one hears so before any synthesis.
    output = None if args.output else open_output(args.device or app.settings.voice.output_device or None)
    try:
        engine = args.engine or (_engine_of(app, args.voice) if args.voice else None)
        if engine is None and args.voice is None:
            _note_a_language_mismatch(app, slug, text)
        audio = app.voice.synthesizer_for(slug, engine=engine, voice=args.voice)(text)
        if not audio.samples.size:
            raise VoiceError("There is nothing to say: the text is empty, or only code, links or emoji.")
        if output is None:
            write_wav(args.output, audio)
            print(args.output)
        else:
            output.play(audio)
            if not output.wait(audio.seconds + SPEECH_WAIT_S):
                raise VoiceError(f"The audio output did not finish playing in {SPEECH_WAIT_S:.0f} s.")
    finally:
        if output is not None:
            output.close()
    print(f"{audio.seconds:.2f} s of speech at {audio.rate} Hz", file=sys.stderr)
    return 0


JAPANESE_SCRIPT = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana and the common kanji


def _note_a_language_mismatch(app: NexusApp, slug: str, text: str) -> None:
    """Japanese text for a persona that speaks English (the default persona, say): its English voice spells
    out what it cannot read, so a note says how to have it said in Japanese."""
    settings = app.personas.load(slug).settings
    if settings.language == "en" and JAPANESE_SCRIPT.search(text):
        print(
            f"note: {settings.name} speaks English; for Japanese text, --persona with a Japanese persona"
            " or --engine openjtalk.",
            file=sys.stderr,
        )


def _engine_of(app: NexusApp, voice_id: str) -> EngineName | None:
    """The offline engine whose voice `voice_id` is (`--voice jf_alpha` alone means Kokoro's); None: the
    persona's engine is asked for it (a VOICEVOX style id, say)."""
    return next((v.engine for v in app.voice.voices() if v.id == voice_id and v.installed), None)


def write_wav(path: Path, audio: Audio) -> None:
    """16-bit PCM WAV at the engine's rate (what every player and recogniser reads)."""
    import soundfile

    if not path.parent.is_dir():  # libsndfile would say only "System error."
        raise NexusArkError(f"Cannot write {path}: the folder {path.parent} does not exist.")
    try:
        soundfile.write(str(path), np.clip(audio.samples, -1.0, 1.0), audio.rate, subtype="PCM_16")
    except (OSError, RuntimeError, ValueError) as exc:  # soundfile's LibsndfileError is a RuntimeError
        raise NexusArkError(f"Cannot write {path}: {exc}") from exc


def read_audio(path: Path) -> Audio:
    """A sound file as mono float32 at its own rate; VoiceError naming the file when it is not audio."""
    import soundfile

    if not path.is_file():  # libsndfile would say only "System error."
        raise VoiceError(f"Cannot read {path}: there is no such file.")
    try:
        samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (OSError, RuntimeError, ValueError) as exc:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise VoiceError(f"Cannot read {path} as audio: {problem}") from exc
    return Audio(samples.mean(axis=1).astype(np.float32), int(rate))


def run_transcribe(app: NexusApp, args: argparse.Namespace) -> int:
    audio = read_audio(args.file)
    transcriber = app.voice.transcriber(args.language)
    if args.language is None and getattr(transcriber, "english_only", False):
        # It cannot detect a language: given Japanese it answers with confident English words.
        print(
            "note: the only recogniser installed hears English alone; for Japanese, `nexus-ark voice get "
            "whisper-base`.",
            file=sys.stderr,
        )
    heard = transcriber.transcribe(audio, args.language)
    if args.json:
        out = {"text": heard.text, "language": heard.language, "seconds": round(audio.seconds, 3)}
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(heard.text)
    return 0


LIST_HEADER = ("ENGINE", "ID", "LANGUAGE", "INSTALLED", "SIZE")  # engine "whisper": a recogniser


def run_voice_command(app: NexusApp, args: argparse.Namespace) -> int:
    if args.voice_command == "list":
        if not args.json:
            print("\t".join(LIST_HEADER))
        for row in _voice_rows(app):
            if args.json:
                print(json.dumps(row, ensure_ascii=False))
            else:
                size = human_bytes(row["size_bytes"]) if row["size_bytes"] else "-"
                installed = "installed" if row["installed"] else "-"
                print("\t".join((row["engine"], row["id"], row["language"], installed, size)))
        return 0
    if args.voice_command == "reading":
        return _reading(app, args)
    if args.voice_command == "remove":
        _refuse_what_was_not_downloaded(app, args.id)
        print(f"removed {app.voice.remove_voice(args.id)}", file=sys.stderr)
        print(args.id)
        return 0
    return _get_voice(app, args.id)


def _refuse_what_was_not_downloaded(app: NexusApp, voice_id: str) -> None:
    """`voice list` shows the shipped voices and recogniser as installed: removing one is refused in those
    words, not as an id unknown to the catalogue (or 'not downloaded', which reads as a contradiction)."""
    if (app.voice.voices_dir() / voice_id).exists():
        return  # a download (whole or partial): voice remove deletes it
    shipped = [row for row in _voice_rows(app) if row["id"] == voice_id and row["installed"]]
    if shipped:
        raise VoiceError(
            f"{voice_id} is not a download: it ships with Nexus Ark or was put in {app.voice.voices_dir()}"
            " by hand, and voice remove deletes only what voice get downloaded."
        )


def _reading(app: NexusApp, args: argparse.Namespace) -> int:
    """NAME<TAB>reading lines: every reading the persona's memory holds, or the one set now."""
    if args.name is not None and args.reading is not None:
        entity = app.voice.set_reading(args.persona, args.name, args.reading)
        print(f"{entity.name}\t{entity.reading}")
        return 0
    readings = app.voice.readings(args.persona)
    for name, said in readings.items():
        if args.name is None or name == args.name:
            print(f"{name}\t{said}")
    return 0


def _voice_rows(app: NexusApp) -> list[dict[str, Any]]:
    """`voice list`'s rows: the voices to speak with, then the recognisers (Whisper models) to listen."""
    rows = [{**info.model_dump(mode="json"), "kind": "voice"} for info in app.voice.voices()]
    for found in app.voice.recognisers():
        row = {"engine": "whisper", "id": found.id, "label": found.id, "language": found.language}
        rows.append(
            {**row, "installed": found.installed, "size_bytes": found.size_bytes, "kind": "recogniser"}
        )
    return rows


def _get_voice(app: NexusApp, voice_id: str) -> int:
    meter = _Meter(sys.stderr)
    cancel = threading.Event()
    try:
        where = app.voice.get_voice(voice_id, progress=meter, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        print("\nstopped: what was downloaded is kept; run the command again to go on.", file=sys.stderr)
        return 1
    print(where)
    return 0


class _Meter:
    """Download progress on stderr: a line at each stage and every few seconds (as `model get` says it)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last = 0.0

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.stage == "downloading" and now - self.last < 2.0 and progress.done < progress.total:
            return
        self.last = now
        print(describe_progress(progress), file=self.out, flush=True)


class ReplySpeech:
    """`chat --speak`: each reply spoken sentence by sentence while it streams (voice/speaking.py), into
    the default audio output. A sentence that cannot be spoken is a warning on stderr, once per problem;
    the chat goes on in text."""

    def __init__(self, app: NexusApp, slug: str) -> None:
        # config.toml [voice] output_device ("" = the system's); none: the chat does not start, and says why
        self.output = open_output(app.settings.voice.output_device or None)
        try:
            self.queue = SpeechQueue(app.voice.synthesizer_for(slug), self.output, on_event=self._event)
        except BaseException:
            self.output.close()
            raise
        self._warned: set[str] = set()

    def _event(self, event: SpeechEvent) -> None:
        if event.kind == "error" and event.error is not None and event.error.message not in self._warned:
            self._warned.add(event.error.message)
            print(f"warning: not spoken: {event.error.message}", file=sys.stderr, flush=True)

    def wait(self) -> None:
        """Until the reply has been spoken; Ctrl-C stops the speech."""
        try:
            self.queue.wait(SPEECH_WAIT_S)
        except KeyboardInterrupt:
            self.queue.stop()

    def close(self) -> None:
        self.queue.close()
        self.output.close()
