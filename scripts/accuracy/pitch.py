#!/usr/bin/env python3
"""Tuner accuracy benchmark (issue 4): Spectrum's pitch tracker against Debian's aubiopitch
(yinfft) on a labelled corpus of sampled instruments rendered with FluidSynth + FluidR3 GM.

Run through scripts/accuracy-pitch (which installs the tools and builds spectrum).
"""

import argparse
import concurrent.futures as futures
import datetime
import json
import math
import os
import platform
import random
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
from midi import Song, bend_value, key_hz  # noqa: E402

SR = corpus.SAMPLE_RATE
HOP = 800  # Spectrum's hop at 48 kHz (60 frames/s); aubio is run with the same hop
AUBIO_BUFFER = 4096
ONSET_GUARD = 0.060   # voiced frames start 60 ms after a note-on ...
OFFSET_GUARD = 0.030  # ... and end 30 ms before its note-off
LOCK_TOLERANCE = 50.0  # cents
LOCK_FRAMES = 3
TUNER_WINDOW = 2781    # Spectrum's pitch window at 48 kHz: 2.2 periods of 38 Hz
STEADY_CENTS = 3.0     # a frame is steady when its measured pitch and its neighbours' span less than this
SNRS = (20, 10, 0)
NOISES = ("white", "pink")

# name, GM program (0-based), lowest key, highest key, step (semitones) for sustained notes
INSTRUMENTS = [
    ("electric bass", 33, 28, 60, 2),   # E1 41.2 Hz .. C4
    ("nylon guitar", 24, 40, 83, 3),    # E2 .. B5
    ("steel guitar", 25, 40, 84, 3),
    ("piano", 0, 28, 96, 4),            # E1 .. C7 2093 Hz
    ("violin", 40, 55, 96, 3),          # G3 .. C7
    ("cello", 42, 36, 76, 3),           # C2 .. E5
    ("flute", 73, 60, 96, 3),           # C4 .. C7
    ("trumpet", 56, 54, 82, 3),         # F#3 .. A#5
    ("alto sax", 65, 49, 80, 3),        # Db3 .. G#5 (concert)
    ("tenor sax", 66, 44, 75, 3),       # Ab2 .. D#5
    ("choir aahs", 52, 40, 79, 3),      # E2 .. G5
    ("voice oohs", 53, 45, 79, 3),
    ("church organ", 19, 28, 96, 4),    # E1 .. C7
]
SYNTHETIC = "synthetic (control)"
QUICK_INSTRUMENTS = ("electric bass", "nylon guitar", "violin", "flute", "alto sax")
SUSTAINED_DETUNE = (0, 7, -23, 0, -7, 23)  # cents, cycled over the notes of a sustained file
MELODY_DETUNE = (7, -7, 23, -23)


# ------------------------------------------------------------------------------------------
# Corpus
# ------------------------------------------------------------------------------------------

def sustained_song(program, low, high, step):
    song = Song(960).tempo(0.0, 120)
    track = song.track(channel=0, program=program)
    track.bend_range(0.0, semitones=1)  # bend values map to exact cents: (v − 8192)/8192 × 100
    keys = list(range(low, high + 1, step))
    if keys[-1] != high:
        keys.append(high)
    notes, t = [], 0.5
    for index, key in enumerate(keys):
        value, cents = bend_value(SUSTAINED_DETUNE[index % len(SUSTAINED_DETUNE)])
        track.bend(t - 0.2, value)
        on, off = track.note(t, t + 1.2, key, velocity=100)
        notes.append({"on": on, "off": off, "key": key, "cents": cents, "hz": key_hz(key, cents)})
        t += 1.6
    return song, notes, t + 0.8


def synthetic_tones(low=28, high=96, step=4):
    """Control set with exact truth: harmonic tones (8 partials, amplitude 1/k, random phases,
    10 ms attack, 30 ms release) on the sustained-note timing and detune cycle."""
    rng = np.random.default_rng(4)
    keys = list(range(low, high + 1, step))
    duration = 0.5 + 1.6 * len(keys) + 0.8
    x = np.zeros(int(duration * SR))
    notes, t = [], 0.5
    for index, key in enumerate(keys):
        detune = float(SUSTAINED_DETUNE[index % len(SUSTAINED_DETUNE)])
        hz = key_hz(key, detune)
        a, b = int(round(t * SR)), int(round((t + 1.2) * SR))
        n = np.arange(b - a) / SR
        tone = sum(np.sin(2 * np.pi * k * hz * n + rng.uniform(0, 2 * np.pi)) / k
                   for k in range(1, 9) if k * hz < 0.45 * SR)
        envelope = np.minimum(1.0, np.minimum(n / 0.010, (n[-1] - n) / 0.030 + 1e-9))
        x[a:b] += tone * envelope
        notes.append({"on": a / SR, "off": b / SR, "key": key, "cents": detune, "hz": hz})
        t += 1.6
    return notes, duration, x


