import Foundation

/// Turns a `--preset NAME|PATH` argument into a file path. A value containing `/` or ending in
/// `.yaml` is a path; otherwise `NAME.yaml` is looked up in `$SPECTRUM_PRESETS_DIR` (if set),
/// then `./presets`, then the `presets/` folder of the repository found by walking up from the
/// executable's real path (the first ancestor with both `Package.swift` and `presets/`).
/// Reads the file system; not real-time safe. Any non-real-time thread.
public struct PresetLocator: Sendable {
    /// `$SPECTRUM_PRESETS_DIR`, when set and not empty.
    public var environmentDirectory: String?
    public var currentDirectory: String
    /// Real path of the running executable (symbolic links resolved).
    public var executablePath: String?

    public init(environmentDirectory: String?, currentDirectory: String, executablePath: String?) {
        self.environmentDirectory = environmentDirectory
        self.currentDirectory = currentDirectory
        self.executablePath = executablePath
    }

    /// The locator for this process: its environment, working directory and executable.
    public static func forCurrentProcess() -> PresetLocator {
        let environment = ProcessInfo.processInfo.environment["SPECTRUM_PRESETS_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().path
        return PresetLocator(environmentDirectory: environment,
                             currentDirectory: FileManager.default.currentDirectoryPath,
                             executablePath: executable)
    }

    /// True when `argument` names a file rather than a preset.
    public static func isPath(_ argument: String) -> Bool {
        argument.contains("/") || argument.hasSuffix(".yaml")
    }

    /// Places searched for a preset name, in order, as (shown to the user, real directory).
    public var searchDirectories: [(label: String, directory: String)] {
        var result: [(String, String)] = []
        if let environmentDirectory {
            result.append(("$SPECTRUM_PRESETS_DIR (\(environmentDirectory))", environmentDirectory))
        }
        result.append(("./presets", (currentDirectory as NSString).appendingPathComponent("presets")))
        if let repository = repositoryDirectory {
            let presets = (repository as NSString).appendingPathComponent("presets")
            result.append((presets, presets))
        }
        return result
    }

    /// The first ancestor of the executable that holds `Package.swift` and `presets/`.
    public var repositoryDirectory: String? {
        guard let executablePath, !executablePath.isEmpty else { return nil }
        var directory = URL(fileURLWithPath: executablePath).deletingLastPathComponent()
        while true {
            let manager = FileManager.default
            if manager.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
               Self.isDirectory(directory.appendingPathComponent("presets").path) {
                return directory.path
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path { return nil }
            directory = parent
        }
    }

    /// The preset file `argument` refers to. A path is returned as given (the loader reports a
    /// missing file); a name must exist in one of `searchDirectories`.
    public func resolve(_ argument: String) throws(PresetNotFoundError) -> String {
        if Self.isPath(argument) { return argument }
        let places = searchDirectories
        for place in places {
            let candidate = (place.directory as NSString).appendingPathComponent("\(argument).yaml")
            if FileManager.default.isReadableFile(atPath: candidate), !Self.isDirectory(candidate) { return candidate }
        }
        throw PresetNotFoundError(name: argument, searchedDirectories: places.map(\.label), availableNames: availableNames)
    }

    /// Names of the presets found in `searchDirectories`, sorted, without repeats.
    public var availableNames: [String] {
        var names = Set<String>()
        for place in searchDirectories {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: place.directory)) ?? []
            for file in files where file.hasSuffix(".yaml") { names.insert(String(file.dropLast(5))) }
        }
        return names.sorted()
    }

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
