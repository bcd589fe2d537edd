import Signing
import PQCrypto

/// The few Python parsing rules the station's checks depend on, reproduced exactly so that the
/// verifier accepts and refuses the same header values.
enum PythonCompatibility {
    /// The outcome of Python's `int(text)`.
    enum ParsedInteger: Equatable {
        case value(Int64)
        /// A valid integer beyond Int64: always more than 60 s from now.
        case outOfRange
        case invalid
    }

    /// Python's limit on the digits `int()` converts (`sys.int_info.default_max_str_digits`,
    /// Python 3.11 and later).
    static let maximumIntegerDigits = 4300

    /// Python's `int(text)` in base 10: surrounding whitespace, an optional sign, decimal digits
    /// (any Unicode decimal digit) with single underscores between digits, at most 4300 digits.
    static func parseInteger(_ text: String) -> ParsedInteger {
        var scalars = Array(text.unicodeScalars)
        while let first = scalars.first, isPythonSpace(first) { scalars.removeFirst() }
        while let last = scalars.last, isPythonSpace(last) { scalars.removeLast() }
        var negative = false
        if let sign = scalars.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            scalars.removeFirst()
        }
        guard !scalars.isEmpty else { return .invalid }
        var magnitude: UInt64 = 0
        var overflow = false
        var previousWasDigit = false
        var digitCount = 0
        for (index, scalar) in scalars.enumerated() {
            if scalar == "_" {
                guard previousWasDigit, index + 1 < scalars.count else { return .invalid }
                previousWasDigit = false
                continue
            }
            guard let digit = decimalValue(scalar) else { return .invalid }
            previousWasDigit = true
            digitCount += 1
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            if o1 || o2 { overflow = true } else { magnitude = sum }
        }
        guard previousWasDigit, digitCount <= maximumIntegerDigits else { return .invalid }
        if overflow || magnitude > UInt64(Int64.max) { return .outOfRange }
        return .value(negative ? -Int64(magnitude) : Int64(magnitude))
    }

    /// The whitespace `int()` strips: ASCII space, tab, LF, VT, FF and CR, and any non-ASCII
    /// character for which `str.isspace()` holds (ASCII 0x1C–0x1F are *not* stripped).
    private static func isPythonSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0: true
        case 0...0xFF: false
        default: scalar.properties.isWhitespace
        }
    }

    private static func decimalValue(_ scalar: Unicode.Scalar) -> Int? {
        if scalar.isASCII {
            return scalar.value >= 0x30 && scalar.value <= 0x39 ? Int(scalar.value - 0x30) : nil
        }
        guard scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue else { return nil }
        return Int(value)
    }

    /// Python's `base64.b64decode(text, validate=True)`, which since Python 3.11 is
    /// `binascii.a2b_base64(text, strict_mode=True)`: only `A–Z a–z 0–9 + /` and `=`; no leading
    /// `=`; nothing but `=` once padding has started; the quantum that padding completes must be
    /// the end of the text; `=` after a complete quantum is ignored; a final partial quantum of
    /// one character, or of two or three without enough padding, is an error. Unused trailing
    /// bits are ignored.
    static func decodeBase64Strict(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.first != UInt8(ascii: "=") else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(bytes.count * 3 / 4)
        var quadPosition = 0
        var leftover: UInt8 = 0
        var pads = 0
        var paddingStarted = false
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "=") {
                paddingStarted = true
                if quadPosition >= 2 {
                    pads += 1
                    if quadPosition + pads >= 4 {
                        // Padding completed the quantum: it must be the end of the text.
                        return index + 1 < bytes.count ? nil : output
                    }
                }
                continue
            }
            guard let value = base64Value(byte), !paddingStarted else { return nil }
            pads = 0
            switch quadPosition {
            case 0:
                leftover = value
            case 1:
                output.append(leftover << 2 | value >> 4)
                leftover = value & 0x0F
            case 2:
                output.append(leftover << 4 | value >> 2)
                leftover = value & 0x03
            default:
                output.append(leftover << 6 | value)
            }
            quadPosition = (quadPosition + 1) % 4
        }
        return quadPosition == 0 ? output : nil
    }

    private static func base64Value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// Python's `bytes.fromhex(text)`: pairs of hex digits, with ASCII whitespace allowed
    /// between pairs (not inside one); anything non-ASCII is an error.
    static func bytesFromHex(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        var output = [UInt8]()
        output.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            if isASCIISpace(characters[index]) {
                index += 1
                continue
            }
            guard index + 1 < characters.count, let high = Hex.value(ofDigit: characters[index]),
                  let low = Hex.value(ofDigit: characters[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
