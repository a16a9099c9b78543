"""`nexus-ark setup`: the first start in the terminal: what the personas call you, and which mind they use.

On a terminal it asks (your name, then a model: a server already running here, the catalogue's download for
this computer, a provider with a key, or the built-in model). `--json` prints what was found and what is
recommended; `--name NAME [--model SPEC]` sets them without questions. Either way the first start counts as
done, so the window does not open its own first-start flow again.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from nexus_ark.app import NexusApp
from nexus_ark.app.first_start import BUILT_IN_LIMIT, SetupReport, apply_setup, downloaded_spec, setup_report
from nexus_ark.errors import ConfigError, NexusArkError
from nexus_ark.model_config import ModelConfig, ModelSpec
from nexus_ark.notices import notice
from nexus_ark.providers.model_download import DownloadCancelled, Progress, human_bytes
from nexus_ark.providers.secrets import store_key

Ask = Callable[[str], str]


def add_setup_parsers(sub: Any) -> None:
    setup = sub.add_parser(
        "setup",
        help="the first start: what the personas call you and which model they run on (asks on a terminal)",
    )
    setup.add_argument(
        "--json", action="store_true", help="print what was found on this computer and what is recommended"
    )
    setup.add_argument("--name", help="what the personas call you (no questions asked)")
    setup.add_argument(
        "--model",
        metavar="SPEC",
        help='the model every persona still on the built-in one uses: "bundled", "gguf:PATH", '
        '"ollama:NAME" or "litellm:PROVIDER/MODEL" (a server found running here gives its address itself)',
    )
    setup.add_argument("--api-base", metavar="URL", help="the server of an ollama: or litellm: model")


def run_setup(app: NexusApp, args: argparse.Namespace, ask: Ask | None = None) -> int:
    if args.name is not None or args.model is not None:
        report = setup_report(app) if args.model is not None or args.json else None
        model = _model_config(args.model, args.api_base, report) if args.model is not None else None
        switched = apply_setup(app, name=args.name, model=model)
        _say_applied(app, switched)
        if args.json:
            print(json.dumps(setup_report(app).as_json(), ensure_ascii=False))
        return 0
    if args.json:
        print(json.dumps(setup_report(app).as_json(), ensure_ascii=False))
        return 0
    if ask is None and not sys.stdin.isatty():
        print(
            "setup asks its questions on a terminal; here, use --json to see what was found, or "
            "--name NAME [--model SPEC] to set them.",
            file=sys.stderr,
        )
        return 2
    return _interactive(app, ask or _ask_terminal)


def _model_config(spec: str, api_base: str | None, report: SetupReport | None) -> ModelConfig:
    """--model as a model setting: a server found here gives its own address; a GGUF file must exist."""
    parsed = ModelSpec.parse(spec)
    if parsed.kind == "gguf":
        path = Path(parsed.target).expanduser()
        if not path.is_file():
            raise ConfigError(notice("--model: there is no file {path}.", path=str(path)))
        return ModelConfig(spec=f"gguf:{path.resolve()}")
    if api_base is None and report is not None:
        for server in report.servers:
            for model in server.models:
                if model.spec == str(parsed):
                    return model.config()
    return ModelConfig(spec=str(parsed), api_base=api_base or "")


def _say_applied(app: NexusApp, switched: list[str]) -> None:
    name = app.settings.user_name
    print(
        f"The personas call you {name!r}." if name else "The personas do not know your name.", file=sys.stderr
    )
    print(f"Model: {app.settings.chat_model.spec or 'bundled'}", file=sys.stderr)
    if switched:
        print(f"Now on it: {', '.join(switched)} (they were on the built-in model).", file=sys.stderr)


# -- the questions ----------------------------------------------------------------------------------------
def _ask_terminal(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return ""


def _interactive(app: NexusApp, ask: Ask, out: TextIO | None = None) -> int:
    out = out or sys.stderr  # the conversation is notes, not the command's answer: stdout stays empty
    current = app.settings.user_name
    typed = ask(f"What should the personas call you?{f' [{current}]' if current else ''} ").strip()
    name = typed or current
    print("Looking for models on this computer…", file=out)
    report = setup_report(app)
    choices: list[tuple[str, Callable[[], ModelConfig | None]]] = []
    for server in report.servers:
        for found in server.models:
            choices.append((f"{found.name}  ({server.name}, {server.url})", found.config))
    if not report.servers:
        print("No model server is running here (Ollama, LM Studio, llama.cpp's server…).", file=out)
    rec = report.recommended
    if rec is not None:
        if report.recommended_path:
            label = f"{rec.entry.name}  (downloaded already)"
        else:
            speed = "measured" if rec.speed_measured else f"at {human_bytes(rec.bytes_per_s)}/s"
            label = (
                f"Download {rec.entry.name}: {human_bytes(rec.size_bytes)}, about {rec.minutes} min {speed}"
            )
        choices.append((label, lambda: _download(app, report, ask, out)))
    choices.append(("A provider with an API key (OpenAI, Anthropic, Gemini…)", lambda: _remote(ask, out)))
    choices.append((f"The built-in model. {BUILT_IN_LIMIT}", lambda: ModelConfig(spec="bundled")))
    print("Which mind should the personas run on?", file=out)
    for number, (label, _) in enumerate(choices, 1):
        print(f"  {number}. {label}", file=out)
    while True:
        answer = ask(f"Choose 1-{len(choices)}: ").strip()
        if not answer:  # EOF or Enter: leave the model as it is
            model = None
            break
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            model = choices[int(answer) - 1][1]()
            if model is not None:
                break
            continue  # a download that did not finish: choose again (a server, or a file on disk)
        print(f"Type a number from 1 to {len(choices)}.", file=out)
    switched = apply_setup(app, name=name, model=model)
    _say_applied(app, switched)
    return 0


def _download(app: NexusApp, report: SetupReport, ask: Ask, out: TextIO) -> ModelConfig | None:
    rec = report.recommended
    assert rec is not None
    if report.recommended_path:
        return ModelConfig(spec=downloaded_spec(app, rec))
    if rec.entry.accept_license:
        print(f"{rec.entry.name} comes under the {rec.entry.license}: {rec.entry.license_url}", file=out)
        if ask("Do you agree to its terms? [y/N] ").strip().lower() not in ("y", "yes"):
            return None
    meter, cancel = _Progress(out), threading.Event()
    try:
        spec = app.models.get(rec.entry, accepted_license=True, progress=meter, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        meter.end()
        print("Stopped: what arrived is kept; run setup again to go on.", file=out)
        return None
    except DownloadCancelled:
        meter.end()
        return None
    except (
        NexusArkError
    ) as exc:  # a download that failed says what to do offline, and the choice is asked again
        meter.end()
        print(f"The download did not finish: {exc}", file=out)
        print(
            "Offline? Choose a model server running here, or give a GGUF file already on this computer: "
            "nexus-ark setup --model gguf:/path/to/model.gguf",
            file=out,
        )
        return None
    meter.end()
    return ModelConfig(spec=spec)


def _remote(ask: Ask, out: TextIO) -> ModelConfig | None:
    target = ask("Provider/model, e.g. openai/gpt-4o-mini or anthropic/claude-3-5-haiku-latest: ").strip()
    if not target:
        return None
    spec = target if target.startswith("litellm:") else f"litellm:{target}"
    ModelSpec.parse(spec)
    key = getpass.getpass("API key (kept in the OS keyring; Enter to use the provider's variable): ").strip()
    reference = ""
    if key:
        try:
            reference = store_key("default-chat", key)
        except ConfigError as exc:
            print(f"error: {exc}", file=out)
            return None
    return ModelConfig(spec=spec, api_key=reference)


class _Progress:
    """The download's progress as `model get` words it, a line every few seconds (the questions share
    the terminal: no line redrawn under a prompt)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last = 0.0

    def __call__(self, progress: Progress) -> None:
        from nexus_ark.cli.model import describe_progress

        now = time.monotonic()
        if progress.stage == "downloading" and now - self.last < 3.0:
            return
        self.last = now
        print(describe_progress(progress), file=self.out, flush=True)

    def end(self) -> None:
        pass
