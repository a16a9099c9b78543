"""A form generated from a pydantic model: the persona editor's settings pages (persona.toml).

Built from the model's fields, not by hand: a bool is a check box, an int or a float a spin box whose range is
the field's constraints, a Literal a choice, a str a line, a nested model a section (an optional one a
section that can be switched off), a list of models a small table. A field's description is its tooltip
(translated: the catalogue holds PersonaSettings' descriptions); its label comes from LABELS (a test fails
when a field has none).
"""

from __future__ import annotations

import types
from typing import Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from nexus_ark.notices import validation_message
from nexus_ark.personas.model import PersonaSettings
from ui.util.form_fields import (
    CheckEditor,
    ChoiceEditor,
    Editor,
    FloatEditor,
    IntEditor,
    TextEditor,
    label,
)
from ui.util.i18n import tr

GENERAL = "general"  # the section of the top level's own fields (name, language, description)


class ModelForm(Editor):
    """One pydantic model's fields in a form; nested models become group boxes inside it."""

    def __init__(
        self, model: type[BaseModel], path: tuple[str, ...] = (), *, fields: list[str] | None = None
    ):
        self.model = model
        self.path = path
        self.widget = QWidget()
        self.layout = QFormLayout(self.widget)
        self.layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.editors: dict[str, Editor] = {}
        self._labels: list[tuple[QLabel | QGroupBox | QCheckBox, str, FieldInfo]] = []
        for name in fields if fields is not None else list(model.model_fields):
            info = model.model_fields[name]
            editor = editor_for(info, (*path, name))
            self.editors[name] = editor
            if isinstance(editor, ModelForm | _OptionalModel):
                box = editor.widget if isinstance(editor, _OptionalModel) else QGroupBox()
                if isinstance(editor, ModelForm):
                    QVBoxLayout(box).addWidget(editor.widget)
                self.layout.addRow(box)
                self._labels.append((box, name, info))
            elif isinstance(editor, CheckEditor):
                self.layout.addRow("", editor.widget)
                self._labels.append((editor.widget, name, info))
            else:
                text = QLabel()
                text.setBuddy(editor.widget)
                self.layout.addRow(text, editor.widget)
                self._labels.append((text, name, info))
            editor.widget.setObjectName("field:" + ".".join((*path, name)))
        self.retranslate()

    def value(self) -> dict[str, Any]:
        return {name: editor.value() for name, editor in self.editors.items()}

    def set_value(self, value: Any) -> None:
        value = value or {}
        for name, editor in self.editors.items():
            if name in value:
                editor.set_value(value[name])

    def retranslate(self) -> None:
        for widget, name, info in self._labels:
            if isinstance(widget, QGroupBox):
                widget.setTitle(label(name))
            else:
                widget.setText(label(name))
            tip = tr(info.description) if info.description else ""
            widget.setToolTip(tip)
            if not isinstance(widget, QGroupBox):
                self.editors[name].widget.setToolTip(tip)
        for editor in self.editors.values():
            editor.retranslate()

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        """The editor of a field (or the nearest one holding it: a table for a row's cell)."""
        if not loc or loc[0] not in self.editors:
            return None
        editor = self.editors[str(loc[0])]
        if len(loc) > 1 and isinstance(editor, ModelForm | _OptionalModel):
            return editor.find(loc[1:]) or editor
        return editor


class _OptionalModel(Editor):
    """A model that may be absent (None): a section with a check box in its title."""

    widget: QGroupBox

    def __init__(self, model: type[BaseModel], path: tuple[str, ...]) -> None:
        self.form = ModelForm(model, path)
        self.widget = QGroupBox()
        self.widget.setCheckable(True)
        QVBoxLayout(self.widget).addWidget(self.form.widget)
        self.defaults = model().model_dump(mode="json")

    def value(self) -> dict[str, Any] | None:
        return self.form.value() if self.widget.isChecked() else None

    def set_value(self, value: Any) -> None:
        self.widget.setChecked(value is not None)
        self.form.set_value(value if value is not None else self.defaults)

    def retranslate(self) -> None:
        self.form.retranslate()

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        return self.form.find(loc)


class _Rows(Editor):
    """A list of small models (routines): one row each, one column per field, with Add and Remove."""

    def __init__(self, model: type[BaseModel], info: FieldInfo) -> None:
        self.model = model
        self.columns = list(model.model_fields)
        self.widget = QWidget()
        self.table = QTableWidget(0, len(self.columns))
        self.table.setObjectName("rows")
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)  # the longest text (a routine's task) last
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setMinimumHeight(120)
        self.add_button = QPushButton()
        self.add_button.clicked.connect(lambda: self.add_row())
        self.remove_button = QPushButton()
        self.remove_button.clicked.connect(self.remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self.widget)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.retranslate()

    def add_row(self, values: dict[str, Any] | None = None) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, name in enumerate(self.columns):
            value = (values or {}).get(name, "")
            self.table.setItem(row, column, QTableWidgetItem("" if value is None else str(value)))
        self.table.setCurrentCell(row, 0)
        return row

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows or ([self.table.currentRow()] if self.table.currentRow() >= 0 else []):
            self.table.removeRow(row)

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def value(self) -> list[dict[str, Any]]:
        rows = []
        for row in range(self.table.rowCount()):
            cells = {name: self._cell(row, column) for column, name in enumerate(self.columns)}
            if any(cells.values()):  # a row left blank is no routine
                rows.append(cells)
        return rows

    def set_value(self, value: Any) -> None:
        self.table.setRowCount(0)
        for entry in value or []:
            self.add_row(entry)
        self.table.clearSelection()
        self.table.setCurrentCell(-1, -1)

    def retranslate(self) -> None:
        self.table.setHorizontalHeaderLabels([label(name) for name in self.columns])
        for column, name in enumerate(self.columns):
            description = self.model.model_fields[name].description
            header = self.table.horizontalHeaderItem(column)
            if header is not None and description:
                header.setToolTip(tr(description))
        self.add_button.setText(tr("Add"))
        self.remove_button.setText(tr("Remove"))


