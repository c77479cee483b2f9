import ArgumentParser

/// Tempo out to the rest of the rig (`run`): MIDI clock on a JACK MIDI port (docs/live.md).
struct TempoOutOptions: ParsableArguments {
    @Flag(name: .customLong("midi-clock"), help: ArgumentHelp(
        "Send MIDI clock from the beat grid on a JACK MIDI output port 'midi_clock': 24 F8 per beat, FA on the first downbeat after the tempo locks, FC when it is lost (silence, blackout), song position 0 while stopped. Tempo changes glide; the lead time and the port's playback latency are compensated. Connect it with --midi-clock-connect or jack_connect (e.g. to a2j or a synth); its connections are restored after a JACK server restart."))
    var midiClock = false

    @Option(name: .customLong("midi-clock-connect"), help: ArgumentHelp(
        "With --midi-clock: connect the clock to this JACK MIDI input port at start (repeatable), e.g. 'a2j:Midi Through [14] (playback): Midi Through Port-0'; list them with jack_lsp -t -p.",
        valueName: "port"))
    var midiClockDestinations: [String] = []

    @Option(name: .customLong("tempo-input"), help: ArgumentHelp(
        "With several inputs: the input whose tempo and beats drive the live summary, the MIDI clock, Link and WLED (default: a preset's tempo_input:, else the first). Switch it while running with OSC /control/tempo_input NAME; it cannot be removed over OSC control.",
        valueName: "name"))
    var tempoInput: String?

    @Flag(name: .customLong("link"), help: ArgumentHelp(
        "Join the Ableton Link session on the local network as a peer: the detected tempo and beat phase go to the session (quantum = beats per bar). Joining a running session adopts its tempo (Link's rule) unless --link-lead."))
    var link = false

    @Flag(name: .customLong("link-lead"), help: ArgumentHelp(
        "With --link: set the session's tempo and beat even when it was already running (take it over)."))
    var linkLead = false

    func validate() throws {
        if linkLead && !link { throw ValidationError("--link-lead: expected --link as well") }
        if !midiClockDestinations.isEmpty && !midiClock { throw ValidationError("--midi-clock-connect: expected --midi-clock as well") }
    }
}
