"""A tiny Standard MIDI File writer (format 1), standard library only.

Reusable by the pitch and tempo benchmarks:

    song = Song(ticks_per_quarter=960)
    song.tempo(0.0, 120)                 # tempo map (seconds -> BPM), changes allowed
    song.tempo(10.0, 132)
    t = song.track(channel=0, program=24) # GM program, 0-based (24 = nylon guitar)
    t.bend_range(0.0, semitones=1)        # RPN 0: pitch-bend sensitivity
    t.bend(0.0, 8192 + 573)               # 14-bit bend value (8192 = centre)
    t.note(0.5, 1.5, 40, velocity=100)    # onset, offset in seconds
    drums = song.track(channel=9)         # channel 10 (index 9) = GM percussion
    drums.note(0.0, 0.1, 36)              # kick
    song.save("x.mid")

Times are given in seconds and converted to ticks through the tempo map; `song.seconds(tick)`
converts back, so labels can be computed from the exact tick that was written
(`Track.note` returns the (onset, offset) in seconds after rounding to ticks).
"""

import struct

DRUM_CHANNEL = 9  # MIDI channel 10


def _varlen(value):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


class Song:
    def __init__(self, ticks_per_quarter=960):
        self.tpq = ticks_per_quarter
        self._tempi = []  # (seconds, bpm)
        self.tracks = []

    # --- tempo map -------------------------------------------------------------------------
    def tempo(self, seconds, bpm):
        """Tempo change at `seconds` (the first one should be at 0)."""
        self._tempi.append((float(seconds), float(bpm)))
        self._tempi.sort()
        return self

    def _segments(self):
        """[(start_tick, start_seconds, microseconds_per_quarter)] with ticks rounded."""
        tempi = self._tempi or [(0.0, 120.0)]
        if tempi[0][0] > 0:
            tempi = [(0.0, 120.0)] + tempi
        segments = []
        tick, sec = 0, 0.0
        for i, (start, bpm) in enumerate(tempi):
            uspq = int(round(60_000_000 / bpm))
            if i:
                # advance from the previous segment to this start, rounded to a tick
                prev_tick, prev_sec, prev_uspq = segments[-1]
                tick = prev_tick + int(round((start - prev_sec) * 1e6 / prev_uspq * self.tpq))
                sec = prev_sec + (tick - prev_tick) * prev_uspq / 1e6 / self.tpq
            segments.append((tick, sec, uspq))
        return segments

    def ticks(self, seconds):
        seg = [s for s in self._segments() if s[1] <= seconds + 1e-12][-1]
        return seg[0] + int(round((seconds - seg[1]) * 1e6 / seg[2] * self.tpq))

    def seconds(self, tick):
        seg = [s for s in self._segments() if s[0] <= tick][-1]
        return seg[1] + (tick - seg[0]) * seg[2] / 1e6 / self.tpq

    def track(self, channel=0, program=None, name=None):
        t = Track(self, channel)
        if name:
            t.meta(0.0, 0x03, name.encode("ascii", "replace"))
        if program is not None and channel != DRUM_CHANNEL:
            t.program(0.0, program)
        self.tracks.append(t)
        return t

    # --- output ----------------------------------------------------------------------------
    def to_bytes(self):
        conductor = []
        for tick, _sec, uspq in self._segments():
            conductor.append((tick, 0, b"\xff\x51\x03" + uspq.to_bytes(3, "big")))
        chunks = [_chunk(conductor)] + [_chunk(t.events) for t in self.tracks]
        header = b"MThd" + struct.pack(">IHHH", 6, 1, len(chunks), self.tpq)
        return header + b"".join(chunks)

    def save(self, path):
        with open(path, "wb") as handle:
            handle.write(self.to_bytes())


def _chunk(events):
    # (tick, order, bytes): at equal ticks, note-offs (order 0) before controllers (1) before note-ons (2)
    data = bytearray()
    last = 0
    for tick, _order, payload in sorted(events, key=lambda e: (e[0], e[1])):
        data += _varlen(tick - last) + payload
        last = tick
    data += _varlen(0) + b"\xff\x2f\x00"
    return b"MTrk" + struct.pack(">I", len(data)) + bytes(data)


class Track:
    def __init__(self, song, channel):
        self.song = song
        self.channel = channel
        self.events = []

    def _add(self, seconds, order, payload):
        tick = self.song.ticks(seconds)
        self.events.append((tick, order, bytes(payload)))
        return tick

    def meta(self, seconds, kind, data):
        return self._add(seconds, 1, bytes([0xFF, kind]) + _varlen(len(data)) + data)

    def program(self, seconds, program):
        return self._add(seconds, 1, [0xC0 | self.channel, program & 0x7F])

    def control(self, seconds, controller, value):
        return self._add(seconds, 1, [0xB0 | self.channel, controller & 0x7F, value & 0x7F])

    def bend_range(self, seconds, semitones=2, cents=0):
        """RPN 0 (pitch-bend sensitivity), then RPN null so later data entry does nothing."""
        for controller, value in ((101, 0), (100, 0), (6, semitones), (38, cents), (101, 127), (100, 127)):
            self.control(seconds, controller, value)

    def bend(self, seconds, value):
        """14-bit pitch bend, 0..16383, 8192 = no bend."""
        value = max(0, min(16383, int(value)))
        return self._add(seconds, 1, [0xE0 | self.channel, value & 0x7F, value >> 7])

    def note(self, onset, offset, key, velocity=100):
        """Adds a note; returns its exact (onset, offset) in seconds after rounding to ticks."""
        on = self._add(onset, 2, [0x90 | self.channel, key & 0x7F, max(1, velocity) & 0x7F])
        off = self._add(offset, 0, [0x80 | self.channel, key & 0x7F, 0])
        return self.song.seconds(on), self.song.seconds(off)


def bend_value(cents, range_semitones=1):
    """Nearest 14-bit bend value for `cents`, and the cents it really gives (FluidSynth maps
    value v to (v − 8192) / 8192 × range)."""
    value = 8192 + int(round(cents / (100.0 * range_semitones) * 8192))
    value = max(0, min(16383, value))
    return value, (value - 8192) / 8192 * 100.0 * range_semitones


def key_hz(key, cents=0.0, reference_hz=440.0):
    return reference_hz * 2 ** ((key - 69 + cents / 100.0) / 12)
