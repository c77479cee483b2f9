/// Settings one input sets for itself on top of the client's analysis configuration (a preset's
/// `inputs:` entry with its own `pitch:`, `rhythm:` … sections): a list of field assignments,
/// re-applied to whatever the shared configuration is at every rebuild (a control change, a new
/// preset, a new sample rate), so the input's own values win and everything it leaves out
/// follows the shared configuration. Plain immutable data; any thread.
public struct AnalysisOverrides: Sendable, Equatable {
    /// One field set to one value.
    public struct Assignment: Sendable, Equatable {
        /// The preset key path (`pitch.reference_hz`): what the assignment is called in errors
        /// and equality.
        public let path: String
        /// The value as the preset wrote it (for equality and messages).
        public let valueText: String
        /// Sets the field in a configuration.
        public let apply: @Sendable (inout AnalysisConfiguration) -> Void

        public init(path: String, valueText: String, apply: @escaping @Sendable (inout AnalysisConfiguration) -> Void) {
            self.path = path
            self.valueText = valueText
            self.apply = apply
        }

        public static func == (left: Assignment, right: Assignment) -> Bool {
            left.path == right.path && left.valueText == right.valueText
        }
    }

    public var assignments: [Assignment]

    public init(_ assignments: [Assignment] = []) { self.assignments = assignments }

    /// No settings of its own: the input runs the shared configuration.
    public static let none = AnalysisOverrides()

    public var isEmpty: Bool { assignments.isEmpty }

    /// `shared` with these assignments applied in order.
    public func applied(to shared: AnalysisConfiguration) -> AnalysisConfiguration {
        var configuration = shared
        for assignment in assignments { assignment.apply(&configuration) }
        return configuration
    }
}
