"""Help > About: the version, build date and commit, the data folder, and the licences the app ships with
(the bundled models first, then Nexus Ark, Qt and every library). The build info (a checkout asks git) and
the licence texts are read off the UI thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from nexus_ark import about
from ui.util.i18n import LanguageTexts, tr
from ui.util.tasks import run_in_background, while_open

THIRD_PARTY = "third-party"
KIND_ROLE = Qt.ItemDataRole.UserRole + 1


class AboutDialog(QDialog):
    """Every text is set through self.texts: a language switch (from the settings, left open beside this
    dialog) shows them all again in the new language."""

    def __init__(self, data_dir: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.texts = LanguageTexts()
        self.texts.follow(lambda: self.setWindowTitle(tr("About Nexus Ark")))
        self.info: about.BuildInfo | None = None  # read on a worker: a checkout asks git for its commit
        self._texts: dict[str, str] = {}

        self.title = title = QLabel("<b>Nexus Ark</b>")
        title.setObjectName("aboutTitle")
        tagline = QLabel()
        self.texts.follow(lambda: tagline.setText(tr("A companion that lives on your own computer.")))
        self.data_dir = data_dir
        self.details = QLabel()
        self.texts.follow(lambda: self.details.setText(self._details()))
        self.details.setObjectName("aboutDetails")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.licences = QListWidget()
        self.licences.setObjectName("licenceList")
        self.licences.setWordWrap(True)  # "SmolLM2-135M-Instruct (bundled chat model) — Apache-2.0" in full
        for licence in (*about.MODEL_LICENCES, *about.OTHER_LICENCES):
            item = QListWidgetItem(f"{licence.title} — {licence.spdx}")
            item.setData(KIND_ROLE, licence.file)
            self.licences.addItem(item)
        libraries = QListWidgetItem()
        self.texts.follow(lambda: libraries.setText(tr("Libraries (third-party licences)")))
        libraries.setData(KIND_ROLE, THIRD_PARTY)
        self.licences.addItem(libraries)
        self.licence_text = QPlainTextEdit()
        self.licence_text.setObjectName("licenceText")
        self.licence_text.setReadOnly(True)
        self.licence_text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.licences.currentItemChanged.connect(self._show_licence)

        splitter = QSplitter()
        splitter.addWidget(self.licences)
        splitter.addWidget(self.licence_text)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([300, 520])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close = buttons.button(QDialogButtonBox.StandardButton.Close)
        self.texts.follow(
            lambda: close.setText(tr("Close"))
        )  # Qt's own word is English without its translations
        buttons.rejected.connect(self.reject)
        licences_label = QLabel()
        self.texts.follow(lambda: licences_label.setText(tr("Licences")))

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(tagline)
        layout.addWidget(self.details)
        layout.addWidget(licences_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)
        self.resize(820, 560)
        self.licences.setCurrentRow(0)
        run_in_background(
            about.build_info, while_open(self, self._show_info), while_open(self, self._no_info)
        )

    def retranslate(self) -> None:
        self.texts.retranslate()

    def _show_info(self, info: about.BuildInfo) -> None:
        self.info = info
        self.title.setText(f"<b>Nexus Ark {info.version}</b>")
        self.details.setText(self._details())

    def _no_info(self, message: str) -> None:  # build_info falls back to the source version: not expected
        self.details.setText(message)

    def _details(self) -> str:
        if self.info is None:
            details = [tr("Loading…")]
            if self.data_dir is not None:
                details.append(tr("Data folder: {path}", path=str(self.data_dir)))
            return "\n".join(details)
        built = (
            tr("Running from source")
            if self.info.from_source
            else tr("Built {date}", date=self.info.build_date)
        )
        details = [
            tr("Version {version}", version=self.info.version),
            built,
            tr("Commit {commit}", commit=self.info.commit or tr("unknown")),
        ]
        if self.data_dir is not None:
            details.append(tr("Data folder: {path}", path=str(self.data_dir)))
        return "\n".join(details)

    def _show_licence(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is None:
            return
        kind = item.data(KIND_ROLE)
        if kind in self._texts:
            self.licence_text.setPlainText(self._texts[kind])
            return
        self.licence_text.setPlainText(tr("Loading…"))
        run_in_background(  # About may be closed (and deleted) before a long licence is read
            lambda: self._read(kind),
            while_open(self, lambda text: self._loaded(kind, text)),
            while_open(self, lambda message: self._loaded(kind, message)),
        )

    @staticmethod
    def _read(kind: str) -> str:
        if kind == THIRD_PARTY:
            return about.third_party_text()
        licence = next(li for li in (*about.MODEL_LICENCES, *about.OTHER_LICENCES) if li.file == kind)
        return about.licence_text(licence)

    def _loaded(self, kind: str, text: str) -> None:
        self._texts[kind] = text
        current = self.licences.currentItem()
        if current is not None and current.data(KIND_ROLE) == kind:
            self.licence_text.setPlainText(text)
