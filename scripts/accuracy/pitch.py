#!/usr/bin/env python3
"""Tuner accuracy benchmark (issues 4 and 16): Spectrum's pitch tracker against Debian's
aubiopitch (yin and yinfft) and librosa's pYIN on a labelled corpus of sampled instruments
rendered with FluidSynth from three General MIDI soundfonts. FluidR3 GM (and a synthetic
control) is the tuning part, on which the tuner's parameters are chosen; MuseScore General and
TimGM6mb are the held-out part, reported as the headline and never used to choose anything.

Run through scripts/accuracy-pitch (which installs the tools and builds spectrum).
"""

import argparse
import collections
import concurrent.futures as futures
import hashlib
import datetime
import json
import math
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
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
LOWEST_SEARCHED_HZ = 38.0  # the lowest pitch Spectrum (default preset) and pYIN are run to find
STEADY_CENTS = 3.0     # a frame is steady when its measured pitch and its neighbours' span less than this
SUBOCTAVE_DB = 20.0    # a note sounds an octave below its key when a partial at half the key's frequency is within this of its strongest (TimGM6mb's organ: 2–14 dB; the other organs: > 45 dB)
SILENT_DBFS = -70.0    # a note whose clean rendering stays under this RMS over its scored part does not sound (FluidR3's violin A#6: −92 dBFS, no sample; the quietest sounding note: −48 dBFS)
LABEL_RULES = 2        # bump when a labelling rule changes; a cached corpus is relabelled (not re-rendered)
# (name, file, part): the part on which parameters are chosen, and the held-out part.
SOUNDFONTS = [
    ("FluidR3", "/usr/share/sounds/sf2/FluidR3_GM.sf2", "tuning"),
    ("MuseScore", "/usr/share/sounds/sf3/MuseScore_General.sf3", "held-out"),
    ("TimGM6mb", "/usr/share/sounds/sf2/TimGM6mb.sf2", "held-out"),
]
# Conditions every rendered file is scored in (besides note subsets: detuned notes, melodies).
PINK_SNRS = (10, 0)
QUIET_PEAK_DBFS = -40.0
LOW_RATE = 44100
LOW_RATE_HOP = 735  # Spectrum's hop at 44.1 kHz (60 frames/s, as at 48 kHz)
ZERO_DB = "pink 0 dB"
CONDITIONS = ["clean"] + [f"pink {snr} dB" for snr in PINK_SNRS] + ["quiet −40 dBFS", "44.1 kHz"]
PYIN_CONDITIONS = ("clean", "pink 10 dB", ZERO_DB, "quiet −40 dBFS")
PYIN_RATE = 24000  # pYIN runs on a 24 kHz copy (hop 400 = 60 frames/s): ~0.5× real time per core
CORPUS_VERSION = 3  # bump when the corpus changes; a cached corpus of another version is rebuilt

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
FAMILIES = {
    "electric bass": "bass", "nylon guitar": "guitar", "steel guitar": "guitar", "piano": "piano",
    "violin": "bowed strings", "cello": "bowed strings", "flute": "winds", "trumpet": "winds",
    "alto sax": "winds", "tenor sax": "winds", "choir aahs": "voice", "voice oohs": "voice",
    "church organ": "organ",
}
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


def sounds_an_octave_below(segment, key_hz_):
    """Whether a note sounds an octave below its key: its rendering holds a partial at half the
    key's frequency within SUBOCTAVE_DB of the strongest of the partials at ½, 1, 2, 3 and 4
    times the key's frequency (each the peak within ±60 cents, Hann window, FFT zero-padded ×8).
    An organ's 16' rank does: the waveform's period is then twice the key's, and that is what a
    tuner measures."""
    length = len(segment)
    size = 1 << int(math.ceil(math.log2(8 * length)))
    magnitude = np.abs(np.fft.rfft(segment * np.hanning(length), size))

    def peak(hz):
        lo, hi = int(hz * 2 ** (-60 / 1200) * size / SR), int(hz * 2 ** (60 / 1200) * size / SR) + 1
        return float(magnitude[lo:hi].max()) if hi < len(magnitude) else 0.0
    strongest = max(peak(key_hz_ * k) for k in (0.5, 1, 2, 3, 4))
    return strongest > 0 and peak(key_hz_ / 2) >= strongest * 10 ** (-SUBOCTAVE_DB / 20)


def drop_silent_notes(files):
    """Removes the notes whose clean rendering stays under SILENT_DBFS over their scored part
    from the labels of every condition: the soundfont has no sample for that key, so there is
    no pitch to read (a tuner showing nothing there is right)."""
    for clean in [e for e in files if e["condition"] == "clean" and e["notes"] and e["instrument"] != SYNTHETIC]:
        x = corpus.read_wav(clean["path"])

        def sounds(note):
            scored = x[int((note["on"] + ONSET_GUARD) * SR):int((note["off"] - OFFSET_GUARD) * SR)]
            return len(scored) > 0 and 10 * math.log10(float(np.mean(scored ** 2)) + 1e-30) >= SILENT_DBFS
        kept = [note for note in clean["notes"] if sounds(note)]
        if len(kept) == len(clean["notes"]):
            continue
        unsounded = [note["key"] for note in clean["notes"] if not sounds(note)]
        base = clean["path"][:-len(".wav")]
        for entry in files:
            if entry is clean or entry["path"].startswith(base + "-"):
                entry["notes"] = kept
                entry["unsounded_keys"] = unsounded


def unsounded_summary(clean_files):
    """The notes `drop_silent_notes` left unlabelled, by soundfont and instrument, or "none"."""
    found = [f"{e['soundfont']}'s {e['instrument']} {', '.join(note_name(key) for key in e['unsounded_keys'])}"
             for e in clean_files if e.get("unsounded_keys")]
    return "; ".join(found) if found else "none"


