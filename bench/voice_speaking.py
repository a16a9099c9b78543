"""Speaking a streamed reply: how soon the first sentence is heard, how soon Stop is silence, and what
playing costs the CPU. Against the raw libraries in the same run.

  first audio   a reply streamed in 3-character chunks into SpeechQueue: from the feed() that completes
                the first sentence to the callback that writes its first audio block
                vs  the engine called directly on that sentence, then AudioOutput.play (no queue)
  stop          from stop() to the first callback that writes silence (measured at the callback), through
                SpeechQueue.stop() and through AudioOutput.stop(), at random points of a playing sentence
  resume        from play() on an output whose idle stream paused itself to its first block out
  CPU           process CPU time while AudioOutput plays for some seconds, idle before its stream
                pauses, and paused   vs  a raw sounddevice OutputStream whose callback writes the samples

The device is the JACK dummy-driver server the tests use (tests/null_sound.py: 48 kHz, 512-frame period,
a block every 10.7 ms), started here unless JACK_DEFAULT_SERVER names one; the server's own CPU is not
counted. Japanese is Open JTalk (Mei), English is Piper (joe), speed 1.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m bench.voice_speaking [--runs 10] [--stops 30]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from tests.null_sound import start_null_sound

start_null_sound()  # before sounddevice is imported: PortAudio lists the devices at its import

from nexus_ark.voice.audio_out import AudioOutput, Playback, open_output, portaudio, resample  # noqa: E402
from nexus_ark.voice.base import Audio, VoiceSettings  # noqa: E402
from nexus_ark.voice.engines import OpenJTalkEngine, PiperEngine  # noqa: E402
from nexus_ark.voice.speaking import SpeechQueue  # noqa: E402

REPLIES = {
    "ja": "こんにちは、今日も来てくれてうれしいです。昨日の話の続きを聞かせてください。",
    "en": "Hello again, it is good to see you today. Tell me how the rest of your week went.",
}


class Recorded:
    """The real output, keeping each Playback so its first block's time can be read."""

    def __init__(self, output: AudioOutput) -> None:
        self.output = output
        self.playbacks: list[Playback] = []

    def play(self, audio: Audio) -> Playback:
        playback = self.output.play(audio)
        self.playbacks.append(playback)
        return playback

    def stop(self) -> None:
        self.output.stop()

    def wake(self) -> None:
        self.output.wake()