def melody_song(program, low, high, seed, detuned):
    rng = random.Random(seed)
    song = Song(960).tempo(0.0, 120)
    track = song.track(channel=0, program=program)
    track.bend_range(0.0, semitones=1)
    value, cents = bend_value(rng.choice(MELODY_DETUNE) if detuned else 0)
    track.bend(0.1, value)
    key = rng.randint(low + (high - low) // 4, high - (high - low) // 4)
    notes, t = [], 0.5
    for _ in range(12):
        duration = rng.choice((0.25, 0.35, 0.5, 0.7))
        gap = rng.choice((0.0, 0.0, 0.05, 0.1))
        on, off = track.note(t, t + duration, key, velocity=rng.randint(80, 115))
        notes.append({"on": on, "off": off, "key": key, "cents": cents, "hz": key_hz(key, cents)})
        t += duration + gap
        step = rng.choice((-7, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 7, 12, -12))
        key = key + step if low <= key + step <= high else key - step
    return song, notes, t + 0.8


def measure_pitch(segment, nominal_hz):
    """Independent measurement of a segment's pitch near `nominal_hz`: Hann window, FFT
    zero-padded ×8, parabolic interpolation on the log magnitude of the peaks of the first six
    harmonics (each searched within ±60 cents of k·nominal). The pitch is the fundamental's
    frequency when its peak is within 20 dB of the strongest (a piano's stretched upper
    partials would pull an average sharp), else the median of f_k/k over the harmonics within
    20 dB (a weak or missing fundamental). None when nothing is found."""
    length = len(segment)
    size = 1 << int(math.ceil(math.log2(8 * length)))
    magnitude = np.abs(np.fft.rfft(segment * np.hanning(length), size))
    peaks = []
    for harmonic in range(1, 7):
        centre = harmonic * nominal_hz
        if centre > 0.45 * SR:
            break
        lo = int(centre * 2 ** (-60 / 1200) * size / SR)
        hi = int(centre * 2 ** (60 / 1200) * size / SR) + 1
        k = lo + int(np.argmax(magnitude[lo:hi]))
        if k <= lo or k >= hi - 1:
            peaks.append((harmonic, None, magnitude[k]))
            continue
        y0, y1, y2 = np.log(magnitude[k - 1:k + 2] + 1e-30)
        offset = 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2)
        peaks.append((harmonic, (k + offset) * SR / size / harmonic, magnitude[k]))
    strongest = max(p[2] for p in peaks)
    if strongest <= 0:
        return None
    if peaks[0][1] and peaks[0][2] >= strongest * 0.1:
        return float(peaks[0][1])
    estimates = [f0 for _h, f0, amplitude in peaks if f0 and amplitude >= strongest * 0.1]
    return float(np.median(estimates)) if estimates else None


def measure_f0(x, on, off, nominal_hz):
    """The sample's real pitch over a note's scored part (`measure_pitch`), to report the
    soundfont's own tuning."""
    a, b = int((on + 0.08) * SR), int((off - OFFSET_GUARD) * SR)
    if b - a < int(0.1 * SR):
        return None
    return measure_pitch(x[a:b], nominal_hz)


def frame_references(x, note):
    """[(frame time, Hz)] at every hop-aligned frame in the note's scored part: the pitch the
    clean rendering has over the window Spectrum's tuner reads for that frame (the newest
    `TUNER_WINDOW` samples; widened about the same centre to 6 periods for low notes, whose
    harmonics a 58 ms window does not resolve). Vibrato and scoops move the real pitch from
    frame to frame; a note's single label or measured pitch cannot score a tuner to a cent."""
    references = []
    length = max(TUNER_WINDOW, int(6 * SR / note["hz"]))
    first = int(math.ceil((note["on"] + ONSET_GUARD) * SR / HOP)) - 1
    last = int(math.floor((note["off"] - OFFSET_GUARD) * SR / HOP)) + 1
    for k in range(first, last + 1):
        end = k * HOP
        start = end - (TUNER_WINDOW + length) // 2
        if start < 0 or start + length > len(x):
            continue
        hz = measure_pitch(x[start:start + length], note["hz"])
        if hz:
            references.append((end / SR, hz))
    return references


