"""Sentences the core hands to a person that are not errors (a card imported with notes, ...): each is
the English sentence itself (a str: the CLI prints it, logs and tests compare it) and keeps its template
and values, so a window in another language shows it translated (the template is the catalogue key; the
UI's translation test collects every `notice("...")` template here)."""

from __future__ import annotations


class Notice(str):
    template: str
    values: dict[str, object]

    def __new__(cls, template: str, **values: object) -> Notice:
        made = super().__new__(cls, template.format(**values))
        made.template = template
        made.values = values
        return made


def notice(template: str, **values: object) -> Notice:
    return Notice(template, **values)
