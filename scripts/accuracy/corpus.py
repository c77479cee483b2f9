"""Corpus helpers shared by the accuracy benchmarks: rendering MIDI with FluidSynth, WAV I/O,
noise at a given SNR. Standard library + numpy only.

    render_midi("x.mid", "x.wav")          # FluidSynth (FluidR3 GM), 48 kHz, mono, no reverb/chorus
    x = read_wav("x.wav")                  # float64 in -1..1, mono
    write_wav("y.wav", x)                  # 16-bit PCM
    add_noise(x, snr_db, "pink", rng, reference_mask)
"""

import os
import platform
import subprocess
import wave

import numpy as np

SAMPLE_RATE = 48000
SOUNDFONT = "/usr/share/sounds/sf2/FluidR3_GM.sf2"


def render_midi(midi_path, wav_path, soundfont=SOUNDFONT, sample_rate=SAMPLE_RATE, gain=0.5):
    """Renders `midi_path` with FluidSynth (reverb and chorus off, so a note's label is the
    whole truth), then mixes to mono with sox (no dither, so renders are bit-identical run to run)."""
    stereo = wav_path + ".stereo.wav"
    subprocess.run(["fluidsynth", "-ni", "-q", "-R", "0", "-C", "0", "-g", str(gain),
                    "-r", str(sample_rate), "-F", stereo, soundfont, midi_path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["sox", "-q", "-D", stereo, "-c", "1", "-b", "16", wav_path], check=True)
    os.remove(stereo)


def read_wav(path):
    with wave.open(path, "rb") as handle:
        channels, width = handle.getnchannels(), handle.getsampwidth()
        data = handle.readframes(handle.getnframes())
    if width != 2:
        raise ValueError(f"{path}: expected 16-bit PCM")
    x = np.frombuffer(data, dtype="<i2").astype(np.float64) / 32768.0
    if channels > 1:
        x = x.reshape(-1, channels).mean(axis=1)
    return x


def write_wav(path, x, sample_rate=SAMPLE_RATE):
    pcm = np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(sample_rate)
        handle.writeframes(pcm.tobytes())


def normalise(x, peak_dbfs=-3.0):
    peak = np.max(np.abs(x)) if len(x) else 0.0
    return x if peak == 0 else x * (10 ** (peak_dbfs / 20) / peak)


def noise(kind, count, rng):
    """Unit-RMS white or pink (1/f power, −3 dB/octave) noise."""
    white = rng.standard_normal(count)
    if kind == "white":
        out = white
    elif kind == "pink":
        spectrum = np.fft.rfft(white)
        f = np.arange(len(spectrum), dtype=np.float64)
        f[0] = 1.0
        spectrum /= np.sqrt(f)
        spectrum[0] = 0.0
        out = np.fft.irfft(spectrum, count)
    else:
        raise ValueError(kind)
    return out / np.sqrt(np.mean(out ** 2))


def add_noise(x, snr_db, kind, rng, reference_mask):
    """x plus `kind` noise whose RMS is `snr_db` below the RMS of x over `reference_mask`
    (the voiced part). The mix is scaled down as a whole if it would clip (SNR unchanged)."""
    signal_rms = np.sqrt(np.mean(x[reference_mask] ** 2))
    y = x + noise(kind, len(x), rng) * signal_rms * 10 ** (-snr_db / 20)
    peak = np.max(np.abs(y))
    return y * (0.97 / peak) if peak > 0.97 else y


def machine():
    """CPU model, core count and kernel, for the report header."""
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs (nproc), {platform.system()} {platform.release()}"


def write_doc_section(doc, section, body):
    """Replaces what stands between <!-- SECTION:begin --> and <!-- SECTION:end --> in doc."""
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    text = open(doc).read() if os.path.exists(doc) else ""
    if begin not in text or end not in text:
        raise SystemExit(f"{doc}: expected the markers {begin} and {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(doc, "w") as handle:
        handle.write(head + begin + "\n" + body + "\n" + end + tail)
