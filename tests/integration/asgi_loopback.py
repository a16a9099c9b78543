"""An ASGI app (FastAPI) served by uvicorn on 127.0.0.1 (a free port) on a daemon thread: the base of the
stand-ins for servers that are FastAPI apps on uvicorn themselves (VOICEVOX and AivisSpeech engines, many
OpenAI-compatible audio servers), so their HTTP parsing and validation answers are the real ones."""

from __future__ import annotations

import signal
import socket
import threading
import time
from typing import Any


class AsgiLoopback:
    def __init__(self, app: Any, what: str) -> None:
        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"the {what} stand-in did not start within 10 s")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.handle_exit(signal.SIGTERM, None)  # as a signal would: finish, then stop serving
        self._thread.join(10)
