"""The speaker: audio played through PortAudio (sounddevice), queued, stoppable within one block.

One OutputStream per AudioOutput, from open_output() to close(); its callback (PortAudio's own thread)
copies queued samples out block by block and writes silence when nothing is queued, and after a few
seconds of silence it pauses the stream (play() starts it again). play() resamples once,
to the device's rate, on the caller's thread, so the callback only copies. stop() empties the queue under
the callback's lock: the next block the callback writes is silence (a block is the host's period, about
5-20 ms; the device's own buffer, `latency`, still plays out after it).

sounddevice is imported when a device is opened, not when this module is: a machine without PortAudio can
still import the voice part, and opening a device there says what is missing (VoiceError), never a traceback.

PortAudio is not thread-safe, and its JACK host API shows it: every stream's open, start, stop and close
waits on one condition variable the JACK thread signals, with no check of what it waited for, and an open
or close hands its stream over in a single slot. Two of them at once from two threads (an output closing on
a worker while the next one opens, a paused stream restarting while the microphone opens) lose a wake-up
and wait ten minutes, or fail ("Insufficient memory", a host error). So every such call in this process
goes through PORTAUDIO_LOCK, one at a time. It is never taken under an AudioOutput's own lock: stopping a
stream waits for its callback, which takes that one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

import numpy as np

from nexus_ark.notices import notice
from nexus_ark.voice.base import Audio, VoiceError

log = logging.getLogger(__name__)

DeviceKind = Literal["input", "output"]

# One PortAudio stream call (open, start, stop, close, a format check) at a time in this process (see above).
PORTAUDIO_LOCK = threading.Lock()


def portaudio(kind: DeviceKind) -> ModuleType:
    """The sounddevice module, or VoiceError naming what is missing (PortAudio is a system library)."""
    try:
        import sounddevice
    except OSError as exc:  # sounddevice raises OSError when libportaudio cannot be loaded
        raise no_device(
            kind,
            notice(
                "the PortAudio library is missing ({problem}); on Debian or Ubuntu install libportaudio2",
                problem=str(exc),
            ),
        ) from None
    return sounddevice


def no_device(kind: DeviceKind, problem: str) -> VoiceError:
    if kind == "output":
        return VoiceError(notice("No audio output device: {problem}", problem=problem))
    return VoiceError(notice("No audio input device: {problem}", problem=problem))


def find_device(sd: ModuleType, device: str | None, kind: DeviceKind) -> dict[str, Any]:
    """PortAudio's record of the device named (a number, or part of a name) or the default one."""
    wanted: int | str | None = int(device) if device is not None and device.isdigit() else device
    channels = "max_output_channels" if kind == "output" else "max_input_channels"
    names = [str(d["name"]) for d in sd.query_devices() if d[channels] > 0]
    try:
        info: dict[str, Any] = sd.query_devices(wanted, kind=kind)
    except (ValueError, sd.PortAudioError) as exc:
        if not names:
            raise no_device(kind, notice("no sound device was found")) from None
        if device is None:
            raise no_device(kind, notice("no default device ({problem})", problem=str(exc))) from None
        raise no_device(
            kind, notice("{device} is not one of: {devices}", device=repr(device), devices=", ".join(names))
        ) from None
    return info


def list_devices(kind: DeviceKind) -> list[str]:
    """Every device PortAudio lists for `kind`, as "NAME, HOST API": the words open_output/open_microphone
    find exactly that one device by (a name alone may repeat under another host API). VoiceError in words
    when PortAudio is missing. It asks the sound system: call it off the UI thread."""
    sd = portaudio(kind)
    channels = "max_output_channels" if kind == "output" else "max_input_channels"
    apis = [str(api["name"]) for api in sd.query_hostapis()]
    return [f"{d['name']}, {apis[d['hostapi']]}" for d in sd.query_devices() if d[channels] > 0]


def output_devices() -> list[str]:
    """The output devices (list_devices): what Settings → Voice offers and config.toml [voice] names."""
    return list_devices("output")