def label_sounding_pitch(files):
    """Labels every note of an instrument of a soundfont an octave below its key when most of
    its sustained notes (isolated, so no other note rings into them) sound there
    (`sounds_an_octave_below` over each note's scored part): a property of the sample, like a
    16' organ stop. `written_hz` keeps the key's frequency; the measured pitches are redone."""
    for sustained in [e for e in files if e["condition"] == "clean" and e["kind"] == "sustained" and e["instrument"] != SYNTHETIC]:
        x = corpus.read_wav(sustained["path"])
        below = [sounds_an_octave_below(x[int((n["on"] + 0.08) * SR):int((n["off"] - OFFSET_GUARD) * SR)], n.get("written_hz", n["hz"]))
                 for n in sustained["notes"]]
        if 2 * sum(below) <= len(below):
            continue
        for clean in [e for e in files if e["condition"] == "clean" and e["soundfont"] == sustained["soundfont"]
                      and e["instrument"] == sustained["instrument"]]:
            x = x if clean is sustained else corpus.read_wav(clean["path"])
            for note in clean["notes"]:
                if "written_hz" not in note:
                    note["written_hz"], note["hz"] = note["hz"], note["hz"] / 2
                    note["measured_hz"] = measure_f0(x, note["on"], note["off"], note["hz"])
                    note["frame_references"] = frame_references(x, note)
            base = clean["path"][:-len(".wav")]
            for entry in files:
                if entry["path"].startswith(base + "-"):
                    entry["notes"] = clean["notes"]


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


def drum_song(seconds=10.0):
    """A GM drum pattern (channel 10) at 120 BPM: kick, snare, closed hats in eighths, a tom fill
    and a crash every two bars. No note: a tuner must show nothing."""
    song = Song(960).tempo(0.0, 120)
    track = song.track(channel=9)
    t, beat = 0.25, 0
    while t < seconds - 0.5:
        track.note(t, t + 0.1, 42, velocity=80)
        if beat % 2 == 0:
            track.note(t, t + 0.1, 36 if beat % 4 == 0 else 38, velocity=110)
        if beat % 16 == 0:
            track.note(t, t + 0.1, 49, velocity=100)
        if beat % 16 in (12, 13, 14, 15):
            track.note(t + 0.125, t + 0.2, (50, 48, 45, 41)[beat % 4], velocity=100)
        t += 0.25
        beat += 1
    return song, seconds


# Drum material beyond the GM pattern, for every soundfont: its kits in bank 128 (program on
# the drum channel, name; FluidR3, MuseScore General and TimGM6mb all have these seven), each
# playing `drum_fills_song` with fixed seeds (`drum_fills_seeds`): three per kit for the tuning
# part (FluidR3), one per kit for each held-out soundfont, never used while tuning. The
# orchestra kit (48) is left out: its keys 41–53 are timpani, which are tuned notes.
DRUM_KITS = ((0, "standard"), (8, "room"), (16, "power"), (24, "electronic"), (25, "tr-808"),
             (32, "jazz"), (40, "brush"))
# Seeds per kit on the tuning part: the drum gates were first chosen on the first set alone,
# and a set they had not seen read 92.6 % no note against the first's 96.2 % (docs/accuracy.md,
# pitch finding 39), so parameters are chosen on three.
TUNING_DRUM_SEED_SETS = 3
# GM drum keys by role (none of the pitched percussion from key 54 on but the cymbals):
TOMS = (41, 43, 45, 47, 48, 50)             # low floor tom … high tom
SNARES = (38, 40, 37, 39)                   # acoustic, electric, side stick, hand clap
CYMBALS = (49, 57, 51, 59, 53, 55, 52)      # crash 1 and 2, ride 1 and 2, ride bell, splash, Chinese
HATS = (42, 44, 46)                          # closed, pedal, open
KICKS = (35, 36)


def drum_fills_seeds(font_index, kit_number):
    """The fixed seeds of one kit's fills: 500–506, 520–526 and 540–546 for the first soundfont
    (FluidR3, the tuning part, where parameters are chosen), 600–606 and 700–706 for the
    held-out ones."""
    sets = TUNING_DRUM_SEED_SETS if font_index == 0 else 1
    return [500 + 100 * font_index + 20 * n + kit_number for n in range(sets)]


