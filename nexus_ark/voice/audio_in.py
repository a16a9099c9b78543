"""The microphone: PortAudio (sounddevice) input, mono at 16 kHz, open only while listening.

open_microphone() checks that the device exists and opens nothing; start(on_chunk) opens the stream and
stop() closes it, so the device (and the OS's "microphone in use" light) is held only while listening.
The device records at its own rate when it cannot do 16 kHz (JACK, many USB microphones) and each block is
resampled on the way (audio_out.Resampler: no seams between blocks). Chunks reach on_chunk on a thread of
their own, not PortAudio's: a slow listener (voice activity detection, a transcriber) cannot make the
device overflow, and nothing of ours runs on the audio thread but a copy.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.audio_out import (
    PORTAUDIO_LOCK,
    Resampler,
    find_device,
    list_devices,
    no_device,
    portaudio,
)

log = logging.getLogger(__name__)

ChunkHandler = Callable[[np.ndarray], None]


class Microphone:
    """One input device; `start` and `stop` may be called from any thread (not from on_chunk's own)."""

    def __init__(self, sd: ModuleType, info: dict[str, Any], rate: int) -> None:
        self._sd = sd
        self._info = info
        self.device = str(info["name"])
        self.rate = rate  # the rate chunks arrive at
        self._lock = threading.Lock()
        self._stream: Any = None
        self._chunks: queue.SimpleQueue[np.ndarray | None] = queue.SimpleQueue()
        self._deliverer: threading.Thread | None = None

    @property
    def is_open(self) -> bool:
        """The device is held (between start and stop)."""
        return self._stream is not None

    def start(self, on_chunk: ChunkHandler) -> None:
        """Opens the device and calls on_chunk with each block (mono float32 at `rate`) until stop()."""
        with self._lock:
            if self._stream is not None:
                return
            device_rate = self._rate_to_open()
            resampler = Resampler(device_rate, self.rate) if device_rate != self.rate else None
            chunks = self._chunks = queue.SimpleQueue()

            def callback(indata: np.ndarray, _frames: int, _time: Any, _status: Any) -> None:
                chunks.put(indata[:, 0].copy())

            try:
                with PORTAUDIO_LOCK:  # one PortAudio stream call at a time (audio_out.py says why)
                    stream = self._sd.InputStream(
                        device=int(self._info["index"]),
                        samplerate=device_rate,
                        channels=1,
                        dtype="float32",
                        latency="low",
                        callback=callback,
                    )
                    try:
                        stream.start()
                    except self._sd.PortAudioError:
                        stream.close()
                        raise
            except self._sd.PortAudioError as exc:
                raise no_device(
                    "input",
                    notice(
                        "{device} cannot be opened ({problem})", device=repr(self.device), problem=str(exc)
                    ),
                ) from None
            self._stream = stream
            self._deliverer = threading.Thread(
                target=_deliver, args=(chunks, resampler, on_chunk), name="nexus-microphone", daemon=True
            )
            self._deliverer.start()

    def stop(self) -> None:
        """Closes the device; chunks already recorded are delivered, then on_chunk is called no more."""
        with self._lock:
            stream, self._stream = self._stream, None
            deliverer, self._deliverer = self._deliverer, None
            if stream is None:
                return
            with PORTAUDIO_LOCK:
                stream.close()  # stops the callback: nothing more is put after this
            self._chunks.put(None)
        if deliverer is not None and deliverer is not threading.current_thread():
            deliverer.join(timeout=5)

    def _rate_to_open(self) -> int:
        try:
            with PORTAUDIO_LOCK:
                self._sd.check_input_settings(
                    device=int(self._info["index"]), samplerate=self.rate, channels=1, dtype="float32"
                )
        except self._sd.PortAudioError:
            return int(self._info["default_samplerate"])
        return self.rate


def _deliver(
    chunks: queue.SimpleQueue[np.ndarray | None], resampler: Resampler | None, on_chunk: ChunkHandler
) -> None:
    failed = False
    while (chunk := chunks.get()) is not None:
        try:
            on_chunk(resampler.process(chunk) if resampler is not None else chunk)
        except Exception:  # a listener's bug must not leave the chunks piling up unread
            if not failed:
                log.exception("the microphone's listener failed; later chunks go on to it")
            failed = True


def open_microphone(device: str | None = None, rate: int = 16000) -> Microphone:
    """The input device named (a number or part of its name; None = the system's default), not yet open.
    VoiceError in words when there is none or PortAudio is missing."""
    sd = portaudio("input")
    return Microphone(sd, find_device(sd, device, "input"), rate)


def input_devices() -> list[str]:
    """The input devices, as "NAME, HOST API" (audio_out.list_devices): what open_microphone finds."""
    return list_devices("input")