def build_corpus(work, quick, jobs):
    os.makedirs(work, exist_ok=True)
    instruments = [i for i in INSTRUMENTS if not quick or i[0] in QUICK_INSTRUMENTS]
    plans = []  # (name, instrument, kind, song, notes, duration)
    for index, (name, program, low, high, step) in enumerate(instruments):
        slug = name.replace(" ", "-")
        song, notes, duration = sustained_song(program, low, high, step if not quick else step * 2)
        plans.append((f"{slug}-sustained", name, "sustained", song, notes, duration))
        for m in range(1 if quick else 2):
            song, notes, duration = melody_song(program, low, high, seed=1000 + 10 * index + m, detuned=m == 1)
            plans.append((f"{slug}-melody{m}", name, "melody", song, notes, duration))

    notes, duration, synthetic = synthetic_tones(step=4 if not quick else 8)
    plans.append(("synthetic-sustained", SYNTHETIC, "sustained", None, notes, duration))

    def render(plan):
        base, name, kind, song, notes, duration = plan
        mid, wav = os.path.join(work, base + ".mid"), os.path.join(work, base + ".wav")
        if song is None:
            x = synthetic
        else:
            song.save(mid)
            corpus.render_midi(mid, wav)
            x = corpus.read_wav(wav)
        x = corpus.normalise(x[: int(duration * SR)], -3.0)
        corpus.write_wav(wav, x)
        for note in notes:
            note["measured_hz"] = measure_f0(x, note["on"], note["off"], note["hz"])
            note["frame_references"] = frame_references(x, note)
        return base, name, kind, notes, x

    files = []
    with futures.ThreadPoolExecutor(jobs) as pool:
        rendered = list(pool.map(render, plans))
    conditions = [("white", 10)] if quick else [(n, s) for s in SNRS for n in NOISES]
    for number, (base, name, kind, notes, x) in enumerate(rendered):
        files.append({"path": os.path.join(work, base + ".wav"), "instrument": name, "kind": kind,
                      "condition": "clean", "notes": notes})
        mask = np.zeros(len(x), dtype=bool)
        for note in notes:
            mask[int(note["on"] * SR):int(note["off"] * SR)] = True
        for c, (kind_noise, snr) in enumerate(conditions):
            rng = np.random.default_rng(10_000 + 100 * number + c)
            path = os.path.join(work, f"{base}-{kind_noise}{snr}dB.wav")
            corpus.write_wav(path, corpus.add_noise(x, snr, kind_noise, rng, mask))
            files.append({"path": path, "instrument": name, "kind": kind,
                          "condition": f"{kind_noise} {snr} dB", "notes": notes})
    # Files without a note: noise at two levels, and digital silence.
    seconds = 5 if quick else 10
    for c, (kind_noise, level) in enumerate([("white", -20), ("white", -40), ("pink", -20), ("pink", -40)]):
        rng = np.random.default_rng(777 + c)
        path = os.path.join(work, f"noise-{kind_noise}{-level}dBFS.wav")
        corpus.write_wav(path, corpus.noise(kind_noise, seconds * SR, rng) * 10 ** (level / 20))
        files.append({"path": path, "instrument": f"{kind_noise} noise {level} dBFS", "kind": "no note",
                      "condition": "noise", "notes": []})
    path = os.path.join(work, "silence.wav")
    corpus.write_wav(path, np.zeros(seconds * SR))
    files.append({"path": path, "instrument": "silence", "kind": "no note", "condition": "silence", "notes": []})
    with open(os.path.join(work, "labels.json"), "w") as handle:
        json.dump(files, handle, indent=1)
    return files


# ------------------------------------------------------------------------------------------
# Tools
# ------------------------------------------------------------------------------------------

PITCH_RE = re.compile(r'"pitch":(null|\{[^}]*\})')
TIME_RE = re.compile(r'^\{"time":([0-9.]+)')


def run_spectrum(binary, path):
    """[(time of the newest sample of the frame, Hz or 0)] from `spectrum analyze` JSON lines."""
    out = subprocess.run([binary, "analyze", path], check=True, capture_output=True, text=True).stdout
    frames = []
    for line in out.splitlines():
        t = float(TIME_RE.match(line).group(1))
        # "pitch" follows the 256 band and peak numbers; search after them (fields may follow it).
        p = PITCH_RE.search(line, line.find('"level"')).group(1)
        frames.append((t, 0.0 if p == "null" else json.loads(p)["hz"]))
    return frames


AUBIO_COMMAND = ["aubiopitch", "-p", "yinfft", "-B", str(AUBIO_BUFFER), "-H", str(HOP), "-r", str(SR),
                 "-s", "-70", "-u", "Hz", "-i"]


def run_aubio(path):
    """aubiopitch prints the time of the first sample of the hop just read; +hop gives the
    newest sample, the same convention as Spectrum's frame time. 0 Hz = no pitch."""
    out = subprocess.run(AUBIO_COMMAND + [path], check=True, capture_output=True, text=True).stdout
    frames = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            frames.append((float(parts[0]) + HOP / SR, max(0.0, float(parts[1]))))
    return frames


# ------------------------------------------------------------------------------------------
# Scoring
# ------------------------------------------------------------------------------------------

def cents(estimate, truth):
    return 1200.0 * math.log2(estimate / truth)


def steady_references(note):
    """{frame index: Hz} of the note's frames whose measured pitch, with the frames before and
    after, spans less than STEADY_CENTS: the frames where a tuner has one right answer."""
    by_frame = {int(round(t * SR / HOP)): hz for t, hz in note.get("frame_references", [])}
    steady = {}
    for k, hz in by_frame.items():
        around = [by_frame.get(k - 1), hz, by_frame.get(k + 1)]
        if None not in around and cents(max(around), min(around)) < STEADY_CENTS:
            steady[k] = hz
    return steady


def score_file(entry, frames):
    """Per voiced frame: (note index, error vs label, error vs measured, error vs the frame's
    measured pitch on steady frames), the errors None where not available; per note: lock
    time (s, inf if never); for no-note files: frames with and without pitch."""
    times = np.array([f[0] for f in frames])
    hz = np.array([f[1] for f in frames])
    voiced, locks = [], []
    for n, note in enumerate(entry["notes"]):
        inside = (times >= note["on"] + ONSET_GUARD) & (times <= note["off"] - OFFSET_GUARD)
        steady = steady_references(note)
        measured = note.get("measured_hz")
        for t, f in zip(times[inside], hz[inside]):
            if f > 0:
                reference = steady.get(int(round(t * SR / HOP)))
                voiced.append((n, cents(f, note["hz"]), cents(f, measured) if measured else None,
                               cents(f, reference) if reference else None))
            else:
                voiced.append((n, None, None, None))
        after = np.nonzero((times >= note["on"]) & (times <= note["off"]))[0]
        ok = [hz[i] > 0 and abs(cents(hz[i], note["hz"])) <= LOCK_TOLERANCE for i in after]
        lock = math.inf
        for j in range(len(ok) - LOCK_FRAMES + 1):
            if all(ok[j:j + LOCK_FRAMES]):
                lock = times[after[j]] - note["on"]
                break
        locks.append(lock)
    return {"voiced": voiced, "locks": locks, "frames": len(frames), "pitched": int(np.sum(hz > 0))}


