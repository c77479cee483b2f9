// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Spectrum",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "spectrum", targets: ["SpectrumCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // MARK: System libraries (module.modulemap + shim.h each)
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CLo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),

        // MARK: Small C helpers
        /// Denormal control and RealtimeSanitizer hooks for the real-time path.
        .target(name: "CRealtime"),
        /// Test-only malloc/free counter (linked into the test binary only).
        .target(name: "CAllocationCounter"),
        /// A C interface over Ableton Link (Debian's header-only ableton-link-dev + libasio-dev;
        /// GPL-2.0-or-later). Never called from the JACK process thread.
        .target(
            name: "CLink",
            cxxSettings: [.define("LINK_PLATFORM_LINUX", to: "1")],
            linkerSettings: [.linkedLibrary("pthread")]
        ),

        // MARK: Real-time core: no JACK, no OSC, no I/O
        /// The frame and queue types that cross threads (AnalysisFrame, FrameRing, BeatMailbox,
        /// RealtimeBuffer): what outputs depend on, without linking FFTW.
        .target(name: "SpectrumCore"),
        /// The analysis itself (FFTW).
        .target(name: "SpectrumDSP", dependencies: ["SpectrumCore", "CFFTW", "CRealtime"]),

        // MARK: Around the core
        /// Preset files (YAML) → validated AnalysisConfiguration.
        .target(name: "SpectrumPresets", dependencies: ["SpectrumCore", "SpectrumDSP", "SpectrumOutput", .product(name: "Yams", package: "Yams")]),
        /// Sound files → frames, with the same analysis code (libsndfile).
        .target(name: "SpectrumOffline", dependencies: ["SpectrumCore", "SpectrumDSP", "CSndfile"]),

        /// The JACK client: lifecycle, ports, callbacks, and the one real-time process callback.
        .target(name: "SpectrumLive", dependencies: ["SpectrumCore", "SpectrumDSP", "CJack", "CRealtime"]),
        /// Session management (NSM): the client protocol and atomic state files; no JACK, no liblo.
        .target(name: "SpectrumSession"),
        /// Child programs (avahi-publish, the tests' peers) started with no signal blocked.
        .target(name: "SpectrumSubprocess"),
        /// OSC control input (`--control`): checked commands for the session, off the JACK thread.
        .target(name: "SpectrumControl", dependencies: ["CLo"]),
        /// Spectrum as an Ableton Link peer: tempo and beat committed from a thread of its own.
        .target(name: "SpectrumLink", dependencies: ["SpectrumCore", "CLink"]),
        /// Frames → OSC bundles (liblo) on a publisher thread; never on the real-time thread.
        .target(name: "SpectrumOutput", dependencies: ["SpectrumCore", "CLo"]),
        /// The web view and OSCQuery (`--http`): HTTP + WebSocket on swift-nio, its own event-loop
        /// thread, fed by the publisher thread; never on the JACK thread.
        .target(
            name: "SpectrumWeb",
            dependencies: [
                "SpectrumCore", "SpectrumOutput", "SpectrumControl",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),

        // MARK: Command line
        .executableTarget(
            name: "SpectrumCLI",
            dependencies: [
                "SpectrumCore", "SpectrumDSP", "SpectrumPresets", "SpectrumOffline", "SpectrumLive", "SpectrumOutput", "SpectrumControl", "SpectrumSession", "SpectrumWeb", "SpectrumLink", "SpectrumSubprocess",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Benchmarks (scripts/bench)
        .executableTarget(
            name: "SpectrumBench",
            dependencies: ["SpectrumCore", "SpectrumDSP", "SpectrumLive", "SpectrumOutput", "SpectrumPresets", "SpectrumTestSupport", "SpectrumWeb", "CJack"]
        ),

        // MARK: Tests
        /// Signal generators, an offline block driver, a WAV writer, a private jackd, a tone
        /// client and an OSC receiver, shared by the tests and benchmarks.
        .target(name: "SpectrumTestSupport", dependencies: ["SpectrumCore", "SpectrumDSP", "SpectrumOutput", "SpectrumSubprocess", "CSndfile", "CJack", "CLo"]),
        .testTarget(
            name: "SpectrumDSPTests",
            dependencies: ["SpectrumCore", "SpectrumDSP", "SpectrumTestSupport", "CAllocationCounter"]
        ),
        .testTarget(
            name: "SpectrumPresetsTests",
            dependencies: ["SpectrumPresets", "SpectrumDSP", .product(name: "Yams", package: "Yams")]
        ),
        .testTarget(
            name: "SpectrumLiveTests",
            dependencies: ["SpectrumCore", "SpectrumLive", "SpectrumDSP", "SpectrumTestSupport", "CAllocationCounter", "CJack"]
        ),
        .testTarget(
            name: "SpectrumOutputTests",
            dependencies: ["SpectrumCore", "SpectrumOutput", "SpectrumPresets", "SpectrumDSP", "SpectrumTestSupport", "CLo", "CAllocationCounter"]
        ),
        .testTarget(
            name: "SpectrumSessionTests",
            dependencies: ["SpectrumSession", "SpectrumTestSupport"]
        ),
        .testTarget(
            name: "SpectrumWebTests",
            dependencies: ["SpectrumWeb", "SpectrumCore", "SpectrumOutput", "SpectrumControl", "SpectrumTestSupport"]
        ),
        .testTarget(
            name: "SpectrumControlTests",
            dependencies: ["SpectrumControl", "CLo"]
        ),
        .testTarget(
            name: "SpectrumCLITests",
            /// SpectrumCLI so that the `spectrum` binary is built before the tests run it.
            dependencies: ["SpectrumCore", "SpectrumCLI", "SpectrumTestSupport", "SpectrumOffline", "SpectrumDSP", "CLo"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx14
)
