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


def why_short(version: SoulVersion) -> str:
    """The reason as the list shows it beside who: a proposal's in the persona's own words only, and
    nothing where it would say what "who" says already."""
    reason = version.reason.strip()
    match = _PATTERNS[2][1].match(reason)
    if version.author == "proposal" and match is not None:
        return match.group("reason")
    said = why(version)
    return "" if said.casefold() == who(version).casefold() else said


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


# A token: a run of Latin letters or digits, one character of a script written without spaces (Japanese,
# Chinese, Korean), a run of spaces, or any other single character.
_TOKEN = re.compile(r"[^\W\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+|\s+|.", re.DOTALL)
WORDS_BELOW = 0.25  # two lines that share less than this are marked whole, not word by word


def _words(a: str, b: str, colours: Colours) -> tuple[str, str]:
    """Two versions of one line with the words that differ tinted more (a word in English, a character in
    Japanese, which has no spaces; changes a space apart are tinted as one)."""
    left, right = _TOKEN.findall(a), _TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    if matcher.ratio() < WORDS_BELOW:
        return html.escape(a), html.escape(b)
    marked_left: list[tuple[str, bool]] = []
    marked_right: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        marked_left += [(token, tag != "equal") for token in left[i1:i2]]
        marked_right += [(token, tag != "equal") for token in right[j1:j2]]
    return _spans(marked_left, colours.removed_strong), _spans(marked_right, colours.added_strong)


def _spans(tokens: list[tuple[str, bool]], background: str) -> str:
    """Rich text of a line's tokens, the changed ones on `background` (a space between two is too)."""
    changed = [flag for _, flag in tokens]
    for index in range(1, len(tokens) - 1):
        if not changed[index] and tokens[index][0].isspace() and changed[index - 1] and changed[index + 1]:
            changed[index] = True
    out: list[str] = []
    run: list[str] = []
    for index, (token, _) in enumerate(tokens):
        run.append(token)
        last = index == len(tokens) - 1
        if last or changed[index + 1] != changed[index]:
            text = html.escape("".join(run))
            out.append(f"<span style='background:{background}'>{text}</span>" if changed[index] else text)
            run = []
    return "".join(out)


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
