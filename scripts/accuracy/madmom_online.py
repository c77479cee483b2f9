#!/usr/bin/env python3
"""madmom's online (causal) trackers on one file, as JSON on stdout: beats from
RNNBeatProcessor(online=True) + DBNBeatTrackingProcessor(online=True), onsets from the online
RNN onset detector with online peak picking. Runs in madmom's own venv (scripts/accuracy-tempo
builds it: madmom 0.16.1, numpy < 1.24)."""
import json
import sys
import warnings
import wave

import numpy as np
from scipy.signal import resample_poly

warnings.filterwarnings("ignore")
from madmom.features.beats import DBNBeatTrackingProcessor, RNNBeatProcessor  # noqa: E402
from madmom.audio.signal import Signal  # noqa: E402
from madmom.features.onsets import OnsetPeakPickingProcessor, RNNOnsetProcessor  # noqa: E402

# Read the 16-bit mono WAV here and resample to madmom's 44.1 kHz (its own loader needs ffmpeg).
with wave.open(sys.argv[1], "rb") as handle:
    rate = handle.getframerate()
    x = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
if rate == 48000:
    x = resample_poly(x, 147, 160).astype(np.float32)
elif rate != 44100:
    raise SystemExit(f"{sys.argv[1]}: expected 44.1 or 48 kHz, got {rate} Hz")
path = Signal(x, sample_rate=44100, num_channels=1)
activations = RNNBeatProcessor(online=True)(path)
beats = DBNBeatTrackingProcessor(fps=100, online=True)(activations)
onset_activations = RNNOnsetProcessor(online=True)(path)
onsets = OnsetPeakPickingProcessor(fps=100, online=True, threshold=0.3)(onset_activations)
json.dump({"beats": [float(b) for b in beats], "onsets": [float(o) for o in onsets]}, sys.stdout)