def drum_fills_song(kit, seed, seconds=10.0):
    """Drum material: one of a soundfont's kits (`kit`, a program on the drum
    channel) at 100–140 BPM, bar by bar a groove (kick, snare, hats or a ride), a tom fill in
    sixteenths (down, up or scattered over the six toms, the last tom left to ring), a snare
    roll (sixteenths or thirty-seconds, growing louder) or a bar of single strokes with rests
    between them (each stroke heard alone), crashes and splashes on the bars' first beats.
    Velocities 50–127. No note: a tuner must show nothing."""
    rng = random.Random(seed)
    bpm = rng.choice((100, 110, 120, 130, 140))
    song = Song(960).tempo(0.0, bpm)
    track = song.track(channel=9)
    track.program(0.0, kit)
    beat = 60.0 / bpm
    t = 0.25
    while t + 4 * beat < seconds - 0.5:
        kind = rng.choice(("groove", "fill", "fill", "roll", "strokes"))
        if rng.random() < 0.5:
            track.note(t, t + 0.1, rng.choice(CYMBALS[:2] + CYMBALS[5:]), velocity=rng.randint(80, 127))
        if kind == "groove":
            ride = rng.choice(HATS[:1] + CYMBALS[2:5])
            for eighth in range(8):
                at = t + eighth * beat / 2
                track.note(at, at + 0.1, ride, velocity=rng.randint(60, 100))
                if eighth % 4 == 0:
                    track.note(at, at + 0.1, rng.choice(KICKS), velocity=rng.randint(90, 120))
                if eighth % 4 == 2:
                    track.note(at, at + 0.1, rng.choice(SNARES), velocity=rng.randint(80, 127))
        elif kind == "fill":
            order = rng.choice(("down", "up", "scattered"))
            toms = sorted(TOMS, reverse=order == "down")
            for sixteenth in range(16):
                at = t + sixteenth * beat / 4
                key = rng.choice(TOMS) if order == "scattered" else toms[sixteenth * len(toms) // 16]
                if rng.random() < 0.85:
                    track.note(at, at + 0.1, key, velocity=rng.randint(70, 127))
        elif kind == "roll":
            key, steps = rng.choice(SNARES[:2]), rng.choice((16, 32))
            for step in range(steps):
                at = t + step * 4 * beat / steps
                track.note(at, at + 0.05, key, velocity=50 + (77 * step) // steps)
        else:
            for stroke in range(4):
                at = t + stroke * beat
                track.note(at, at + 0.1, rng.choice(TOMS + SNARES + CYMBALS + HATS), velocity=rng.randint(60, 127))
        t += 4 * beat
    return song, seconds


def soundfont_slug(name):
    return name.lower().replace(" ", "-")


def plan_corpus(quick):
    """[(base name, instrument, kind, soundfont name, part, MIDI song or None, notes, seconds)]."""
    instruments = [i for i in INSTRUMENTS if not quick or i[0] in QUICK_INSTRUMENTS]
    plans = []
    for font_index, (font, _path, part) in enumerate(SOUNDFONTS):
        for index, (name, program, low, high, step) in enumerate(instruments):
            slug = f"{soundfont_slug(font)}-{name.replace(' ', '-')}"
            song, notes, duration = sustained_song(program, low, high, step if not quick else step * 2)
            plans.append((f"{slug}-sustained", name, "sustained", font, part, song, notes, duration))
            for m in range(1 if quick else 2):
                song, notes, duration = melody_song(program, low, high, seed=1000 + 10 * index + m, detuned=m == 1)
                plans.append((f"{slug}-melody{m}", name, "melody", font, part, song, notes, duration))
        song, duration = drum_song(5 if quick else 10)
        plans.append((f"{soundfont_slug(font)}-drums", f"GM drum kit ({font})", "no note", font, part, song, [], duration))
        if not quick:
            for number, (kit, kit_name) in enumerate(DRUM_KITS):
                for n, seed in enumerate(drum_fills_seeds(font_index, number)):
                    song, duration = drum_fills_song(kit, seed=seed)
                    plans.append((f"{soundfont_slug(font)}-drums-{kit_name}{f'-{n + 1}' if n else ''}",
                                  f"{kit_name} drum kit, fills ({font})", "no note", font, part, song, [], duration))
    plans.append(("synthetic-sustained", SYNTHETIC, "sustained", "synthetic", "tuning", None, None, None))
    return plans


def render_song(work, base, font, song, duration):
    """Renders a MIDI song with a soundfont to `work/base.wav`, cut to `duration` and peaking at
    −3 dBFS; returns the path and the samples."""
    mid, wav = os.path.join(work, base + ".mid"), os.path.join(work, base + ".wav")
    song.save(mid)
    corpus.render_midi(mid, wav, soundfont=dict((f, p) for f, p, _ in SOUNDFONTS)[font])
    x = corpus.normalise(corpus.read_wav(wav)[: int(duration * SR)], -3.0)
    corpus.write_wav(wav, x)
    return wav, x


def build_corpus(work, quick, jobs):
    """Renders (or reuses, when `labels.json` was written by the same corpus version and
    options and every file is there) the labelled corpus in `work`; returns its entries."""
    os.makedirs(work, exist_ok=True)
    labels_path = os.path.join(work, "labels.json")
    key = hashlib.sha1(repr((CORPUS_VERSION, quick, SOUNDFONTS, CONDITIONS)).encode()).hexdigest()
    if os.path.exists(labels_path):
        with open(labels_path) as handle:
            cached = json.load(handle)
        if cached.get("key") == key and all(os.path.exists(e["path"]) for e in cached["files"]):
            print(f"reusing the corpus in {work}", file=sys.stderr)
            # No-note files added to the plan since (drum material) are rendered alone: they
            # have no labels and no noisy copies, so nothing else in the cache changes.
            known = {os.path.basename(e["path"]) for e in cached["files"]}
            added = [plan for plan in plan_corpus(quick) if not plan[6] and plan[5] is not None and plan[0] + ".wav" not in known]
            for base, name, kind, font, part, song, _notes, duration in added:
                print(f"rendering {base} (new no-note file) ...", file=sys.stderr)
                path = render_song(work, base, font, song, duration)[0]
                cached["files"].append({"instrument": name, "kind": kind, "soundfont": font, "part": part, "notes": [],
                                        "path": path, "condition": "clean", "rate": SR})
            if cached.get("label_rules") != LABEL_RULES:
                print("relabelling the cached corpus (labelling rules changed) ...", file=sys.stderr)
                drop_silent_notes(cached["files"])
                label_sounding_pitch(cached["files"])
            if added or cached.get("label_rules") != LABEL_RULES:
                with open(labels_path, "w") as handle:
                    json.dump({"key": key, "label_rules": LABEL_RULES, "files": cached["files"]}, handle, indent=1)
            return cached["files"]

    for name in os.listdir(work):
        if name.endswith(".frames.json"):
            os.remove(os.path.join(work, name))  # the cached outputs of the other tools
    plans = plan_corpus(quick)
    synthetic_notes, synthetic_duration, synthetic = synthetic_tones(step=4 if not quick else 8)

    def render(plan):
        base, name, kind, font, part, song, notes, duration = plan
        if song is None:
            notes, duration = synthetic_notes, synthetic_duration
            x = corpus.normalise(synthetic[: int(duration * SR)], -3.0)
            corpus.write_wav(os.path.join(work, base + ".wav"), x)
        else:
            x = render_song(work, base, font, song, duration)[1]
        for note in notes:
            note["measured_hz"] = measure_f0(x, note["on"], note["off"], note["hz"])
            note["frame_references"] = frame_references(x, note)
        return base, name, kind, font, part, notes, x

    with futures.ThreadPoolExecutor(jobs) as pool:
        rendered = list(pool.map(render, plans))
    files = []

    def add(path, base_entry, condition, rate=SR):
        files.append(dict(base_entry, path=path, condition=condition, rate=rate))

    # A labelled file's noise seed is its place among the labelled files only: no-note files
    # added to the plan (drum material, rendered alone into a cached corpus) move no seed.
    labelled = 0
    for base, name, kind, font, part, notes, x in rendered:
        number = labelled
        labelled += 1 if notes else 0
        entry = {"instrument": name, "kind": kind, "soundfont": font, "part": part, "notes": notes}
        clean_path = os.path.join(work, base + ".wav")
        add(clean_path, entry, "clean")
        if not notes:
            continue
        mask = np.zeros(len(x), dtype=bool)
        for note in notes:
            mask[int(note["on"] * SR):int(note["off"] * SR)] = True
        for c, snr in enumerate(PINK_SNRS):
            rng = np.random.default_rng(10_000 + 100 * number + c)
            path = os.path.join(work, f"{base}-pink{snr}dB.wav")
            corpus.write_wav(path, corpus.add_noise(x, snr, "pink", rng, mask))
            add(path, entry, f"pink {snr} dB")
        path = os.path.join(work, f"{base}-quiet.wav")
        corpus.write_wav(path, corpus.normalise(x, QUIET_PEAK_DBFS))
        add(path, entry, "quiet −40 dBFS")
        path = os.path.join(work, f"{base}-44k1.wav")
        subprocess.run(["sox", "-q", "-D", clean_path, "-r", str(LOW_RATE), path], check=True)
        add(path, entry, "44.1 kHz", LOW_RATE)
    # Files without a note: noise at two levels, and digital silence; one set per part (seeds differ).
    seconds = 5 if quick else 10
    for part, seed in (("tuning", 777), ("held-out", 888)):
        for c, (kind_noise, level) in enumerate([("white", -20), ("white", -40), ("pink", -20), ("pink", -40)]):
            rng = np.random.default_rng(seed + c)
            path = os.path.join(work, f"noise-{part}-{kind_noise}{-level}dBFS.wav")
            corpus.write_wav(path, corpus.noise(kind_noise, seconds * SR, rng) * 10 ** (level / 20))
            add(path, {"instrument": f"{kind_noise} noise {level} dBFS", "kind": "no note", "soundfont": "–",
                       "part": part, "notes": []}, "noise")
    path = os.path.join(work, "silence.wav")
    corpus.write_wav(path, np.zeros(seconds * SR))
    for part in ("tuning", "held-out"):
        add(path, {"instrument": "silence", "kind": "no note", "soundfont": "–", "part": part, "notes": []}, "silence")
    drop_silent_notes(files)
    label_sounding_pitch(files)
    with open(labels_path, "w") as handle:
        json.dump({"key": key, "label_rules": LABEL_RULES, "files": files}, handle, indent=1)
    return files


# ------------------------------------------------------------------------------------------
# Tools
# ------------------------------------------------------------------------------------------

PITCH_RE = re.compile(r'"pitch":(null|\{[^}]*\})')
TIME_RE = re.compile(r'^\{"time":([0-9.]+)')


def run_spectrum(binary, entry, options=()):
    """[(time of the newest sample of the frame, Hz or 0)] from `spectrum analyze` JSON lines."""
    out = subprocess.run([binary, "analyze", entry["path"], *options], check=True, capture_output=True, text=True).stdout
    frames = []
    for line in out.splitlines():
        t = float(TIME_RE.match(line).group(1))
        # "pitch" follows the band and peak numbers; search after them (fields may follow it).
        p = PITCH_RE.search(line, line.find('"level"')).group(1)
        frames.append((t, 0.0 if p == "null" else json.loads(p)["hz"]))
    return frames


CACHE_HITS = []  # one entry per reference-tool output read from the cache (the report says so)


def cached(tool, path, run):
    """`run()`'s frames, kept beside the corpus file (the reference tools do not change between
    runs; the corpus is rebuilt, and these removed, when it changes)."""
    cache = f"{path}.{tool.replace(' ', '-')}.frames.json"
    if os.path.exists(cache):
        CACHE_HITS.append(cache)
        with open(cache) as handle:
            return [tuple(f) for f in json.load(handle)]
    frames = run()
    # Written whole, then renamed: the same file may be scored twice at once (both parts'
    # digital silence), and a reader must never see a half-written cache.
    with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(cache), suffix=".tmp", delete=False) as handle:
        json.dump(frames, handle)
    os.replace(handle.name, cache)
    return frames


def aubio_command(method, rate):
    hop = HOP if rate == SR else LOW_RATE_HOP
    return ["aubiopitch", "-p", method, "-B", str(AUBIO_BUFFER), "-H", str(hop), "-r", str(rate),
            "-s", "-70", "-u", "Hz", "-i"]


def run_aubio(method, entry):
    """aubiopitch prints the time of the first sample of the hop just read; +hop gives the
    newest sample, the same convention as Spectrum's frame time. 0 Hz = no pitch."""
    command = aubio_command(method, entry["rate"])
    hop = int(command[command.index("-H") + 1])

    def run():
        out = subprocess.run(command + [entry["path"]], check=True, capture_output=True, text=True).stdout
        frames = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2:
                frames.append((float(parts[0]) + hop / entry["rate"], max(0.0, float(parts[1]))))
        return frames
    return cached(f"aubio-{method}", entry["path"], run)


PYIN_FRAME = 2048  # 85 ms at 24 kHz: 3.2 periods of 38 Hz
PYIN_HOP = 400


def run_pyin(path):
    """librosa.pyin (38–2200 Hz, its default 10-cent resolution) on a 24 kHz copy, frames not
    centred: a frame's time is its newest sample. Unvoiced frames = 0 Hz."""
    def run():
        import librosa  # noqa: PLC0415 (only where pYIN runs)
        x, _ = librosa.load(path, sr=PYIN_RATE, mono=True)
        f0, voiced, _ = librosa.pyin(x, fmin=38, fmax=2200, sr=PYIN_RATE, frame_length=PYIN_FRAME,
                                     hop_length=PYIN_HOP, center=False)
        return [((i * PYIN_HOP + PYIN_FRAME) / PYIN_RATE, float(f) if v and f == f else 0.0)
                for i, (f, v) in enumerate(zip(f0, voiced))]
    return cached("pyin", path, run)


def pyin_selected(entry):
    """pYIN is ~50× slower than the others: it runs on the first melody of each instrument and
    soundfont in `PYIN_CONDITIONS`, and on the no-note files."""
    return ("-melody0" in os.path.basename(entry["path"]) and entry["condition"] in PYIN_CONDITIONS) or not entry["notes"]


def librosa_version():
    try:
        import librosa  # noqa: PLC0415
        return librosa.__version__
    except ImportError:
        return None


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
    voiced, locks, firsts, excursions = [], [], [], 0
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
        # The display: the first reading shown for the note (within 50 cents of its label)
        # against where it settles (the median from 150 ms after note-on), and one-frame
        # excursions: a frame more than 10 cents from both neighbours, which agree within 10.
        shown = [(t, f) for t, f in zip(times[inside], hz[inside]) if f > 0]
        settled = [f for t, f in shown if t >= note["on"] + 0.150]
        first = next((f for t, f in zip(times[after], hz[after]) if f > 0 and abs(cents(f, note["hz"])) <= 50), None)
        firsts.append(None if first is None or not settled else cents(first, float(np.median(settled))))
        track = hz[inside]
        for k in range(1, len(track) - 1):
            a, b, c = track[k - 1], track[k], track[k + 1]
            if a > 0 and b > 0 and c > 0 and abs(cents(a, c)) <= 10 and min(abs(cents(b, a)), abs(cents(b, c))) > 10:
                excursions += 1
    return {"voiced": voiced, "locks": locks, "firsts": firsts, "excursions": excursions,
            "frames": len(frames), "pitched": int(np.sum(hz > 0))}


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    index = q / 100 * (len(values) - 1)
    lo, hi = int(math.floor(index)), int(math.ceil(index))
    if math.isinf(values[hi]) or math.isinf(values[lo]):
        return math.inf if index > lo or math.isinf(values[lo]) else values[lo]
    return values[lo] + (values[hi] - values[lo]) * (index - lo)


def metrics(results, entries, select, note_select=lambda note: True):
    """Metrics over the files chosen by `select(entry)` (those a tool ran on: `results` holds
    None for the others) and their notes chosen by `note_select(note)`."""
    errors, measured_errors, steady_errors, voiced_total, locks_all, locks_high = [], [], [], 0, [], []
    steady_total, excursions, firsts = 0, 0, []
    for entry, result in zip(entries, results):
        if not entry["notes"] or result is None or not select(entry):
            continue
        chosen = [note_select(note) for note in entry["notes"]]
        voiced_total += sum(1 for v in result["voiced"] if chosen[v[0]])
        steady_total += sum(len(steady_references(note)) for note, c in zip(entry["notes"], chosen) if c)
        for n, error, measured, steady in result["voiced"]:
            if error is not None and chosen[n]:
                errors.append(error)
                if measured is not None:
                    measured_errors.append(measured)
                if steady is not None:
                    steady_errors.append(steady)
        excursions += result["excursions"] if all(chosen) else 0
        firsts += [f for f, c in zip(result["firsts"], chosen) if c and f is not None]
        for note, lock, c in zip(entry["notes"], result["locks"], chosen):
            if not c:
                continue
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
        "within50": 100 * float(np.sum(absolute <= 50)) / voiced_total if voiced_total else None,
        "first_within5": 100 * float(np.mean(np.abs(firsts) <= 5)) if firsts else None,
        "excursions": 1000 * excursions / voiced_total if voiced_total else None,
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
        if entry["notes"] or result is None or not select(entry):
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


NOTE_NAMES = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]


