"""What the soul's history window says about a version (when, who, why, in the person's language) and how it
draws a comparison of two versions: the changed lines on a tint of the text background (added, removed),
the changed words inside a changed line tinted more, and a + or − before each line, so the difference is
not told by colour alone. Plain functions: the window calls them on the UI thread with texts it holds."""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtGui import QPalette

from nexus_ark.soul.records import SoulVersion
from ui.util import theme
from ui.util.i18n import N_, tr

AUTHORS: dict[str, str] = {
    "first": N_("When history began"),
    "editor": N_("You, in the editor"),
    "proposal": N_("Accepted proposal"),
    "outside": N_("Changed outside Nexus Ark"),
    "restore": N_("Restored"),
    "import": N_("Imported"),
}

# The reasons the core writes (nexus_ark/soul/keeper.py), stored with their values filled in: matched back
# to their template here so they are shown in the person's language. Any other reason is shown as written.
REASONS = (
    "changed outside Nexus Ark",
    "restored version {id}",
    "accepted proposal {id}: {reason}",
)
CONTEXT_LINES = 3  # unchanged lines kept around each change; longer unchanged runs are folded
ADDED, REMOVED = "#2e9e4f", "#d0453a"  # tints mixed into the text background


def who(version: SoulVersion) -> str:
    return tr(AUTHORS[version.author]) if version.author in AUTHORS else version.author


def _template_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(f"(?P<{part}>.+?)" if index % 2 else re.escape(part) for index, part in enumerate(parts))
    return re.compile(f"^{regex}$", re.DOTALL)


_PATTERNS = [(template, _template_pattern(template)) for template in REASONS]


def why(version: SoulVersion) -> str:
    """The version's reason in the person's language (a proposal's reason in the persona's own words)."""
    reason = version.reason.strip()
    for template, pattern in _PATTERNS:
        match = pattern.match(reason)
        if match is not None:
            return tr(template, **match.groupdict())
    return tr(reason) if reason else ""


def when(version: SoulVersion) -> str:
    """The local date and time it was made."""
    try:
        moment = datetime.fromisoformat(version.created_at)
    except ValueError:
        return version.created_at
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def title(version: SoulVersion) -> str:
    """A version's name, "Version 3": its number, as the core's reasons and `nexus-ark soul` say it."""
    return tr("Version {n}", n=version.id)


def choice_text(version: SoulVersion) -> str:
    return tr("Version {n} · {when} · {who}", n=version.id, when=when(version), who=who(version))


# -- comparing two versions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    html: str
    added: int  # lines
    removed: int


@dataclass(frozen=True)
class Colours:
    text: str
    muted: str
    added: str
    removed: str
    added_strong: str
    removed_strong: str
    folded: str

    @classmethod
    def of(cls, palette: QPalette) -> Colours:
        base = palette.color(QPalette.ColorRole.Base)
        dark = base.lightness() < 128
        share, strong = (0.28, 0.5) if dark else (0.16, 0.34)
        return cls(
            text=palette.color(QPalette.ColorRole.Text).name(),
            muted=theme.colour("muted", palette).name(),
            added=theme.mix(base, ADDED, share).name(),
            removed=theme.mix(base, REMOVED, share).name(),
            added_strong=theme.mix(base, ADDED, strong).name(),
            removed_strong=theme.mix(base, REMOVED, strong).name(),
            folded=palette.color(QPalette.ColorRole.AlternateBase).name(),
        )


def compare(old: str, new: str, palette: QPalette) -> Comparison:
    """The changes from `old` to `new`, line by line, as rich text for a QTextBrowser."""
    colours = Colours.of(palette)
    before, after = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    rows: list[str] = []
    added = removed = 0
    groups = list(matcher.get_grouped_opcodes(CONTEXT_LINES))
    if not groups or all(tag == "equal" for group in groups for tag, *_ in group):
        return Comparison(_table([_note(tr("The two versions say the same."), colours)], colours), 0, 0)
    previous_end = 0
    for group in groups:
        start = group[0][1]
        if start > previous_end:
            rows.append(_note(tr("… {count} unchanged lines", count=start - previous_end), colours))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [_row(" ", html.escape(line), None, colours) for line in before[i1:i2]]
                continue
            old_lines, new_lines = before[i1:i2], after[j1:j2]
            removed += len(old_lines)
            added += len(new_lines)
            if tag == "replace" and len(old_lines) == len(new_lines):
                for a, b in zip(old_lines, new_lines, strict=True):
                    marked_a, marked_b = _words(a, b, colours)
                    rows.append(_row("−", marked_a, colours.removed, colours))
                    rows.append(_row("+", marked_b, colours.added, colours))
                continue
            rows += [_row("−", html.escape(line), colours.removed, colours) for line in old_lines]
            rows += [_row("+", html.escape(line), colours.added, colours) for line in new_lines]
        previous_end = group[-1][2]
    if previous_end < len(before):
        rows.append(_note(tr("… {count} unchanged lines", count=len(before) - previous_end), colours))
    return Comparison(_table(rows, colours), added, removed)


def _words(a: str, b: str, colours: Colours) -> tuple[str, str]:
    """Two versions of one line with what differs between them tinted more (by character, so a changed
    word in Japanese, which has no spaces, is found too)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left: list[str] = []
    right: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            left.append(html.escape(a[i1:i2]))
            right.append(html.escape(b[j1:j2]))
            continue
        if i2 > i1:
            left.append(f"<span style='background:{colours.removed_strong}'>{html.escape(a[i1:i2])}</span>")
        if j2 > j1:
            right.append(f"<span style='background:{colours.added_strong}'>{html.escape(b[j1:j2])}</span>")
    return "".join(left), "".join(right)


def _row(sign: str, text: str, background: str | None, colours: Colours) -> str:
    fill = f" bgcolor='{background}'" if background else ""
    return (
        f"<tr><td width='18' align='center'{fill} style='color:{colours.text}'>{sign}</td>"
        f"<td{fill} style='color:{colours.text}; white-space:pre-wrap'>{text or '&nbsp;'}</td></tr>"
    )


def _note(text: str, colours: Colours) -> str:
    return (
        f"<tr><td></td><td bgcolor='{colours.folded}' style='color:{colours.muted}'>"
        f"{html.escape(text)}</td></tr>"
    )


def _table(rows: list[str], colours: Colours) -> str:
    return (
        f"<table width='100%' cellspacing='0' cellpadding='2' style='font-family:monospace; "
        f"color:{colours.text}'>{''.join(rows)}</table>"
    )