def resample(samples: np.ndarray, rate: int, to_rate: int) -> np.ndarray:
    """Mono float32 `samples` at `rate` Hz, at `to_rate` Hz: numpy linear interpolation, after a
    windowed-sinc low-pass when going down (so nothing above the new Nyquist folds back)."""
    samples = np.asarray(samples, dtype=np.float32)
    if rate == to_rate or len(samples) == 0:
        return samples
    if to_rate < rate:
        samples = np.convolve(samples, _low_pass(to_rate / rate), mode="same")
    where = np.arange(round(len(samples) * to_rate / rate)) * (rate / to_rate)
    return np.interp(where, np.arange(len(samples)), samples).astype(np.float32)


class Resampler:
    """Resamples a stream chunk by chunk with no seam between chunks: the filter's history and the
    fractional read position carry over (a microphone's blocks, at the device's rate, to 16 kHz).
    The low-pass delays the stream by half its length (31 samples at the input's rate)."""

    def __init__(self, rate: int, to_rate: int) -> None:
        self.step = rate / to_rate  # input samples per output sample
        self.taps = _low_pass(to_rate / rate) if to_rate < rate else None
        self.history = np.zeros(0 if self.taps is None else len(self.taps) - 1, dtype=np.float32)
        self.buffer = np.zeros(0, dtype=np.float32)
        self.position = 0.0  # where the next output sample is read, in `buffer`'s samples

    def process(self, chunk: np.ndarray) -> np.ndarray:
        chunk = np.asarray(chunk, dtype=np.float32)
        if self.taps is not None:
            padded = np.concatenate([self.history, chunk])
            self.history = padded[len(padded) - len(self.history) :]
            chunk = np.convolve(padded, self.taps, mode="valid").astype(np.float32)
        self.buffer = np.concatenate([self.buffer, chunk])
        # Interpolation reads the sample after each position: positions up to the buffer's last but one.
        last = len(self.buffer) - 2
        count = int((last - self.position) // self.step) + 1 if last >= self.position else 0
        where = self.position + self.step * np.arange(count)
        out = np.interp(where, np.arange(len(self.buffer)), self.buffer).astype(np.float32)
        self.position += count * self.step
        used = int(self.position)
        self.buffer = self.buffer[used:]
        self.position -= used
        return out


def _low_pass(cutoff: float, taps: int = 63) -> np.ndarray:
    """A Hann-windowed sinc low-pass at `cutoff` × the input's Nyquist (a little under, for the slope)."""
    n = np.arange(taps) - (taps - 1) / 2
    kernel = 0.9 * cutoff * np.sinc(0.9 * cutoff * n) * np.hanning(taps)
    return (kernel / kernel.sum()).astype(np.float32)


@dataclass(eq=False)
class Playback:
    """One play() call's audio on its way out: how much has been played, when it started and ended.
    The callback fills these in; `started` and `done` are set when its first block goes out and when
    its last block went out or stop() dropped it."""

    samples: np.ndarray  # at the device's rate
    rate: int
    played: int = 0  # frames handed to the device so far
    started_at: float | None = None  # time.monotonic() at the callback that wrote its first frames
    ended_at: float | None = None  # ... that wrote its last frames, or stop() dropped it
    stopped: bool = False  # stop() cut it short (or dropped it before it started)
    started: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate

    @property
    def fraction(self) -> float:
        """The share of it played, 0..1."""
        return min(1.0, self.played / len(self.samples)) if len(self.samples) else 1.0


class AudioOutput:
    """An output stream and its queue. Thread-safe: play/stop/wait from any thread.

    The stream pauses itself after `pause_after` seconds with nothing to play (an open stream costs the
    callback's wake-ups, ~100 a second, and keeps the device busy) and play() starts it again."""

    def __init__(self, sd: ModuleType, info: dict[str, Any], pause_after: float = 3.0) -> None:
        self._sd = sd
        self.device = str(info["name"])
        self.rate = int(info["default_samplerate"])
        self._lock = threading.Lock()
        self._queue: deque[Playback] = deque()
        self._current: Playback | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._stop_asked: float | None = None
        self.silenced_at: float | None = None  # the callback's time when it first wrote silence after stop()
        self.blocks = 0  # callbacks run (the bench counts them)
        self._pause_frames = int(pause_after * self.rate)
        self._idle_frames = 0  # silence written since the last audio
        self._paused = False  # the callback stopped the stream; play() starts it again
        self._restart = threading.Lock()
        with PORTAUDIO_LOCK:
            self._stream = sd.OutputStream(
                device=int(info["index"]),
                samplerate=self.rate,
                channels=min(2, int(info["max_output_channels"])),  # mono copied to both sides
                dtype="float32",
                latency="low",
                callback=self._callback,
            )
            try:
                self._stream.start()
            except sd.PortAudioError:
                self._stream.close()
                raise

    @property
    def latency(self) -> float:
        """Seconds between a block the callback writes and its sound (the device's buffer)."""
        return float(self._stream.latency)

    @property
    def playing(self) -> bool:
        return not self._idle.is_set()

    def play(self, audio: Audio) -> Playback:
        """Queues `audio` after whatever is queued (gapless) and returns at once."""
        playback = Playback(resample(audio.samples, audio.rate, self.rate), self.rate)
        with self._lock:
            if self._stream.closed:
                raise VoiceError(notice("The audio output {device} is closed.", device=self.device))
            self._queue.append(playback)
            self._idle.clear()
        self.wake()
        return playback

    def wake(self) -> None:
        """Starts a paused stream again, on a thread of its own (it takes some 50 ms on JACK here), and
        returns at once: SpeechQueue calls it when a sentence starts being synthesized, so the stream is
        running by the time the audio comes; play() calls it too."""
        with self._lock:
            self._idle_frames = 0
            paused, self._paused = self._paused, False
        if paused:
            threading.Thread(target=self._resume, name="nexus-audio-resume", daemon=True).start()

    def _resume(self) -> None:
        with self._restart:  # not under _lock: stopping waits for the stream to end, which takes it
            try:
                with PORTAUDIO_LOCK:
                    if not self._stream.closed:
                        self._stream.stop()  # the callback ended it; a stream starts again from stopped
                        self._stream.start()
            except self._sd.PortAudioError:
                log.warning("the audio output %r could not start again", self.device, exc_info=True)
                self.stop()  # what was queued will not play: waiters are told it ended

    def stop(self) -> None:
        """Silence at the next block: the playing audio is cut and the queue emptied."""
        now = time.monotonic()
        with self._lock:
            dropped = [self._current] if self._current is not None else []
            dropped += self._queue
            self._queue.clear()
            self._current = None
            self._stop_asked = now if dropped else None
            self.silenced_at = None if dropped else now  # nothing was playing: silent already
            for playback in dropped:
                playback.stopped = True
                playback.ended_at = now
                playback.done.set()
            self._idle.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once everything queued has been played (or stopped); False if `timeout` passed first."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        self.stop()
        with self._restart, PORTAUDIO_LOCK:  # not under _lock: closing waits for a running callback
            self._stream.close()

    def _callback(self, outdata: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
        now = time.monotonic()
        self.blocks += 1
        filled = 0
        with self._lock:
            while filled < frames:
                if self._current is None:
                    if not self._queue:
                        break
                    self._current = self._queue.popleft()
                playing = self._current
                if playing.started_at is None:
                    playing.started_at = now
                    playing.started.set()
                count = min(frames - filled, len(playing.samples) - playing.played)
                outdata[filled : filled + count] = playing.samples[
                    playing.played : playing.played + count, None
                ]
                playing.played += count
                filled += count
                if playing.played >= len(playing.samples):
                    playing.ended_at = now
                    playing.done.set()
                    self._current = None
            if self._current is None and not self._queue:
                self._idle.set()
            if self._stop_asked is not None and filled == 0:
                self.silenced_at = now
                self._stop_asked = None
            self._idle_frames = 0 if filled else self._idle_frames + frames
            pause = self._idle_frames >= self._pause_frames and self._current is None and not self._queue
            self._paused = self._paused or pause
        outdata[filled:] = 0
        if pause:
            raise self._sd.CallbackStop


def open_output(device: str | None = None, *, pause_after: float = 3.0) -> AudioOutput:
    """The output device named (a number or part of its name; None = the system's default), opened and
    running. VoiceError in words when there is none, PortAudio is missing, or it cannot be opened."""
    sd = portaudio("output")
    info = find_device(sd, device, "output")
    try:
        return AudioOutput(sd, info, pause_after)
    except sd.PortAudioError as exc:
        raise no_device(
            "output",
            notice("{device} cannot be opened ({problem})", device=repr(info["name"]), problem=str(exc)),
        ) from None