def octave_error_causes(entries, frames_per_file):
    """Spectrum's octave-error frames in the clean files of the sampled instruments, with the
    partial that decides the octave in the window the tuner read for the frame (the newest
    `TUNER_WINDOW` samples, Hann, ×16 zero-padded; the highest bin within ±3 % of the
    frequency): for a reading an octave or two up, the note's own fundamental; for one below,
    its sub-octave (half the note). Levels in dB against the strongest of the note's first
    eight harmonics. {(instrument, "up"/"down"): [level dB, ...]}."""
    causes = {}
    for entry, frames in zip(entries, frames_per_file):
        if entry["condition"] != "clean" or not entry["notes"] or entry["instrument"] == SYNTHETIC:
            continue
        x = None
        for note in entry["notes"]:
            for t, hz in frames:
                if hz <= 0 or not note["on"] + ONSET_GUARD <= t <= note["off"] - OFFSET_GUARD:
                    continue
                error = cents(hz, note["hz"])
                if not any(abs(abs(error) - k) <= LOCK_TOLERANCE for k in (1200, 2400)):
                    continue
                if x is None:
                    x = corpus.read_wav(entry["path"])
                end = int(round(t * SR))
                segment = x[max(0, end - TUNER_WINDOW):end]
                segment = (segment - segment.mean()) * np.hanning(len(segment))
                size = 16 * TUNER_WINDOW
                power = np.abs(np.fft.rfft(segment, size)) ** 2
                frequencies = np.fft.rfftfreq(size, 1 / SR)

                def level(f):
                    near = (frequencies > f * 0.97) & (frequencies < f * 1.03)
                    return 10 * np.log10(power[near].max() + 1e-30)

                strongest = max(level(k * note["hz"]) for k in range(1, 9) if k * note["hz"] < 0.45 * SR)
                deciding = note["hz"] if error > 0 else note["hz"] / 2
                causes.setdefault((entry["instrument"], "up" if error > 0 else "down"), []).append(level(deciding) - strongest)
    return causes


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    index = q / 100 * (len(values) - 1)
    lo, hi = int(math.floor(index)), int(math.ceil(index))
    if math.isinf(values[hi]) or math.isinf(values[lo]):
        return math.inf if index > lo or math.isinf(values[lo]) else values[lo]
    return values[lo] + (values[hi] - values[lo]) * (index - lo)


def metrics(results, entries, select, truth="label"):
    """Metrics over the files chosen by `select(entry)`."""
    errors, measured_errors, steady_errors, voiced_total, locks_all, locks_high = [], [], [], 0, [], []
    steady_total = 0
    for entry, result in zip(entries, results):
        if not entry["notes"] or not select(entry):
            continue
        voiced_total += len(result["voiced"])
        steady_total += sum(len(steady_references(note)) for note in entry["notes"])
        for _n, error, measured, steady in result["voiced"]:
            if error is not None:
                errors.append(error)
                if measured is not None:
                    measured_errors.append(measured)
                if steady is not None:
                    steady_errors.append(steady)
        for note, lock in zip(entry["notes"], result["locks"]):
            locks_all.append(lock)
            if note["hz"] > 100:
                locks_high.append(lock)
    absolute = np.abs(np.array(errors)) if errors else np.array([])
    octave = sum(1 for e in errors if any(abs(abs(e) - k) <= 50 for k in (1200, 2400)))
    return {
        "voiced": voiced_total,
        "reported": len(errors),
        "median": float(np.median(absolute)) if errors else None,
        "median_measured": float(np.median(np.abs(measured_errors))) if measured_errors else None,
        "median_steady": float(np.median(np.abs(steady_errors))) if steady_errors else None,
        "steady_share": 100 * steady_total / voiced_total if voiced_total else None,
        "within5": 100 * float(np.mean(absolute <= 5)) if errors else None,
        "within10": 100 * float(np.mean(absolute <= 10)) if errors else None,
        "octave": 100 * octave / voiced_total if voiced_total else None,
        "recall": 100 * len(errors) / voiced_total if voiced_total else None,
        "notes": len(locks_all),
        "lock_median": percentile(locks_all, 50),
        "lock_p90": percentile(locks_all, 90),
        "lock_high_median": percentile(locks_high, 50),
        "lock_high_p90": percentile(locks_high, 90),
        "notes_high": len(locks_high),
        "never_locked_high": sum(1 for v in locks_high if math.isinf(v)),
    }


def no_note_rate(results, entries, select=lambda e: True):
    frames = pitched = 0
    for entry, result in zip(entries, results):
        if entry["notes"] or not select(entry):
            continue
        frames += result["frames"]
        pitched += result["pitched"]
    return 100 * (frames - pitched) / frames if frames else None


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------

