/// A JSON number kept as the text it was written with.
///
/// Keeping the text means a 30-digit integer or `1.10` survives a read. `pythonText` is how
/// the station's `json.dumps` writes the same number back (what `WireJSON` writes). Python's
/// reader also accepts `NaN`, `Infinity` and `-Infinity`, so these are numbers here too.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text: JSON number grammar, or `NaN`, `Infinity`, `-Infinity`.
    public let text: String

    /// Creates a number from an integer.
    public init(_ value: Int) { text = String(value) }

    /// Creates a number from an unsigned 64-bit integer.
    public init(_ value: UInt64) { text = String(value) }

    /// Creates a number from a `Double`, written as Python's `repr` writes it (`1e-05`, `10.0`).
    public init(_ value: Double) { text = PythonFloat.repr(value) }

    /// Creates a number from its text, or returns `nil` when the text is not a JSON number
    /// (nor `NaN`, `Infinity`, `-Infinity`).
    public init?(text: String) {
        guard JSONNumber.isValid(Array(text.utf8)) else { return nil }
        self.text = text
    }

    /// Creates a number from text the parser already validated.
    init(validatedText: String) { text = validatedText }

    /// The text.
    public var description: String { text }

    /// Whether the text is an integer (no fraction, no exponent): Python reads it as `int`.
    public var isInteger: Bool {
        // A loop over the contiguous bytes: listings ask this of every number of every post.
        var text = self.text
        let plain = text.withUTF8 { bytes in
            !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        }
        return plain && !isSpecial
    }

    private var isSpecial: Bool { text == "NaN" || text == "Infinity" || text == "-Infinity" }

    /// The value as an `Int` when it is exactly one: an integer in range, or a float with no
    /// fractional part (`1795956595.0`). Otherwise `nil`.
    public var intValue: Int? {
        if isInteger { return Int(text) }
        let double = doubleValue
        guard double.isFinite, double.rounded(.towardZero) == double else { return nil }
        return Int(exactly: double)
    }

    /// The value as a `Double` (nearest; out-of-range magnitudes become infinite as in Python).
    public var doubleValue: Double {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text) ?? .nan
        }
    }

    /// The text Python's `json.dumps` writes for this number after `json.loads` read it: an
    /// integer keeps its digits (`-0` becomes `0`); anything with a fraction or exponent becomes
    /// a `float` and is written with `repr` (`1E2` → `100.0`, `1e999` → `Infinity`).
    package var pythonText: String {
        if isSpecial { return text }
        if isInteger { return text == "-0" ? "0" : text }
        return PythonFloat.repr(doubleValue)
    }

    /// Whether `bytes` is a JSON number (RFC 8259 grammar) or one of Python's three extras.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        if bytes == Array("NaN".utf8) || bytes == Array("Infinity".utf8) || bytes == Array("-Infinity".utf8) {
            return true
        }
        var index = 0
        return bytes.withUnsafeBufferPointer { buffer in
            JSONNumber.scan(buffer, from: &index) && index == buffer.count
        }
    }

    /// Scans the longest JSON number starting at `index`; returns `false` if there is none.
    package static func scan(_ bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> Bool {
        func digit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
        var i = index
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digit(i) else { return false }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while digit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "."), digit(i + 1) {
            i += 1
            while digit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            var j = i + 1
            if j < bytes.count, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
            if digit(j) {
                while digit(j) { j += 1 }
                i = j
            }
        }
        index = i
        return true
    }
}

/// Python's `float.__repr__`, which `json.dumps` uses for floats.
enum PythonFloat {
    /// Formats `value` as Python does: the shortest digits that round-trip, fixed notation when
    /// the decimal exponent is in -4 ..< 16, else `d.ddde±XX`; `NaN`/`Infinity` as `json.dumps`
    /// writes them.
    static func repr(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
        // Swift's description also prints the shortest round-tripping digits; only the layout
        // differs from Python's, so take the digits and the exponent from it.
        let (digits, pointPosition) = shortestDigits(of: Swift.abs(value))
        let sign = value < 0 ? "-" : ""
        let count = digits.count
        if pointPosition > -4 && pointPosition <= 16 {
            if pointPosition <= 0 {
                return sign + "0." + String(repeating: "0", count: -pointPosition) + digits
            }
            if pointPosition >= count {
                return sign + digits + String(repeating: "0", count: pointPosition - count) + ".0"
            }
            let split = digits.index(digits.startIndex, offsetBy: pointPosition)
            return sign + digits[..<split] + "." + digits[split...]
        }
        let exponent = pointPosition - 1
        var mantissa = String(digits.prefix(1))
        if count > 1 { mantissa += "." + digits.dropFirst() }
        let exponentDigits = String(Swift.abs(exponent))
        let padded = exponentDigits.count < 2 ? "0" + exponentDigits : exponentDigits
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + padded
    }

    /// The significant digits (no leading or trailing zeros) of a positive finite `value` and
    /// the position of the decimal point relative to them (`value = 0.DIGITS × 10^position`).
    static func shortestDigits(of value: Double) -> (digits: String, pointPosition: Int) {
        let text = value.description
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var integerPart = mantissa
        var fractionPart = Substring("")
        if let dot = mantissa.firstIndex(of: ".") {
            integerPart = mantissa[..<dot]
            fractionPart = mantissa[mantissa.index(after: dot)...]
        }
        var digits = Array(integerPart + fractionPart)
        var pointPosition = integerPart.count + exponent
        while let first = digits.first, first == "0" {
            digits.removeFirst()
            pointPosition -= 1
        }
        while let last = digits.last, last == "0" { digits.removeLast() }
        return (String(digits), pointPosition)
    }
}
