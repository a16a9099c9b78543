"""What a model server's failure says to a person: a sentence and the server's own words, never the client
library's exception class (a person cannot act on "ReadTimeout" or "ConnectError")."""

from __future__ import annotations

import httpx

from nexus_ark.providers.failures import Origin, translate

ORIGIN = Origin(server="http://127.0.0.1:8000/v1", model="local")


class OddLibraryError(Exception):
    """An error of a kind the translation has no rule for."""


def test_a_timeout_is_said_without_its_class() -> None:
    said = str(translate(httpx.ReadTimeout("timed out"), ORIGIN))
    assert said == "http://127.0.0.1:8000/v1 did not answer in time."


def test_an_unknown_failure_keeps_the_librarys_words_without_its_class() -> None:
    said = str(translate(OddLibraryError("the model file is busy"), ORIGIN))
    assert said == "http://127.0.0.1:8000/v1 failed: the model file is busy"
    assert "OddLibraryError" not in said