def _is_model(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_section(info: FieldInfo) -> bool:
    """A nested model (optional or not): a section of its own rather than a line in a form."""
    args = [a for a in get_args(info.annotation) if a is not type(None)]
    return _is_model(info.annotation) or (
        get_origin(info.annotation) in (Union, types.UnionType) and len(args) == 1 and _is_model(args[0])
    )


def editor_for(info: FieldInfo, path: tuple[str, ...]) -> Editor:
    """The widget for a field, chosen by its type."""
    annotation = info.annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is bool:
        return CheckEditor()
    if annotation is int:
        return IntEditor(info)
    if annotation is float:
        return FloatEditor(info)
    if annotation is str:
        return TextEditor(info)
    if origin is Literal:
        return ChoiceEditor(args)
    if _is_model(annotation):
        return ModelForm(annotation, path)
    if origin in (Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and _is_model(inner[0]):
            return _OptionalModel(inner[0], path)
    if origin is list and len(args) == 1 and _is_model(args[0]):
        return _Rows(args[0], info)
    raise TypeError(f"no editor for {'.'.join(path)}: {annotation!r}")


def diff(new: Any, old: Any) -> dict[str, Any]:
    """What changed from `old` to `new` (nested dicts): only changed leaves; a list or None whole."""
    changes: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key) if isinstance(old, dict) else None
        if isinstance(value, dict) and isinstance(before, dict):
            nested = diff(value, before)
            if nested:
                changes[key] = nested
        elif value != before:
            changes[key] = value
    return changes


class SettingsForm:
    """PersonaSettings as sections (the top level's own fields, then one per nested model), each a
    scrollable page."""

    def __init__(self, model: type[BaseModel] = PersonaSettings) -> None:
        self.model = model
        own = [name for name, info in model.model_fields.items() if not _is_section(info)]
        self.sections: dict[str, Editor] = {GENERAL: ModelForm(model, (), fields=own)}
        for name, info in model.model_fields.items():
            if name not in own:
                self.sections[name] = editor_for(info, (name,))
        self.pages: dict[str, QScrollArea] = {}
        for key, editor in self.sections.items():
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.addWidget(editor.widget)
            layout.addStretch(1)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            scroll.setObjectName(f"section:{key}")
            self.pages[key] = scroll
        self._initial: dict[str, Any] = {}

    def set_settings(self, settings: BaseModel) -> None:
        data = settings.model_dump(mode="json")
        for key, editor in self.sections.items():
            editor.set_value(data if key == GENERAL else data.get(key))
        self._loaded = data
        self._initial = self.values()

    def values(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, editor in self.sections.items():
            if key == GENERAL:
                result.update(editor.value())
            else:
                result[key] = editor.value()
        return result

    def changes(self) -> dict[str, Any]:
        """What the person changed, nested like persona.toml. A section switched on is written with what
        differs from its defaults only."""
        values = self.values()
        changes = diff(values, self._initial)
        for key, editor in self.sections.items():
            if isinstance(editor, _OptionalModel) and self._initial.get(key) is None and values.get(key):
                changes[key] = diff(values[key], editor.defaults)
        return changes

    def problems(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Validate what the form holds as a whole: (field location, what is wrong) for each problem."""
        merged = {**self._loaded, **self.values()}
        try:
            self.model.model_validate(merged)
        except ValidationError as exc:
            return [(tuple(e["loc"]), validation_message(e)) for e in exc.errors()]
        return []

    def section_of(self, loc: tuple[str | int, ...]) -> str:
        return str(loc[0]) if loc and loc[0] in self.sections else GENERAL

    def find(self, loc: tuple[str | int, ...]) -> Editor | None:
        section = self.section_of(loc)
        editor = self.sections[section]
        if section == GENERAL:
            return editor.find(loc) if isinstance(editor, ModelForm) else editor
        rest = loc[1:]
        if rest and isinstance(editor, ModelForm | _OptionalModel):
            return editor.find(rest) or editor
        return editor

    def all_editors(self) -> list[Editor]:
        """Every editor, sections and nested forms included (to clear the marks of refused values)."""
        found: list[Editor] = []

        def walk(editor: Editor) -> None:
            found.append(editor)
            form = editor.form if isinstance(editor, _OptionalModel) else editor
            if isinstance(form, ModelForm):
                for child in form.editors.values():
                    walk(child)

        for section in self.sections.values():
            walk(section)
        return found

    def retranslate(self) -> None:
        for key, editor in self.sections.items():
            if isinstance(editor, _OptionalModel):
                editor.widget.setTitle(label(key))
                description = self.model.model_fields[key].description
                editor.widget.setToolTip(tr(description) if description else "")
            editor.retranslate()
