extension OSCAddressSpace {
    /// The `spectrum` rig: today's address space as routes, from the same table that
    /// `spectrum osc-spec` prints, so the two cannot drift apart. One bundle per frame tagged
    /// with the frame's acoustic time; `/beat` as soon as its cycle is analysed.
    public func rig(messages: OSCMessageSet = .default) -> Rig {
        // The order of the bundle: what lights need first, the status last.
        let order: [OSCMessageKind] = [.bands, .peaks, .groups, .level, .levelDecibels, .pitchActive, .pitch, .note,
                                       .writtenNote, .strobe, .string, .stringCents,
                                       .onset, .tempo, .beatPhase, .beat, .waveform, .status, .targetStatus, .serverStatus, .midiClockStatus, .linkStatus]
        let routes = order.filter(messages.contains).map { kind in
            let address = "{prefix}" + kind.suffix
            switch kind {
            case .bands: return Route(values: [RouteValue(.bands(nil))], address: address)
            case .peaks: return Route(values: [RouteValue(.peaks(nil))], address: address)
            case .groups: return Route(values: [RouteValue(.groups(index: nil, count: nil))], address: address)
            case .level: return Route(values: [RouteValue(.level(.vu))], address: address)
            case .levelDecibels: return Route(values: [RouteValue(.level(.rmsDecibels)), RouteValue(.level(.peakDecibels))], address: address)
            case .waveform: return Route(values: [RouteValue(.waveform)], address: address)
            case .status:
                return Route(values: [.sampleRateHz, .periodFrames, .xruns, .droppedFrames, .dspLoadPercent, .callbackMicroseconds, .nonFiniteSamples]
                                .map { RouteValue(.status($0)) },
                             address: address, arguments: .tags(Array("iiiiffi")), condition: .status)
            case .targetStatus:
                return Route(values: [.index, .address, .state, .sent, .errors].map { RouteValue(.target($0)) },
                             address: address, arguments: .tags(Array("issii")), perElement: true, condition: .status)
            case .serverStatus:
                return Route(values: [.serverRunning, .reconnections, .serverLostSeconds].map { RouteValue(.status($0)) },
                             address: address, arguments: .tags(Array("iif")), condition: .status)
            case .midiClockStatus:
                return Route(values: [.midiClockRunning, .midiClockBpm, .midiClockTicks, .midiClockPhaseErrorMilliseconds].map { RouteValue(.status($0)) },
                             address: address, arguments: .tags(Array("ifif")), condition: .status)
            case .linkStatus:
                return Route(values: [.linkPeers, .linkLeading, .linkBpm, .linkPhaseErrorMilliseconds].map { RouteValue(.status($0)) },
                             address: address, arguments: .tags(Array("iiff")), condition: .status)
            case .pitchActive: return Route(values: [RouteValue(.pitchActive)], address: address)
            case .pitch:
                return Route(values: [RouteValue(.pitchHz), RouteValue(.pitchMidi), RouteValue(.pitchCents), RouteValue(.pitchConfidence)],
                             address: address, condition: .pitchActive)
            case .note: return Route(values: [RouteValue(.noteName)], address: address, arguments: .tags(["s"]), condition: .pitchActive)
            case .writtenNote: return Route(values: [RouteValue(.writtenNoteName)], address: address, arguments: .tags(["s"]), condition: .pitchActive)
            case .strobe: return Route(values: [RouteValue(.pitchStrobe)], address: address, condition: .pitchActive)
            case .string: return Route(values: [RouteValue(.stringName)], address: address, arguments: .tags(["s"]), condition: .stringActive)
            case .stringCents: return Route(values: [RouteValue(.stringCents)], address: address, condition: .stringActive)
            case .onset: return Route(values: [RouteValue(.onsetStrength)], address: address, condition: .onset)
            case .tempo: return Route(values: [RouteValue(.bpm), RouteValue(.tempoConfidence)], address: address)
            case .beatPhase: return Route(values: [RouteValue(.beatPhase)], address: address)
            case .beat:
                return Route(values: [RouteValue(.beatCount), RouteValue(.beatInBar), RouteValue(.bpm)],
                             address: address, arguments: .tags(Array("iif")), condition: .beat)
            }
        }
        return Rig(name: Rig.spectrumName, bundled: true, timeTag: .capture, groupCount: groupCount, routes: routes)
    }
}