def note_name(key):
    return f"{NOTE_NAMES[key % 12]}{key // 12 - 1}"


def package_version(package):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def sounds_in_searched_range(note):
    """Whether a note sounds at or above the lowest pitch the tools search: one under it
    (TimGM6mb's organ relabelled to its 16' rank: its keys E1 to C♯2 sound at 20.6–34.6 Hz,
    under the issue's E1) cannot be read by configuration; the rows that ask this leave such
    notes out, for every tool alike, and appear only in a part that holds such notes."""
    return note["hz"] >= LOWEST_SEARCHED_HZ


# Rows of the condition tables: (label, file selection, note selection).
def condition_rows():
    everything = lambda e: True  # noqa: E731
    rows = [("all conditions", everything, None),
            # Issue 16 measured its 89.0 % over clean, detuned, noisy (10 dB), quiet, 44.1 kHz
            # and melodies, with pink 0 dB (7.6 % then) reported apart.
            (f"all conditions but {ZERO_DB} (the issue's own list)", lambda e: e["condition"] != ZERO_DB, None)]
    rows += [(f"all conditions, notes sounding from {LOWEST_SEARCHED_HZ:.0f} Hz (the range searched)", everything, sounds_in_searched_range),
             (f"all conditions but {ZERO_DB}, notes sounding from {LOWEST_SEARCHED_HZ:.0f} Hz", lambda e: e["condition"] != ZERO_DB,
              sounds_in_searched_range)]
    for condition in CONDITIONS:
        rows.append((condition, lambda e, c=condition: e["condition"] == c, None))
    rows.append(("detuned notes (±7, ±23 ¢), clean", lambda e: e["condition"] == "clean", lambda n: abs(n["cents"]) > 0.5))
    rows.append(("melodies, clean", lambda e: e["condition"] == "clean" and e["kind"] == "melody", None))
    return rows


