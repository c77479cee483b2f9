import SpectrumOutput
import Testing

/// What OSCQuery reads from the address table: numeric ranges from the table's range text, and
/// the rig's messages one by one.
struct OSCQueryMetadataTests {
    @Test func numericBoundsComeFromTheRangeText() {
        func bounds(_ range: String) -> ClosedRange<Double>? {
            OSCArgumentSpec(name: "x", typeTag: "f", unit: "u", range: range).numericBounds
        }
        #expect(bounds("0..1") == 0...1)
        #expect(bounds("\u{2212}120..+24") == -120...24)
        #expect(bounds("\u{2212}1..1") == -1...1)
        #expect(bounds("0 or 60..180") == 60...180)
        #expect(bounds("38..2200") == 38...2200)
        #expect(bounds("0.5..1.5") == 0.5...1.5)
        #expect(bounds("≥ 0") == nil)
        #expect(bounds("text") == nil)
        #expect(bounds("C-1..G9") == nil)
        #expect(bounds("0 or 1") == nil)
    }

    @Test func everyNumericArgumentOfTheTableHasBoundsOrSaysWhyNot() {
        // Every range in the table is numeric or one of these open, textual or setting-bound forms.
        let open: Set<String> = ["text", "0 or 1", "1..beats per bar", "any"]
        for entry in OSCAddressSpace().entries {
            for argument in entry.arguments where argument.numericBounds == nil {
                #expect(argument.range.hasPrefix("≥") || open.contains(argument.range) || argument.typeTag == "s",
                        "\(entry.address) \(argument.name): range \(argument.range)")
            }
        }
    }
}