def wait_for(condition: Callable[[], object], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the device did not answer")
        time.sleep(0.0005)


def first_audio_queue(synthesize: Callable[[str], Audio], output: AudioOutput, reply: str) -> float:
    recorded = Recorded(output)
    queue = SpeechQueue(synthesize, recorded)
    first_end = len(reply.split("。")[0]) + 1 if "。" in reply else reply.index(". ") + 2
    ended = 0.0
    for start in range(0, len(reply), 3):
        queue.feed(reply[start : start + 3])
        if not ended and start + 3 >= first_end:
            ended = time.monotonic()
    wait_for(lambda: recorded.playbacks and recorded.playbacks[0].started_at is not None)
    took = float(recorded.playbacks[0].started_at or 0.0) - ended
    queue.stop()
    queue.close()
    output.wait(5)
    return took


def first_audio_raw(synthesize: Callable[[str], Audio], output: AudioOutput, sentence: str) -> float:
    asked = time.monotonic()
    playback = output.play(synthesize(sentence))
    wait_for(lambda: playback.started_at is not None)
    took = float(playback.started_at or 0.0) - asked
    output.stop()
    return took


def stop_latency(output: AudioOutput, speech: Audio, through_queue: bool) -> float:
    queue = SpeechQueue(lambda _text: speech, output) if through_queue else None
    if queue is not None:
        queue.feed("a sentence to cut. ")
    else:
        output.play(speech)
    wait_for(lambda: output.playing and output.blocks > 0)
    time.sleep(random.uniform(0.05, 0.8))  # somewhere in the middle of it
    asked = time.monotonic()
    if queue is not None:
        queue.stop()
    else:
        output.stop()
    wait_for(lambda: output.silenced_at is not None, timeout=2)
    took = float(output.silenced_at or 0.0) - asked
    if queue is not None:
        queue.close()
    return took


def cpu_share(seconds: float, run: Callable[[], None]) -> float:
    """Process CPU seconds per wall second while `run`'s sound plays for `seconds`."""
    cpu, wall = time.process_time(), time.monotonic()
    run()
    time.sleep(seconds)
    return (time.process_time() - cpu) / (time.monotonic() - wall)


def raw_stream_cpu(samples: np.ndarray, rate: int, seconds: float) -> float:
    sd = portaudio("output")
    position = [0]

    def callback(outdata: np.ndarray, frames: int, _time: object, _status: object) -> None:
        chunk = samples[position[0] : position[0] + frames]
        outdata[: len(chunk), 0] = chunk
        outdata[len(chunk) :] = 0
        position[0] += len(chunk)

    stream = sd.OutputStream(samplerate=rate, channels=1, dtype="float32", latency="low", callback=callback)
    with stream:
        share = cpu_share(seconds, lambda: None)
    return share


def resume_latency(speech: Audio, runs: int) -> list[float]:
    """From play() on an output that paused its idle stream to its first block out."""
    output = open_output(pause_after=0.2)
    took = []
    try:
        for _ in range(runs):
            time.sleep(0.5)  # paused by now
            asked = time.monotonic()
            playback = output.play(speech)
            wait_for(lambda: playback.started_at is not None)  # noqa: B023 - waited for at once
            took.append(float(playback.started_at or 0.0) - asked)
            output.stop()
    finally:
        output.close()
    return took


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    median = statistics.median(ordered)
    return f"p50 {median * 1000:6.1f}  p95 {p95 * 1000:6.1f}  max {ordered[-1] * 1000:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--stops", type=int, default=30)
    parser.add_argument("--verbose", action="store_true", help="print every run's time")
    args = parser.parse_args()
    settings = VoiceSettings()
    engines = {"ja": OpenJTalkEngine(), "en": PiperEngine(None)}
    output = open_output()
    pausing = open_output(pause_after=0.2)
    rate = output.rate
    print(f"device {output.device!r}, {output.rate} Hz, device buffer {output.latency * 1000:.1f} ms")
    try:
        for language, engine in engines.items():
            reply = REPLIES[language]
            made: list[float] = []  # each synthesis's own time: the engine's share of the wait

            def synthesize(
                text: str, engine: OpenJTalkEngine | PiperEngine = engine, made: list[float] = made
            ) -> Audio:
                started = time.monotonic()
                audio = engine.synthesize(text, settings)
                made.append(time.monotonic() - started)
                return audio

            first = (
                reply[: len(reply.split("。")[0]) + 1] if language == "ja" else reply[: reply.index(". ") + 1]
            )
            synthesize(first)  # load the model once, outside the timings
            queued, raw, cold = [], [], []
            for _ in range(args.runs):  # alternating, so all see the same machine
                made.clear()
                took = first_audio_queue(synthesize, output, reply)
                queued.append((took, took - made[0]))
                made.clear()
                took = first_audio_raw(synthesize, output, first)
                raw.append((took, took - made[0]))
                made.clear()
                time.sleep(0.5)  # the other output's stream pauses
                took = first_audio_queue(synthesize, pausing, reply)
                cold.append((took, took - made[0]))
            if args.verbose:
                for label, runs in (("queue", queued), ("raw", raw), ("paused", cold)):
                    print(f"  {label}", [round(x * 1000) for x, _ in runs])
            q, r, c = (statistics.median(x for x, _ in runs) for runs in (queued, raw, cold))
            q_own, r_own, c_own = (statistics.median(y for _, y in runs) for runs in (queued, raw, cold))
            print(
                f"first audio {language} ({engine.name}), medians of {args.runs}: "
                f"SpeechQueue {q * 1000:.0f} ms (beyond the synthesis itself {q_own * 1000:.1f} ms), "
                f"engine + play {r * 1000:.0f} ms "
                f"({r_own * 1000:.1f} ms); ratio {q / r:.2f}. From a paused output: {c * 1000:.0f} ms "
                f"({c_own * 1000:.1f} ms)"
            )
        speech = engines["en"].synthesize(REPLIES["en"], settings)
        for through_queue in (True, False):
            stops = [stop_latency(output, speech, through_queue) for _ in range(args.stops)]
            label = "SpeechQueue.stop" if through_queue else "AudioOutput.stop"
            print(f"stop -> silence ({label}, {args.stops} stops): {quantiles(stops)}")
        seconds = 5.0
        long = Audio(np.tile(speech.samples, 3), speech.rate)
        playing = cpu_share(seconds, lambda: output.play(long))
        output.stop()
        idle = cpu_share(2.0, lambda: None)  # the stream still runs (it pauses after 3 s)
        time.sleep(1.5)
        paused = cpu_share(seconds, lambda: None)
    finally:
        output.close()
        pausing.close()
    resumed = resume_latency(speech, args.runs)
    print(f"first block after a paused output's play() ({args.runs} runs): {quantiles(resumed)}")
    # The raw stream plays the same samples, resampled to the device's rate beforehand (not timed).
    raw_share = raw_stream_cpu(resample(long.samples, long.rate, rate), rate, seconds)
    print(
        f"CPU while playing ({seconds:.0f} s): AudioOutput {playing * 100:.2f}% of a core "
        f"(incl. resampling {speech.rate}->48000 once), raw sounddevice stream {raw_share * 100:.2f}%; "
        f"AudioOutput idle before its pause {idle * 100:.2f}%, paused {paused * 100:.2f}%"
    )


if __name__ == "__main__":
    main()
