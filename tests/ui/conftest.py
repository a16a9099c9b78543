from __future__ import annotations

import os

# Set before Qt is imported anywhere: tests render offscreen, no display needed.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
