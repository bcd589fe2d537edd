import OrderedJSON

extension JSONParser {
    /// The value of a member that is read as a lenient integer (``LenientInteger``): a plain
    /// integer of up to 18 digits straight from its bytes (no `String`, no ``JSONNumber``), and
    /// anything else (a fraction, an exponent, more digits, another type) as a JSON value, inside
    /// `depth` open containers.
    mutating func parseLenientInteger(depth: Int) throws(WireFormatError) -> LenientInteger {
        let start = index
        var end = index
        if JSONNumber.scan(bytes, from: &end) {
            let negative = bytes[start] == UInt8(ascii: "-")
            let digits = (negative ? start + 1 : start)..<end
            if digits.count <= 18, bytes[digits].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                var value = 0
                for digit in bytes[digits] { value = value &* 10 &+ Int(digit &- UInt8(ascii: "0")) }
                index = end
                return .exact(negative ? -value : value)
            }
        }
        return .value(try parseValue(depth: depth))
    }
}