def part_report(add, res, entries, part, names, written):
    """The tables of one part (`tuning` or `held-out`) of the corpus; `written` holds the tools'
    scores against the written keys (notes that sound an octave below their key not relabelled)."""
    S = names[0]
    in_part = lambda e: e["part"] == part and e["instrument"] != SYNTHETIC  # noqa: E731
    add("| condition | voiced frames | " + " | ".join(f"{t} ≤ 50 ¢ %" for t in names) + " |")
    add("| --- | --- |" + " --- |" * len(names))
    below_searched = any(not sounds_in_searched_range(n) for e in entries if in_part(e) for n in e["notes"])
    for label, select, note_select in condition_rows():
        if note_select is sounds_in_searched_range and not below_searched:
            continue
        sel = lambda e, s=select: in_part(e) and s(e)  # noqa: E731
        kwargs = {"note_select": note_select} if note_select else {}
        p = {t: metrics(res[t], entries, sel, **kwargs) for t in names}
        add(f"| {label} | {p[S]['voiced']} | " + " | ".join(fmt(p[t]["within50"]) for t in names) + " |")
    add("")
    clean_sustained = lambda e: in_part(e) and e["condition"] == "clean" and e["kind"] == "sustained"  # noqa: E731
    clean = lambda e: in_part(e) and e["condition"] == "clean"  # noqa: E731
    every = {t: metrics(res[t], entries, in_part) for t in names}
    steady = {t: metrics(res[t], entries, clean_sustained) for t in names}
    cleanm = {t: metrics(res[t], entries, clean) for t in names}
    noise = {t: no_note_rate(res[t], entries, lambda e: e["part"] == part and e["condition"] == "noise") for t in names}
    drums = {t: no_note_rate(res[t], entries, lambda e: e["part"] == part and e["kind"] == "no note"
                             and e["condition"] == "clean") for t in names}
    silence = {t: no_note_rate(res[t], entries, lambda e: e["part"] == part and e["condition"] == "silence") for t in names}
    add("| metric | " + " | ".join(names) + " | target (issue 16) |")
    add("| --- |" + " --- |" * (len(names) + 1))
    add("| octave errors, all conditions (share of voiced frames) | " + " | ".join(fmt(every[t]["octave"], 2, " %") for t in names) + " | ≤ 0.3 % |")
    for label, exclude in (("TimGM6mb's church organ", lambda e: e["soundfont"] == "TimGM6mb" and e["instrument"] == "church organ"),
                           ("any church organ", lambda e: e["instrument"] == "church organ")):
        if not any(in_part(e) and exclude(e) for e in entries):
            continue
        rest = {t: metrics(res[t], entries, lambda e, x=exclude: in_part(e) and not x(e)) for t in names}
        add(f"| octave errors, all conditions, without {label} | " + " | ".join(fmt(rest[t]["octave"], 2, " %") for t in names) + " | |")
    but_zero_db = {t: metrics(res[t], entries, lambda e: in_part(e) and e["condition"] != ZERO_DB) for t in names}
    add(f"| octave errors, all conditions but {ZERO_DB} | " + " | ".join(fmt(but_zero_db[t]["octave"], 2, " %") for t in names) + " | |")
    if below_searched:
        searched = {t: metrics(res[t], entries, in_part, note_select=sounds_in_searched_range) for t in names}
        add(f"| octave errors, all conditions, notes sounding from {LOWEST_SEARCHED_HZ:.0f} Hz (the range searched) | "
            + " | ".join(fmt(searched[t]["octave"], 2, " %") for t in names) + " | |")
    if any(in_part(e) and "written_hz" in n for e in entries for n in e["notes"]):
        against_keys = {t: metrics(written[t], entries, in_part) for t in names}
        add("| octave errors, all conditions, against the written key (notes sounding an octave below their key not relabelled) | "
            + " | ".join(fmt(against_keys[t]["octave"], 2, " %") for t in names) + " | |")
    add("| median \\|error\\| on steady frames of clean sustained notes, vs the frame's measured pitch | "
        + " | ".join(fmt(steady[t]["median_steady"], 2, " ¢") for t in names) + " | ≤ 0.7 ¢ |")
    add("| median \\|error\\|, clean, all reported frames, vs label | " + " | ".join(fmt(cleanm[t]["median"], 2, " ¢") for t in names) + " | |")
    add(f"| lock time, clean notes > 100 Hz, median ({cleanm[S]['notes_high']} notes) | "
        + " | ".join(ms(cleanm[t]["lock_high_median"]) for t in names) + " | ≤ 50 ms |")
    add("| a note's first shown reading within 5 ¢ of where it settles, clean (share of notes) | "
        + " | ".join(fmt(cleanm[t]["first_within5"], 1, " %") for t in names) + " | |")
    add("| one-frame excursions > 10 ¢ during a note, clean (per 1000 voiced frames) | "
        + " | ".join(fmt(cleanm[t]["excursions"], 2) for t in names) + " | 0 |")
    add("| no note on noise-only files | " + " | ".join(fmt(noise[t], 2, " %") for t in names) + " | ≥ 99 % |")
    fills = any(e["part"] == part and "drum kit, fills" in e["instrument"] for e in entries)
    material = (f"the GM kit pattern and {len(DRUM_KITS)} kits' fills per soundfont; tuning part: {TUNING_DRUM_SEED_SETS} seeds each"
                if fills else "the GM kit pattern alone: `--quick` renders no kits' fills")
    add(f"| no note on drums ({material}) | " + " | ".join(fmt(drums[t], 2, " %") for t in names) + " | ≥ 99 % |")
    if fills:
        pattern = {t: no_note_rate(res[t], entries, lambda e: e["part"] == part and e["kind"] == "no note"
                                   and e["instrument"].startswith("GM drum kit")) for t in names}
        add("| no note on the GM drum kit pattern alone | " + " | ".join(fmt(pattern[t], 2, " %") for t in names) + " | |")
    add("| no note on digital silence | " + " | ".join(fmt(silence[t], 2, " %") for t in names) + " | 100 % |")
    add("")
    add("By family and soundfont, all conditions, share of voiced frames within 50 cents (%):")
    add("")
    add("| family / soundfont | voiced frames | " + " | ".join(names) + " |")
    add("| --- | --- |" + " --- |" * len(names))
    for family in sorted(set(FAMILIES.values())):
        sel = lambda e, f=family: in_part(e) and FAMILIES.get(e["instrument"]) == f  # noqa: E731
        p = {t: metrics(res[t], entries, sel) for t in names}
        add(f"| {family} | {p[S]['voiced']} | " + " | ".join(fmt(p[t]["within50"]) for t in names) + " |")
    for font, _path, font_part in SOUNDFONTS:
        if font_part != part:
            continue
        sel = lambda e, f=font: in_part(e) and e["soundfont"] == f  # noqa: E731
        p = {t: metrics(res[t], entries, sel) for t in names}
        add(f"| {font} | {p[S]['voiced']} | " + " | ".join(fmt(p[t]["within50"]) for t in names) + " |")


    add("")
    add("Octave errors by family and soundfont, all conditions (share of voiced frames, %):")
    add("")
    add("| family / soundfont | voiced frames | " + " | ".join(names) + " |")
    add("| --- | --- |" + " --- |" * len(names))
    groups = [(family, lambda e, f=family: FAMILIES.get(e["instrument"]) == f) for family in sorted(set(FAMILIES.values()))]
    groups += [(font, lambda e, f=font: e["soundfont"] == f) for font, _path, font_part in SOUNDFONTS if font_part == part]
    for label, chosen in groups:
        p = {t: metrics(res[t], entries, lambda e, c=chosen: in_part(e) and c(e)) for t in names}
        add(f"| {label} | {p[S]['voiced']} | " + " | ".join(fmt(p[t]["octave"], 2) for t in names) + " |")