def fmt(value, digits=1, unit=""):
    if value is None:
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "never"
    return f"{value:.{digits}f}{unit}"


def ms(value):
    if value is None:
        return "–"
    return "never" if math.isinf(value) else f"{1000 * value:.0f} ms"




def report(entries, tools, command, elapsed, quick, causes):
    names = list(tools)
    S, A = names
    res = tools
    real = lambda e: e["instrument"] != SYNTHETIC  # noqa: E731
    clean = lambda e: e["condition"] == "clean" and real(e)  # noqa: E731
    clean_sustained = lambda e: clean(e) and e["kind"] == "sustained"  # noqa: E731
    synthetic = {t: metrics(res[t], entries, lambda e: e["condition"] == "clean" and not real(e)) for t in names}
    m = {t: metrics(res[t], entries, clean) for t in names}
    ms_ = {t: metrics(res[t], entries, clean_sustained) for t in names}
    m20 = {t: metrics(res[t], entries, lambda e: real(e) and e["condition"].endswith(" 20 dB")) for t in names}
    nn = {t: no_note_rate(res[t], entries, lambda e: e["condition"] == "noise") for t in names}
    ns = {t: no_note_rate(res[t], entries, lambda e: e["condition"] == "silence") for t in names}
    lines = []
    add = lines.append
    labelled = [e for e in entries if e["notes"]]
    clean_files = [e for e in labelled if e["condition"] == "clean"]
    add(f"Generated by `scripts/accuracy-pitch` on {datetime.date.today().isoformat()}"
        f"{' (**--quick subset**)' if quick else ''}; run time {elapsed / 60:.1f} min "
        "(corpus, both tools, scoring; the release build not counted; one job per CPU).")
    add("")
    add(f"- Machine: {corpus.machine()}")
    add(f"- Command: `{command}`")
    add(f"- Spectrum: `spectrum analyze FILE` (release build, default preset: 38–2200 Hz, A4 = 440 Hz, hop 800 at 48 kHz).")
    add(f"- aubio: `{' '.join(AUBIO_COMMAND)} FILE` (aubio-tools {aubio_version()}); "
        f"its time stamp + one hop = newest sample, the same convention as Spectrum's `time`.")
    add("")
    add("### Corpus")
    add("")
    add(f"{len(clean_files)} clean labelled files ({sum(len(e['notes']) for e in clean_files)} notes), "
        f"each also with {'white noise at 10 dB SNR' if quick else 'white and pink noise at 20, 10 and 0 dB SNR'} "
        f"({len(labelled)} labelled files in all), plus {len(entries) - len(labelled)} files without a note. "
        "Rendered by FluidSynth 2 with FluidR3_GM.sf2 (reverb and chorus off) from generated MIDI files, "
        "48 kHz, mono, peak −3 dBFS. Per instrument: one file of sustained notes (1.2 s, 0.4 s apart) across its range; "
        f"{'one melody' if quick else 'two melodies'} of 12 notes (0.25–0.7 s, legato or short gaps, leaps up to an octave; "
        "the second transposed by one pitch bend of ±7 or ±23 cents). Sustained notes cycle through detunings "
        f"{', '.join(f'{c:+d}' for c in SUSTAINED_DETUNE)} cents by pitch bend (bend range 1 semitone set by RPN 0, so "
        "a bend value v is exactly (v − 8192)/8192 × 100 cents; the label uses that exact value). "
        "Labels: MIDI note-on/off times and 440 × 2^((key − 69 + cents/100)/12) Hz. Noise is added over the whole file, "
        "its RMS set against the RMS of the signal between note-ons and note-offs. No-note files: white and pink noise at "
        "−20 and −40 dBFS RMS, and digital silence.")
    add("")
    add("| instrument | GM program | range | files | notes | voiced frames (clean) |")
    add("| --- | --- | --- | --- | --- | --- |")
    for name, program, low, high, _ in INSTRUMENTS + [(SYNTHETIC, -1, 28, 96, 4)]:
        chosen = [e for e in clean_files if e["instrument"] == name]
        if not chosen:
            continue
        allfiles = [e for e in labelled if e["instrument"] == name]
        voiced = metrics(res[S], entries, lambda e, n=name: e["condition"] == "clean" and e["instrument"] == n)["voiced"]
        add(f"| {name} | {program + 1 if program >= 0 else '–'} | {note_name(low)} {key_hz(low):.1f} Hz – {note_name(high)} {key_hz(high):.0f} Hz "
            f"| {len(allfiles)} | {sum(len(e['notes']) for e in chosen)} | {voiced} |")
    add("")
    add("### Scoring rules")
    add("")
    add(f"- Voiced frames: frames whose time lies in [note-on + {ONSET_GUARD * 1000:.0f} ms, note-off − "
        f"{OFFSET_GUARD * 1000:.0f} ms] of a labelled note. Error = 1200·log2(reported / label) cents.")
    add("- Median |error|, within 5 / 10 cents: over voiced frames where the tool reported a pitch. "
        "Recall: share of voiced frames with a reported pitch.")
    add("- Octave errors: voiced frames whose error is within 50 cents of ±1200 or ±2400, as a share of all voiced frames.")
    add(f"- Lock time: from note-on to the first frame (between note-on and note-off) whose pitch is within "
        f"{LOCK_TOLERANCE:.0f} cents of the label and stays so for {LOCK_FRAMES} frames; \"never\" if that does not "
        "happen before note-off (counted as infinitely late in the percentiles). It includes the instrument's attack.")
    add("- No note: share of frames with no reported pitch in the noise-only and silent files.")
    add("- \"vs measured\": the same median against the pitch measured from the rendered note itself over its scored part "
        "(see *Soundfont tuning*), not against our detector.")
    add(f"- **Steady frames, vs the frame's measured pitch** (the ≤ 1 cent target): the pitch of the clean rendering "
        f"is measured for every frame over the window the tuner reads (the newest {TUNER_WINDOW} samples; 6 periods "
        "about the same centre for notes below 103 Hz) — the fundamental's interpolated peak in a ×8 zero-padded FFT, "
        "or the median of f_k/k when the fundamental is 20 dB below the strongest of the first six harmonics. A frame "
        f"is steady when that pitch, with the frames before and after, spans less than {STEADY_CENTS:.0f} cents. The "
        "samples are real recordings: violin, cello, saxes, flute, voices carry vibrato (±5–20 cents at ~5 Hz), "
        "brass and voices scoop into the note, FluidR3's samples are tuned a few cents off (choir −19) and FluidSynth "
        "rounds to whole cents, so neither the label nor one pitch per note is the truth a frame can be scored "
        "against to a cent. The same references score aubio and the noisy copies (their clean rendering's).")
    add("")
    add("### Main results (clean files of the sampled instruments; targets from product.md)")
    add("")
    add(f"| metric | Spectrum | aubio yinfft | target | Spectrum meets target |")
    add("| --- | --- | --- | --- | --- |")

    def row(label, s, a, target="", ok=None, better=None):
        mark = "" if ok is None else ("✅ pass" if ok else "❌ **FAIL**")
        add(f"| {label} | {s} | {a} | {target} | {mark} |")

    row("median \\|error\\|, steady frames of sustained notes, vs the frame's measured pitch",
        fmt(ms_[S]["median_steady"], 2, " ¢"), fmt(ms_[A]["median_steady"], 2, " ¢"), "≤ 1 cent",
        ms_[S]["median_steady"] is not None and ms_[S]["median_steady"] <= 1)
    row("steady frames (share of the sustained notes' scored frames)", fmt(ms_[S]["steady_share"], 1, " %"),
        fmt(ms_[A]["steady_share"], 1, " %"))
    row("median \\|error\\|, sustained notes, all frames, vs label", fmt(ms_[S]["median"], 2, " ¢"),
        fmt(ms_[A]["median"], 2, " ¢"))
    row("median \\|error\\|, sustained notes, all frames, vs the note's measured pitch",
        fmt(ms_[S]["median_measured"], 2, " ¢"), fmt(ms_[A]["median_measured"], 2, " ¢"))
    row("median \\|error\\|, all clean notes (incl. melodies), vs label", fmt(m[S]["median"], 2, " ¢"), fmt(m[A]["median"], 2, " ¢"))
    row("within 5 cents", fmt(m[S]["within5"], 1, " %"), fmt(m[A]["within5"], 1, " %"))
    row("within 10 cents", fmt(m[S]["within10"], 1, " %"), fmt(m[A]["within10"], 1, " %"))
    row("octave errors (share of voiced frames)", fmt(m[S]["octave"], 2, " %"), fmt(m[A]["octave"], 2, " %"), "≤ 0.5 %",
        m[S]["octave"] is not None and m[S]["octave"] <= 0.5)
    no_organ = {t: metrics(res[t], entries, lambda e: clean(e) and e["instrument"] != "church organ") for t in names}
    row("octave errors without the church organ (see Soundfont tuning)", fmt(no_organ[S]["octave"], 2, " %"),
        fmt(no_organ[A]["octave"], 2, " %"), "≤ 0.5 %", no_organ[S]["octave"] <= 0.5)
    row("octave errors at 20 dB SNR", fmt(m20[S]["octave"], 2, " %"), fmt(m20[A]["octave"], 2, " %"), "≤ 0.5 %",
        None if m20[S]["octave"] is None else m20[S]["octave"] <= 0.5)
    row("voiced-frame recall", fmt(m[S]["recall"], 1, " %"), fmt(m[A]["recall"], 1, " %"))
    row("no note on noise-only files", fmt(nn[S], 2, " %"), fmt(nn[A], 2, " %"), "≥ 99 %", nn[S] is not None and nn[S] >= 99)
    row("no note on silence", fmt(ns[S], 2, " %"), fmt(ns[A], 2, " %"), "≥ 99 %", ns[S] is not None and ns[S] >= 99)
    row(f"lock time, notes > 100 Hz, median ({m[S]['notes_high']} notes)", ms(m[S]["lock_high_median"]),
        ms(m[A]["lock_high_median"]), "≤ 60 ms", m[S]["lock_high_median"] <= 0.060)
    row("lock time, notes > 100 Hz, 90th percentile", ms(m[S]["lock_high_p90"]), ms(m[A]["lock_high_p90"]), "≤ 60 ms",
        m[S]["lock_high_p90"] <= 0.060)
    row("notes > 100 Hz never locked", f"{m[S]['never_locked_high']}", f"{m[A]['never_locked_high']}")
    row(f"lock time, all notes, median / p90 ({m[S]['notes']} notes)",
        f"{ms(m[S]['lock_median'])} / {ms(m[S]['lock_p90'])}", f"{ms(m[A]['lock_median'])} / {ms(m[A]['lock_p90'])}")
    row("synthetic control (exact truth), sustained E1–C7: median \\|error\\|", fmt(synthetic[S]["median"], 2, " ¢"),
        fmt(synthetic[A]["median"], 2, " ¢"), "≤ 1 cent", synthetic[S]["median"] is not None and synthetic[S]["median"] <= 1)
    row("synthetic control: octave errors / recall", f"{fmt(synthetic[S]['octave'], 2, ' %')} / {fmt(synthetic[S]['recall'], 1, ' %')}",
        f"{fmt(synthetic[A]['octave'], 2, ' %')} / {fmt(synthetic[A]['recall'], 1, ' %')}")
    row("synthetic control: lock > 100 Hz, median / p90", f"{ms(synthetic[S]['lock_high_median'])} / {ms(synthetic[S]['lock_high_p90'])}",
        f"{ms(synthetic[A]['lock_high_median'])} / {ms(synthetic[A]['lock_high_p90'])}")
    add("")
    add("Cells read Spectrum / aubio in the tables below.")
    add("")
    add("### Per instrument (clean files)")
    add("")
    add("| instrument | median \\|err\\| ¢ | vs measured ¢ | steady frames: share %, median ¢ | ≤ 5 ¢ % | ≤ 10 ¢ % | octave % | recall % | lock > 100 Hz median | lock > 100 Hz p90 |")
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in [i[0] for i in INSTRUMENTS] + [SYNTHETIC]:
        sel = lambda e, n=name: e["condition"] == "clean" and e["instrument"] == n  # noqa: E731
        if not any(sel(e) for e in entries):
            continue
        p = {t: metrics(res[t], entries, sel) for t in names}
        add(f"| {name} | {pair(p, 'median', 2)} | {pair(p, 'median_measured', 2)} | "
            f"{fmt(p[S]['steady_share'], 0)}, {pair(p, 'median_steady', 2)} | {pair(p, 'within5')} | "
            f"{pair(p, 'within10')} | {pair(p, 'octave', 2)} | {pair(p, 'recall')} | "
            f"{ms(p[S]['lock_high_median'])} / {ms(p[A]['lock_high_median'])} | "
            f"{ms(p[S]['lock_high_p90'])} / {ms(p[A]['lock_high_p90'])} |")
    add("")
    add("### By noise (sampled instruments, sustained notes and melodies)")
    add("")
    add("| condition | median \\|err\\| ¢ | ≤ 10 ¢ % | octave % | recall % | lock > 100 Hz median | lock > 100 Hz p90 |")
    add("| --- | --- | --- | --- | --- | --- | --- |")
    conditions = ["clean"] + sorted({e["condition"] for e in labelled} - {"clean"},
                                    key=lambda c: (-int(c.split()[1]), c))
    for condition in conditions:
        sel = lambda e, c=condition: real(e) and e["condition"] == c  # noqa: E731
        p = {t: metrics(res[t], entries, sel) for t in names}
        add(f"| {condition} | {pair(p, 'median', 2)} | {pair(p, 'within10')} | {pair(p, 'octave', 2)} | "
            f"{pair(p, 'recall')} | {ms(p[S]['lock_high_median'])} / {ms(p[A]['lock_high_median'])} | "
            f"{ms(p[S]['lock_high_p90'])} / {ms(p[A]['lock_high_p90'])} |")
    add("")
    add("| no-note file | Spectrum no note % | aubio no note % |")
    add("| --- | --- | --- |")
    for entry in [e for e in entries if not e["notes"]]:
        sel = lambda e, p=entry["path"]: e["path"] == p  # noqa: E731
        add(f"| {entry['instrument']} | {fmt(no_note_rate(res[S], entries, sel), 2)} | "
            f"{fmt(no_note_rate(res[A], entries, sel), 2)} |")
    add("")
    add("### Octave errors by cause (Spectrum, clean files)")
    add("")
    add("Each octave-error frame with the partial that decides the octave, in the window the tuner read for that frame "
        f"(the newest {TUNER_WINDOW} samples): for a reading too high, the note's own fundamental; for one too low, the "
        "sub-octave (half the note's frequency). Level in dB against the strongest of the note's first eight harmonics. "
        "A reading too high while the fundamental is 20 dB or more under that, or too low while the sub-octave is within "
        "20 dB of it, follows what the window holds at that moment (an organ's low pipes speaking late, a saxophone's "
        "octave-below attack, a previous note ringing); the others are misses of the detector itself.")
    add("")
    add("| instrument | direction | frames | deciding partial, median dB | frames where the window holds the wrong octave |")
    add("| --- | --- | --- | --- | --- |")
    total = sum(len(v) for v in causes.values())
    forced = 0
    for (name, direction), levels in sorted(causes.items(), key=lambda item: -len(item[1])):
        held = sum(1 for v in levels if (v <= -20 if direction == "up" else v > -20))
        forced += held
        add(f"| {name} | {'too high' if direction == 'up' else 'too low'} | {len(levels)} | {np.median(levels):.1f} | {held} |")
    voiced = m[S]["voiced"]
    if voiced:
        add(f"| all | | {total} ({100 * total / voiced:.2f} % of voiced frames) | | {forced} ({100 * forced / voiced:.2f} %) |")
    add("")
    add("### Soundfont tuning")
    add("")
    add("Each clean note's real pitch, measured from the rendered audio over its scored part (Hann window, FFT "
        "zero-padded ×8, the fundamental's parabolic peak, or the median of f_k/k where the fundamental is 20 dB below the strongest of the first six harmonics), against its label. FluidSynth seems to "
        "round pitch to whole cents (in a check, a +23 cent bend measured +22.0 cents on organ, flute and violin) "
        "and FluidR3's samples carry their own tuning, so these are what the labels cannot "
        "know. Labels are **not** corrected; the table shows how far a perfect tuner would read from them. "
        "Not visible here: FluidR3's church organ registration adds a quint (partials at 3/2·f, so the waveform's "
        "period is 2/f, an octave below the note), piano partials are stretched (inharmonic), and the choir "
        "and violin samples carry vibrato/ensemble detuning.")
    add("")
    add("| instrument | notes measured | median offset ¢ | median \\|offset\\| ¢ | largest \\|offset\\| ¢ (note) |")
    add("| --- | --- | --- | --- | --- |")
    for name in [i[0] for i in INSTRUMENTS] + [SYNTHETIC]:
        notes = [n for e in clean_files if e["instrument"] == name for n in e["notes"] if n.get("measured_hz")]
        if not notes:
            continue
        offsets = [cents(n["measured_hz"], n["hz"]) for n in notes]
        worst = max(range(len(notes)), key=lambda i: abs(offsets[i]))
        add(f"| {name} | {len(notes)} | {np.median(offsets):+.2f} | {np.median(np.abs(offsets)):.2f} | "
            f"{offsets[worst]:+.1f} ({note_name(notes[worst]['key'])}{notes[worst]['cents']:+.0f}¢) |")
    return "\n".join(lines)


