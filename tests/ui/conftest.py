from __future__ import annotations

import os

# Set before Qt is imported anywhere: tests render offscreen, no display needed.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The loopback model servers, shared with the integration tests.
from tests.integration.conftest import llama_server, ollama_wire, served, shared_llama  # noqa: F401