def relabelled_summary(clean_files):
    """'N notes: soundfont instrument n, …' of the notes labelled an octave below their key."""
    counts = {}
    for e in clean_files:
        n = sum(1 for note in e["notes"] if "written_hz" in note)
        if n:
            counts[f"{e['soundfont']} {e['instrument']}"] = counts.get(f"{e['soundfont']} {e['instrument']}", 0) + n
    total = sum(counts.values())
    return f"{total} notes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) if total else "no note"


def report(entries, tools, written, command, elapsed, quick, loads, pyin_note, options=()):
    names = list(tools)
    lines = []
    add = lines.append
    labelled = [e for e in entries if e["notes"]]
    clean_files = [e for e in labelled if e["condition"] == "clean"]
    add(f"Generated by `scripts/accuracy-pitch` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        f"{' (**--quick subset**)' if quick else ''}; run time {elapsed / 60:.1f} min (corpus, all tools, scoring; "
        f"the release build not counted{'; the corpus and ' + str(len(CACHE_HITS)) + ' reference-tool outputs reused from the cache of an earlier run' if CACHE_HITS else ''}; under `nice`, load average {loads[0]:.1f} at the start and {loads[1]:.1f} at the end: "
        "the machine was shared).")
    add("")
    add(f"- Machine: {corpus.machine()}")
    add(f"- Command: `{command}`")
    add(f"- Spectrum: `spectrum analyze FILE{''.join(' ' + o for o in options)}` (release build, default preset: 38–2200 Hz, A4 = 440 Hz, hop 800 at 48 kHz, 735 at 44.1 kHz).")
    add(f"- aubio yin / yinfft: `{' '.join(aubio_command('yinfft', SR))} FILE` with `-p yinfast` (aubio's faster YIN, the same estimates) or `-p yinfft` "
        f"(`-H {LOW_RATE_HOP} -r {LOW_RATE}` at 44.1 kHz; aubio-tools {package_version('aubio-tools')}); its time stamp + one hop = "
        "newest sample, the same convention as Spectrum's `time`.")
    add(f"- pYIN: {pyin_note}")
    add("")
    add("### Corpus")
    add("")
    fonts = ", ".join(f"{f} (`{p}`, {part})" for f, p, part in SOUNDFONTS)
    add(f"{len(clean_files)} clean labelled files ({sum(len(e['notes']) for e in clean_files)} notes) rendered by "
        f"FluidSynth {package_version('fluidsynth')} (reverb and chorus off, 48 kHz, mono, peak −3 dBFS) from generated "
        f"MIDI files with {fonts}, and a synthetic control (harmonic tones, exact truth; tuning part). Every file is also "
        f"scored with pink noise at {' and '.join(str(s) for s in PINK_SNRS)} dB SNR (noise RMS against the signal's "
        f"RMS between note-ons and note-offs), scaled to peak at {QUIET_PEAK_DBFS:.0f} dBFS (\"quiet\"), and resampled "
        f"to 44.1 kHz by sox: {len(labelled)} labelled files. Per soundfont and instrument: one file of sustained notes "
        "(1.2 s, 0.4 s apart) across its range, cycling through detunings "
        f"{', '.join(f'{c:+d}' for c in SUSTAINED_DETUNE)} cents by pitch bend (bend range 1 semitone, so a bend value v "
        "is exactly (v − 8192)/8192 × 100 cents); two melodies of 12 notes (0.25–0.7 s, legato or short gaps, leaps up "
        "to an octave; the second bent by ±7 or ±23 cents). Labels: MIDI note-on/off times and "
        "440 × 2^((key − 69 + cents/100)/12) Hz, halved for an instrument whose sustained notes mostly sound an octave below "
        f"their key (a partial at half the key's frequency within {SUBOCTAVE_DB:.0f} dB of the strongest, measured on the clean "
        "rendering: an organ's 16' rank; "
        f"{relabelled_summary(clean_files)}); a note whose clean rendering stays under {SILENT_DBFS:.0f} dBFS RMS over its "
        f"scored part is not labelled: the soundfont has no sample for its key ({unsounded_summary(clean_files)}). "
        "No-note files, one set per part: white and pink noise at −20 and "
        "−40 dBFS RMS, digital silence, and a GM drum pattern rendered with each soundfont (kick, snare, hats, a tom fill "
        "and a crash every two bars); and each soundfont's "
        + ", ".join(name for _kit, name in DRUM_KITS) + " kits (bank 128; not the orchestra kit, whose toms are "
        f"timpani) playing 10 s each of random bars with fixed seeds, other seeds for each soundfont ({TUNING_DRUM_SEED_SETS} per kit "
        "on the tuning part, one held out): grooves, tom fills in sixteenths, snare rolls, "
        "single strokes with rests, crashes, splashes and rides (`drum_fills_song`).")
    add("")
    add("| instrument | family | GM program | range | notes per soundfont |")
    add("| --- | --- | --- | --- | --- |")
    for name, program, low, high, _ in INSTRUMENTS:
        counts = {font: sum(len(e["notes"]) for e in clean_files if e["instrument"] == name and e["soundfont"] == font)
                  for font, _path, _part in SOUNDFONTS}
        common = collections.Counter(counts.values()).most_common(1)[0][0] if counts else 0
        odd = ", ".join(f"{font} {count}" for font, count in counts.items() if count != common)
        if common:
            add(f"| {name} | {FAMILIES[name]} | {program + 1} | {note_name(low)} {key_hz(low):.1f} Hz – "
                f"{note_name(high)} {key_hz(high):.0f} Hz | {common}{f' ({odd}: unsounded notes unlabelled)' if odd else ''} |")
    add("")
    add("### Scoring rules")
    add("")
    add(f"- Voiced frames: frames whose time lies in [note-on + {ONSET_GUARD * 1000:.0f} ms, note-off − "
        f"{OFFSET_GUARD * 1000:.0f} ms] of a labelled note. Error = 1200·log2(reported / label) cents.")
    add("- **≤ 50 ¢ %** (raw pitch accuracy): share of all voiced frames (reported or not) whose reported pitch is "
        "within 50 cents of the label.")
    add("- Octave errors: voiced frames whose error is within 50 cents of ±1200 or ±2400, as a share of all voiced frames.")
    add(f"- Lock time: from note-on to the first frame whose pitch is within {LOCK_TOLERANCE:.0f} cents of the label "
        f"and stays so for {LOCK_FRAMES} frames (\"never\" counts as infinitely late). It includes the instrument's attack.")
    add(f"- Steady frames: the clean rendering's pitch is measured for every frame over the window the tuner reads "
        f"(the newest {TUNER_WINDOW} samples; 6 periods about the same centre below 103 Hz: the fundamental's "
        "interpolated peak in a ×8 zero-padded FFT, or the median of f_k/k when the fundamental is 20 dB under the "
        f"strongest of the first six harmonics); a frame is steady when that pitch and its neighbours' span less than "
        f"{STEADY_CENTS:.0f} cents. Vibrato, scoops and the soundfonts' own tuning make the label no truth to a cent.")
    add("- No note: share of frames with no reported pitch in the no-note files.")
    add(f"- Notes sounding from {LOWEST_SEARCHED_HZ:.0f} Hz: the rows so named leave out notes that sound under the lowest pitch "
        f"Spectrum and pYIN are run to find ({LOWEST_SEARCHED_HZ:.0f} Hz; only TimGM6mb's organ, relabelled to its 16' rank, has such "
        "notes: its keys E1 to C♯2 sound at 20.6–34.6 Hz, under the E1 the corpus is built from), for every tool alike. "
        "The rows without that qualifier count them, and stay the headline.")
    add("- First shown reading: the first frame after note-on within 50 cents of the label, against the median of the "
        "note's frames from 150 ms after note-on (the settled reading). One-frame excursion: a frame of a note more than "
        "10 cents from both neighbours while they agree within 10 cents.")
    add("")
    add("### Held-out part (MuseScore General, TimGM6mb): the headline")
    add("")
    add("Nothing in the tuner was chosen on these files.")
    add("")
    part_report(add, tools, entries, "held-out", names, written)
    add("")
    add("### Tuning part (FluidR3 GM): where parameters are chosen")
    add("")
    part_report(add, tools, entries, "tuning", names, written)
    synthetic = {t: metrics(tools[t], entries, lambda e: e["instrument"] == SYNTHETIC and e["condition"] == "clean") for t in names}
    add("")
    add("Synthetic control (harmonic tones E1–C7, exact truth), clean: median \\|error\\| "
        + ", ".join(f"{t} {fmt(synthetic[t]['median'], 2, ' ¢')}" for t in names)
        + "; a note's first shown reading within 5 ¢ of where it settles (share of notes; no vibrato or scoop "
        + "moves these notes, so this measures the display alone) "
        + ", ".join(f"{t} {fmt(synthetic[t]['first_within5'], 1, ' %')}" for t in names) + ".")
    pyin = [t for t in names if t.startswith("pYIN")]
    if pyin:
        add("")
        add("### All four on pYIN's subset (the first melody of each instrument and soundfont, no-note files)")
        add("")
        add("| part, condition | voiced frames | " + " | ".join(f"{t} ≤ 50 ¢ %" for t in names) + " |")
        add("| --- | --- |" + " --- |" * len(names))
        for part in ("held-out", "tuning"):
            for condition in PYIN_CONDITIONS:
                sel = lambda e, c=condition, p=part: pyin_selected(e) and e["part"] == p and e["condition"] == c \
                    and e["instrument"] != SYNTHETIC  # noqa: E731
                p = {t: metrics(tools[t], entries, sel) for t in names}
                add(f"| {part}, {condition} | {p[names[0]]['voiced']} | " + " | ".join(fmt(p[t]["within50"]) for t in names) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small subset (5 instruments, one melody each)")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "spectrum-accuracy-pitch"),
                        help="corpus cache (outside git); reused while the corpus is unchanged")
    parser.add_argument("--spectrum", default=".build/release/spectrum")
    parser.add_argument("--doc", default="docs/accuracy.md", help="document to update between the pitch markers")
    parser.add_argument("--no-doc", action="store_true", help="print the report instead of updating the document")
    parser.add_argument("--no-pyin", action="store_true", help="skip librosa's pYIN (the slowest part)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--spectrum-option", action="append", default=[], metavar="ARG",
                        help="an argument for `spectrum analyze` (repeat: --spectrum-option=--preset --spectrum-option=x.yaml), "
                             "to try parameters on the tuning part")
    parser.add_argument("--command", default="scripts/accuracy-pitch")
    args = parser.parse_args()
    started = time.time()
    load_start = os.getloadavg()[0]

    print(f"building corpus in {args.work} ...", file=sys.stderr)
    entries = build_corpus(args.work, args.quick, args.jobs)
    print(f"corpus: {len(entries)} files ({time.time() - started:.0f} s); running the tools ...", file=sys.stderr)
    with futures.ThreadPoolExecutor(args.jobs) as pool:
        frames = {
            "Spectrum": list(pool.map(lambda e: run_spectrum(args.spectrum, e, args.spectrum_option), entries)),
            "aubio yin": list(pool.map(lambda e: run_aubio("yinfast", e), entries)),
            "aubio yinfft": list(pool.map(lambda e: run_aubio("yinfft", e), entries)),
        }
    print(f"Spectrum and aubio done ({time.time() - started:.0f} s)", file=sys.stderr)
    version = None if args.no_pyin else librosa_version()
    if version:
        chosen = [i for i, e in enumerate(entries) if pyin_selected(e)]
        # pYIN runs in worker processes: its cache hits are counted here.
        CACHE_HITS.extend(p for p in (f"{entries[i]['path']}.pyin.frames.json" for i in chosen) if os.path.exists(p))
        with futures.ProcessPoolExecutor(args.jobs) as pool:
            results = dict(zip(chosen, pool.map(run_pyin, [entries[i]["path"] for i in chosen])))
        frames["pYIN"] = [results.get(i) for i in range(len(entries))]
        pyin_note = (f"`librosa.pyin(fmin=38, fmax=2200, frame_length={PYIN_FRAME}, hop_length={PYIN_HOP}, "
                     f"center=False)` on a {PYIN_RATE // 1000} kHz copy (librosa {version}, PyPI); ~50× slower than the "
                     f"others, so run on the first melody of each instrument and soundfont in {', '.join(PYIN_CONDITIONS)} and on the no-note files only "
                     "(– where it did not run; its numbers in the tables above are over that subset).")
        print(f"pYIN done ({time.time() - started:.0f} s)", file=sys.stderr)
    else:
        pyin_note = "not run (`--no-pyin`, or librosa not importable)."
    tools = {name: [None if f is None else score_file(e, f) for e, f in zip(entries, per_file)]
             for name, per_file in frames.items()}
    with open(os.path.join(args.work, "details.json"), "w") as handle:
        json.dump([{"path": e["path"], "instrument": e["instrument"], "condition": e["condition"], "part": e["part"],
                    "notes": [{"key": n["key"], "cents": n["cents"], "hz": n["hz"], "on": n["on"], "off": n["off"],
                               **{f"{t} errors": [v[1] for v in tools[t][i]["voiced"] if v[0] == k]
                                  for t in tools if tools[t][i] is not None},
                               **{f"{t} lock": tools[t][i]["locks"][k] for t in tools if tools[t][i] is not None}}
                              for k, n in enumerate(e["notes"])]}
                   for i, e in enumerate(entries)], handle, default=lambda v: None if v != v else v)
    by_key = [dict(e, notes=[dict(n, hz=n.get("written_hz", n["hz"])) for n in e["notes"]]) for e in entries]
    written = {name: [None if f is None else score_file(e, f) for e, f in zip(by_key, per_file)]
               for name, per_file in frames.items()}
    body = report(entries, tools, written, args.command.strip(), time.time() - started, args.quick,
                  (load_start, os.getloadavg()[0]), pyin_note, args.spectrum_option)
    if args.no_doc:
        print(body)
    else:
        corpus.write_doc_section(args.doc, "pitch", body)
        print(f"updated {args.doc} ({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
