"""The first-start flow: two short pages over the main window.

Page 1 asks what the personas should call the person. Page 2 asks which mind they run on, from what this
computer has: model servers already running (probed on loopback, on a worker), the catalogue's download for
this machine's memory (Download reuses the Get-a-model dialog and its worker), a GGUF file on disk, a
provider with a key (the persona's model settings), or the built-in model with what it cannot do. "Start
talking" sets the name and the model (the app's default; personas still on the built-in model follow it)
and closes: the window reopens the persona on it. Skip closes it too, and it does not open by itself again.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.app import NexusApp
from nexus_ark.app.first_start import BUILT_IN_LIMIT, SetupReport, apply_setup, downloaded_spec, setup_report
from nexus_ark.model_config import ModelConfig
from nexus_ark.providers.local_servers import Candidate
from nexus_ark.providers.model_download import human_bytes
from ui.util import theme
from ui.util.i18n import N_, tr, tr_notice
from ui.util.tasks import run_in_background, while_open

# What a choice on page 2 is: the kind, and what it carries (a server's model, a file's path).
SERVER, DOWNLOAD, FILE, REMOTE, BUILT_IN = "server", "download", "file", "remote", "built-in"
# The download's time at the speed a download measured, or at the one assumed before any was measured.
DOWNLOAD_MEASURED = N_("Download {model}: {size}, about {minutes} min at {speed}/s")
DOWNLOAD_ASSUMED = N_("Download {model}: {size}, about {minutes} min at an assumed {speed}/s")


class FirstStartDialog(QDialog):
    """Non-modal: the main window stays usable behind it. `slug` is the persona shown (the model settings
    a provider's key goes to); `targets` replaces the ports probed (tests)."""

    # Not `done`: that is QDialog.done(result), which closing the dialog calls.
    applied = Signal(list)  # the setup was applied (the personas switched to the chosen model); not on Skip
    skipped = Signal()

    def __init__(
        self,
        app: NexusApp,
        parent: QWidget | None = None,
        *,
        slug: str = "",
        name: str = "",
        targets: list[Candidate] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("firstStart")
        self.app = app
        self.slug, self.persona_name = slug, name
        self.targets = targets
        self.report: SetupReport | None = None
        self.gguf_path = ""
        self.download_failed = False
        self._busy = False
        self._options: list[tuple[QRadioButton, str, object]] = []
        self.setMinimumWidth(640)

        self.pages = QStackedWidget()
        self.pages.addWidget(self._name_page())
        self.pages.addWidget(self._mind_page())
        self.status = QLabel()
        self.status.setObjectName("firstStartStatus")
        self.status.setWordWrap(True)
        self.back_button = QPushButton()
        self.back_button.setObjectName("backButton")
        self.back_button.clicked.connect(lambda: self.show_page(0))
        self.skip_button = QPushButton()
        self.skip_button.setObjectName("skipButton")
        self.skip_button.clicked.connect(self.skip)
        self.next_button = QPushButton()
        self.next_button.setObjectName("nextButton")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self.go_on)
        buttons = QHBoxLayout()
        buttons.addWidget(self.back_button)
        buttons.addStretch(1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.retranslate()
        self.show_page(0)
        self._probe()

    # -- the pages ----------------------------------------------------------------------------------
    def _name_page(self) -> QWidget:
        page = QWidget()
        self.name_title = QLabel()
        self.name_title.setObjectName("nameTitle")
        self.name_title.setStyleSheet("font-size: 15pt; font-weight: 600")
        self.name_title.setWordWrap(True)
        self.name_note = QLabel()
        self.name_note.setWordWrap(True)
        self.name_edit = QLineEdit(self.app.settings.user_name)
        self.name_edit.setObjectName("userName")
        self.name_edit.setMaxLength(80)
        self.name_edit.returnPressed.connect(self.go_on)
        self.welcome = QLabel()
        self.welcome.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(self.welcome)
        layout.addWidget(self.name_title)
        layout.addWidget(self.name_note)
        layout.addSpacing(8)
        layout.addWidget(self.name_edit)
        layout.addStretch(1)
        return page

    def _mind_page(self) -> QWidget:
        page = QWidget()
        self.mind_title = QLabel()
        self.mind_title.setObjectName("mindTitle")
        self.mind_title.setStyleSheet("font-size: 15pt; font-weight: 600")
        self.mind_note = QLabel()
        self.mind_note.setWordWrap(True)
        self.choices = QWidget()
        self.choices.setObjectName("mindChoices")
        self.choices_layout = QVBoxLayout(self.choices)
        self.choices_layout.setContentsMargins(0, 0, 0, 0)
        self.group = QButtonGroup(self)
        self.group.buttonClicked.connect(self._person_chose)
        self._chosen_by_person = False
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.choices)
        layout = QVBoxLayout(page)
        layout.addWidget(self.mind_title)
        layout.addWidget(self.mind_note)
        layout.addWidget(scroll, 1)
        return page

    def show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.resize(max(self.width(), 640), 300 if index == 0 else 600)  # a short question, then the list
        self.back_button.setVisible(index == 1)
        self._texts_for_page()
        if index == 0:
            self.name_edit.setFocus()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Welcome to Nexus Ark"))
        self.welcome.setText(tr("Welcome. Two short questions, and you can start talking."))
        self.name_title.setText(tr("What should the personas call you?"))
        self.name_note.setText(
            tr(
                "They use it in every conversation, in what they remember and in rooms. Each persona can "
                "have its own name for you in its settings. Leave it empty if you would rather not say."
            )
        )
        self.name_edit.setPlaceholderText(tr("Your name"))
        self.mind_title.setText(tr("Which mind?"))
        self.mind_note.setText(
            tr("The model the personas think with. You can change it any time in Model settings.")
        )
        self.back_button.setText(tr("Back"))
        self.skip_button.setText(tr("Skip"))
        self.skip_button.setToolTip(tr("Keep things as they are; Settings > First start… brings this back"))
        self._texts_for_page()
        self._show_choices()

    def _texts_for_page(self) -> None:
        self.next_button.setText(tr("Next") if self.pages.currentIndex() == 0 else tr("Start talking"))

    # -- what this computer has (on a worker) -------------------------------------------------------
    def _probe(self) -> None:
        app, targets = self.app, self.targets
        run_in_background(
            lambda: setup_report(app, targets=targets),
            while_open(self, self._found),
            while_open(self, self._show_error),
        )

    def _found(self, report: SetupReport) -> None:
        self.report = report
        self._show_choices()

    def _show_choices(self) -> None:
        """The options, rebuilt (a language switch, the probe's answer, a file chosen); the choice stays."""
        chosen = self.chosen() if self._chosen_by_person else None
        while self.choices_layout.count():
            item = self.choices_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for button in self.group.buttons():
            self.group.removeButton(button)
        self._options = []
        report = self.report
        if report is None:
            self._note(tr("Looking for model servers on this computer…"), name="probing")
        else:
            if report.servers:
                for server in report.servers:
                    self._heading(
                        tr("{server}, running on this computer ({url})", server=server.name, url=server.url)
                    )
                    if not server.models:
                        self._note(tr("It has no models yet."))
                    for model in server.models:
                        self._option(model.name, SERVER, model)
            else:
                self._note(
                    tr(
                        "No model server is running on this computer (Ollama, LM Studio, llama.cpp's "
                        "server…)."
                    ),
                    name="noServers",
                )
            self._heading(tr("Download one"))
            rec = report.recommended
            if rec is not None:
                if report.recommended_path:
                    text = tr("{model} (downloaded already)", model=rec.entry.name)
                else:
                    text = tr(
                        DOWNLOAD_MEASURED if rec.speed_measured else DOWNLOAD_ASSUMED,
                        model=rec.entry.name,
                        size=human_bytes(rec.size_bytes),
                        minutes=rec.minutes,
                        speed=human_bytes(rec.bytes_per_s),
                    )
                detail = tr(
                    "Licence: {licence}. It runs inside Nexus Ark: no other program needed.",
                    licence=rec.entry.license,
                )
                self._option(text, DOWNLOAD, rec, detail=detail, name="downloadChoice")
            if self.download_failed:
                self._note(
                    theme.tinted(
                        tr(
                            "The download did not finish. Offline? Choose a GGUF file already on this "
                            "computer, or a model server running here."
                        ),
                        "error",
                    ),
                    name="downloadFailed",
                )
        self._heading(tr("Or"))
        file_text = (
            tr("The GGUF file {path}", path=self.gguf_path)
            if self.gguf_path
            else tr("A GGUF file on this computer…")
        )
        self._option(file_text, FILE, self.gguf_path, name="fileChoice")
        self._option(
            tr("A provider with an API key (OpenAI, Anthropic, Gemini…)"),
            REMOTE,
            None,
            detail=tr("Opens the model settings; the key goes to the OS keyring."),
            name="remoteChoice",
        )
        self._option(
            tr("The built-in model"), BUILT_IN, None, detail=tr_notice(BUILT_IN_LIMIT), name="builtIn"
        )
        self.choices_layout.addStretch(1)
        self._choose_again(chosen)

    def _heading(self, text: str) -> None:
        label = QLabel(text)
        label.setStyleSheet("font-weight: 600; margin-top: 6px")
        self.choices_layout.addWidget(label)

    def _note(self, text: str, *, name: str = "") -> None:
        label = QLabel(text)
        label.setWordWrap(True)
        if name:
            label.setObjectName(name)
        self.choices_layout.addWidget(label)

    def _option(self, text: str, kind: str, value: object, *, detail: str = "", name: str = "") -> None:
        button = QRadioButton(text)
        if name:
            button.setObjectName(name)
        self.group.addButton(button)
        self.choices_layout.addWidget(button)
        if detail:
            note = QLabel(detail)
            note.setWordWrap(True)
            note.setIndent(24)
            note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            theme.set_tone(note, "muted")
            self.choices_layout.addWidget(note)
        self._options.append((button, kind, value))

    def _choose_again(self, chosen: tuple[str, object] | None) -> None:
        """Keep the choice across a rebuild; else a server's first model, else the download, else built-in."""
        order = [(b, k, v) for b, k, v in self._options]
        if chosen is not None:
            for button, kind, value in order:
                if kind == chosen[0] and (kind != SERVER or value == chosen[1]):
                    button.setChecked(True)
                    return
        for wanted in (SERVER, DOWNLOAD, BUILT_IN):
            for button, kind, _value in order:
                if kind == wanted:
                    button.setChecked(True)
                    return

    def _person_chose(self, _button: QRadioButton) -> None:
        self._chosen_by_person = True

    def chosen(self) -> tuple[str, object] | None:
        for button, kind, value in self._options:
            if button.isChecked():
                return kind, value
        return None

    def option_texts(self) -> list[str]:
        """What page 2 offers, as the person reads it (for tests and screenshots)."""
        return [button.text() for button, _kind, _value in self._options]

    def choose(self, text_part: str) -> None:
        """Check the first option whose text contains this (as a click on it would)."""
        for button, _kind, _value in self._options:
            if text_part in button.text():
                button.setChecked(True)
                self._chosen_by_person = True
                return
        raise LookupError(text_part)

    # -- going on -----------------------------------------------------------------------------------
    def go_on(self) -> None:
        if self._busy:
            return
        if self.pages.currentIndex() == 0:
            self.show_page(1)
            return
        chosen = self.chosen()
        if chosen is None:
            return
        kind, value = chosen
        if kind == SERVER:
            self._finish(value.config())  # type: ignore[attr-defined]
        elif kind == BUILT_IN:
            self._finish(ModelConfig(spec="bundled"))
        elif kind == FILE:
            if not self.gguf_path and not self.pick_file():
                return
            self._finish(ModelConfig(spec=f"gguf:{self.gguf_path}"))
        elif kind == DOWNLOAD:
            self._download()
        elif kind == REMOTE:
            self._remote()

    def pick_file(self) -> bool:
        """Ask for a .gguf file (tests set `gguf_path` instead)."""
        path, _ = QFileDialog.getOpenFileName(self, tr("Choose a GGUF model"), "", tr("GGUF models (*.gguf)"))
        if not path:
            return False
        self.gguf_path = path
        self._show_choices()
        self.choose(path)
        return True

    def _download(self) -> None:
        """The recommended download, through the Get-a-model dialog (its progress, Cancel and licence)."""
        report = self.report
        if report is None or report.recommended is None:
            return
        if report.recommended_path:
            self._finish(ModelConfig(spec=downloaded_spec(self.app, report.recommended)))
            return
        from ui.models.get_model_dialog import GetModelDialog

        dialog = GetModelDialog(
            self.app, self.slug or None, self, name=self.persona_name, choose=report.recommended.entry.id,
            start=True, switch_when_done=True, save_choice=False,
        )  # fmt: skip
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.chosen_spec:
            self.download_failed = False
            self._finish(ModelConfig(spec=dialog.chosen_spec))
            return
        self.download_failed = True
        self._show_choices()

    def _remote(self) -> None:
        """A provider with a key: the persona's model settings (keys to the keyring, as there), then the
        app's default and the other personas on the built-in model follow that choice."""
        if not self.slug:
            self._show_error(tr("Open a persona first: the key is set in its model settings."))
            return
        from ui.models.model_dialog import ModelSettingsDialog

        dialog = ModelSettingsDialog(self.app, self.slug, self, name=self.persona_name)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        app, slug = self.app, self.slug
        self._finish(None, read_from=lambda: app.models.model_config(app.personas.load(slug), "chat"))

    def _finish(self, model: ModelConfig | None, *, read_from=None) -> None:
        self._busy = True
        self.next_button.setEnabled(False)
        self.status.setText(tr("Saving…"))
        app, name = self.app, self.name_edit.text()

        def apply() -> list[str]:
            return apply_setup(app, name=name, model=read_from() if read_from else model)

        run_in_background(apply, while_open(self, self._applied), while_open(self, self._not_applied))

    def _applied(self, switched: list[str]) -> None:
        self._busy = False
        self.applied.emit(switched)
        self.accept()

    def _not_applied(self, message: str) -> None:
        self._busy = False
        self.next_button.setEnabled(True)
        self._show_error(message)

    def skip(self) -> None:
        """Nothing changes but that the flow does not open by itself again."""
        app = self.app
        self.skip_button.setEnabled(False)
        run_in_background(
            lambda: apply_setup(app),
            while_open(self, lambda _switched: self._skipped()),
            while_open(self, self._not_applied),
        )

    def _skipped(self) -> None:
        self.skipped.emit()
        self.reject()

    def _show_error(self, message: str) -> None:
        self.status.setText(theme.tinted(message, "error"))
