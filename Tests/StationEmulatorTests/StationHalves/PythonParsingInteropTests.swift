import TestSupport
import Testing

@testable import StationEmulator

/// The emulator parses headers and form fields as the station's Python does: `int()`,
/// `b64decode(validate=True)` and `bytes.fromhex`, checked against Python itself
/// (`Tests/Interop/signing_interop.py`).
@Suite("The emulator's Python parsing rules agree with Python",
       .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
struct PythonParsingInteropTests {
    /// Python's answers: the value, or `null` where Python raises.
    struct Parsed: Decodable {
        let ints: [String?]
        let base64: [String?]
        let fromhex: [String?]
    }

    @Test func integersBase64AndHexParseAsInPython() throws {
        let ints = [
            "0", "-0", "+0", " 12 ", "\t12\n", "\u{0B}7\u{0C}", "\u{1C}5\u{1F}", "\u{85}9\u{A0}", "1_000", "1__000", "_1", "1_", "+",
            "-", "", " ", "12.5", "1e3", "0x1f", "٣", "１２", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "0012", "+-1", "1 2", String(repeating: "7", count: 4300),
            String(repeating: "7", count: 4301), String(repeating: "1_", count: 4300) + "1", "\u{2003}5\u{3000}",
            "\u{1680}6", "5\u{200B}", "1\u{0}",
        ]
        let base64 = [
            "", "A", "AA", "AAA", "AAAA", "AA=", "AA==", "AAA=", "AAA==", "AAAA=", "AAAA==", "AAAA===", "A=", "A==",
            "AB==", "AB=", "ABC=", "AB/+", "ab-_", "AA AA", "AA\nAA", "=AAA", "AA=A", "é", "AAAAA", "AAAAAA", "AAAAAAA",
            "AQ==", "AR==", "AAE=", "AAF=", "QUJD", "AAAA====", "AB=====", "A=A=", "AAAA=A", "AAAA=AAAA", "=", "==",
        ]
        let fromhex = [
            "", "00", "0", "000", "0a0B", "0a 0b", " 0a", "0a ", "0 a", "0a\t0b", "0a\n0b\r", "0a\u{0B}0b", "0a\u{0C}0b",
            "0a\u{1C}0b", "é0", "0g", "g0", "0a  0b", "  ", "\u{A0}00",
        ]
        // The script answers each section of the request it is given.
        let response = try InteropPython.call("signing_interop.py", ["ints": ints, "base64": base64, "fromhex": fromhex],
                                              as: Parsed.self)
        for (text, python) in zip(ints, response.ints) {
            let swift: String? = switch PythonCompatibility.parseInteger(text) {
            case let .value(value): String(value)
            case .outOfRange: "out of range"
            case .invalid: nil
            }
            if swift == "out of range" {
                #expect(python != nil, "\(text.prefix(40))")
            } else {
                #expect(swift == python, "\(text.prefix(40))")
            }
        }
        #expect(base64.map { PythonCompatibility.decodeBase64Strict($0)?.hex } == response.base64)
        #expect(fromhex.map { PythonCompatibility.bytesFromHex($0)?.hex } == response.fromhex)
    }
}