def pair(p, key, digits=1):
    names = list(p)
    return f"{fmt(p[names[0]][key], digits)} / {fmt(p[names[1]][key], digits)}"


NOTE_NAMES = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]


def note_name(key):
    return f"{NOTE_NAMES[key % 12]}{key // 12 - 1}"


def aubio_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "aubio-tools"], capture_output=True, text=True)
        return out.stdout.strip() or "?"
    except OSError:
        return "?"




def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small subset (5 instruments, one noise condition)")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "spectrum-accuracy-pitch"))
    parser.add_argument("--spectrum", default=".build/release/spectrum")
    parser.add_argument("--doc", default="docs/accuracy.md", help="document to update between the pitch markers")
    parser.add_argument("--no-doc", action="store_true", help="print the report instead of updating the document")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--command", default="scripts/accuracy-pitch")
    args = parser.parse_args()
    started = time.time()

    print(f"building corpus in {args.work} ...", file=sys.stderr)
    entries = build_corpus(args.work, args.quick, args.jobs)
    print(f"corpus: {len(entries)} files ({time.time() - started:.0f} s); running spectrum and aubiopitch ...",
          file=sys.stderr)
    with futures.ThreadPoolExecutor(args.jobs) as pool:
        spectrum_frames = list(pool.map(lambda e: run_spectrum(args.spectrum, e["path"]), entries))
        aubio_frames = list(pool.map(lambda e: run_aubio(e["path"]), entries))
    tools = {
        "Spectrum": [score_file(e, f) for e, f in zip(entries, spectrum_frames)],
        "aubio": [score_file(e, f) for e, f in zip(entries, aubio_frames)],
    }
    # Per-note details for digging into failures.
    with open(os.path.join(args.work, "details.json"), "w") as handle:
        json.dump([{"path": e["path"], "instrument": e["instrument"], "condition": e["condition"],
                    "notes": [dict(n, spectrum_lock=tools["Spectrum"][i]["locks"][k],
                                   aubio_lock=tools["aubio"][i]["locks"][k],
                                   spectrum_errors=[v[1] for v in tools["Spectrum"][i]["voiced"] if v[0] == k],
                                   aubio_errors=[v[1] for v in tools["aubio"][i]["voiced"] if v[0] == k],
                                   spectrum_steady_errors=[v[3] for v in tools["Spectrum"][i]["voiced"] if v[0] == k],
                                   aubio_steady_errors=[v[3] for v in tools["aubio"][i]["voiced"] if v[0] == k])
                              for k, n in enumerate(e["notes"])],
                    "spectrum_pitched": tools["Spectrum"][i]["pitched"], "aubio_pitched": tools["aubio"][i]["pitched"],
                    "frames": tools["Spectrum"][i]["frames"]}
                   for i, e in enumerate(entries)], handle, default=lambda v: None if v != v else v)
    causes = octave_error_causes(entries, spectrum_frames)
    body = report(entries, tools, args.command.strip(), time.time() - started, args.quick, causes)
    if args.no_doc:
        print(body)
    else:
        corpus.write_doc_section(args.doc, "pitch", body)
        print(f"updated {args.doc} ({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
