/// Reads JSON the way Python's `json.loads` does, into ``JSONValue`` with objects in document
/// order.
///
/// It accepts what Python accepts and a station could therefore have stored and served: `NaN`,
/// `Infinity`, `-Infinity`, duplicate keys (the last value wins, at the first key's position),
/// and a leading UTF-8 byte-order mark. It rejects what Python rejects: raw control characters in
/// strings, trailing data, leading zeros. It also rejects invalid UTF-8. An unpaired UTF-16
/// surrogate escape, which Python keeps as a lone code point, reads as U+FFFD (a Swift `String`
/// cannot hold a lone surrogate).
///
/// The parser is iterative, so hostile nesting cannot exhaust the stack; depth is capped at
/// `maximumDepth`. What it builds is charged to ``memory`` (see ``JSONMemoryBudget``), and every
/// array and object is allocated at its final size when it closes, never larger.
package struct JSONParser {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    private let maximumDepth: Int
    /// What the values built so far were charged, against its limit.
    package var memory: JSONMemoryBudget

    /// An open container and where its members start in the parse's shared member stacks.
    private enum Open {
        case array(start: Int)
        case object(start: Int)
    }

    package init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, memory: JSONMemoryBudget = .unlimited) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.memory = memory
    }

    /// Parses one complete document.
    package mutating func parseDocument() throws(WireFormatError) -> JSONValue {
        skipByteOrderMark()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("extra data after the JSON value") }
        return value
    }

    /// Skips a leading UTF-8 byte-order mark.
    package mutating func skipByteOrderMark() {
        if index == 0, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    /// Parses one value starting at the next non-blank byte, inside `depth` open containers
    /// (which count towards `maximumDepth`), and stops right after it.
    ///
    /// The members of every open container wait in two stacks shared by the whole parse (values,
    /// and the keys of object members); a container is made from its run of them, at its exact
    /// size, when it closes.
    package mutating func parseValue(depth: Int) throws(WireFormatError) -> JSONValue {
        var open: [Open] = []
        var values: [JSONValue] = []
        var keys: [String] = []
        parsing: while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input, expecting a value") }
            try memory.charge(JSONMemoryBudget.valueCost)
            var value: JSONValue
            switch bytes[index] {
            case UInt8(ascii: "{"):
                if try openContainer(depth: depth + open.count + 1) {
                    try memory.charge(JSONMemoryBudget.objectCost)
                    keys.append(try parseChargedMemberKey())
                    open.append(.object(start: values.count))
                    continue parsing
                }
                value = .object(JSONObject())
            case UInt8(ascii: "["):
                if try openContainer(depth: depth + open.count + 1) {
                    try memory.charge(JSONMemoryBudget.arrayCost)
                    open.append(.array(start: values.count))
                    continue parsing
                }
                value = .array([])
            case UInt8(ascii: "\""):
                let text = try parseString()
                try memory.charge(JSONMemoryBudget.textCost(text.utf8.count))
                value = .string(text)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "N"):
                try expectLiteral("NaN")
                value = .number(JSONNumber(validatedText: "NaN"))
            case UInt8(ascii: "I"):
                try expectLiteral("Infinity")
                value = .number(JSONNumber(validatedText: "Infinity"))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let number = try parseNumber()
                try memory.charge(JSONMemoryBudget.textCost(number.text.utf8.count))
                value = .number(number)
            default:
                throw fail("unexpected character, expecting a value")
            }

            // Attach the finished value to its container; close every container that ends here.
            while true {
                guard let top = open.last else { return value }
                values.append(value)
                switch top {
                case .array(let start):
                    if try containerContinues(closingWith: UInt8(ascii: "]")) { continue parsing }
                    open.removeLast()
                    value = .array(Array(values[start...]))
                    values.removeSubrange(start...)
                case .object(let start):
                    if try containerContinues(closingWith: UInt8(ascii: "}")) {
                        keys.append(try parseChargedMemberKey())
                        continue parsing
                    }
                    open.removeLast()
                    let keyStart = keys.count - (values.count - start)
                    value = .object(JSONObject(keys: keys[keyStart...], values: values[start...]))
                    values.removeSubrange(start...)
                    keys.removeSubrange(keyStart...)
                }
            }
        }
    }

    /// Reads `"key":` of a member the parse keeps, charging the member and its key.
    private mutating func parseChargedMemberKey() throws(WireFormatError) -> String {
        let key = try parseMemberKey()
        try memory.charge(JSONMemoryBudget.memberCost + JSONMemoryBudget.textCost(key.utf8.count))
        return key
    }

    /// Opens the object or array whose `{` or `[` is next, as the `depth`th open container
    /// (counting towards `maximumDepth`); returns whether it has members or elements, having read
    /// its closing byte when it has none.
    package mutating func openContainer(depth: Int) throws(WireFormatError) -> Bool {
        let close = (index < bytes.count ? bytes[index] : 0) + 2  // `}` follows `{`, `]` follows `[` two code points on
        index += 1
        try checkDepth(depth)
        skipWhitespace()
        guard index < bytes.count, bytes[index] == close else { return true }
        index += 1
        return false
    }

    /// After a member or element: reads `,` (and the blanks after it) or the container's closing
    /// byte `close`; returns whether another member or element follows.
    package mutating func containerContinues(closingWith close: UInt8) throws(WireFormatError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else {
            throw fail(close == UInt8(ascii: "}") ? "unexpected end of input in an object" : "unexpected end of input in an array")
        }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return true
        case close:
            index += 1
            return false
        default:
            throw fail(close == UInt8(ascii: "}") ? "expecting ',' or '}'" : "expecting ',' or ']'")
        }
    }

    package func fail(_ reason: String) -> WireFormatError {
        .invalidJSON(offset: index, reason: reason)
    }

    func checkDepth(_ depth: Int) throws(WireFormatError) {
        if depth > maximumDepth { throw .nestingTooDeep(offset: index - 1, limit: maximumDepth) }
    }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Reads `"key"`, the `:` after it and the white space before the value, so the parser is at
    /// the value.
    package mutating func parseMemberKey() throws(WireFormatError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw fail("expecting a property name in double quotes")
        }
        let key = try parseString()
        try skipMemberColon()
        return key
    }

    /// Reads the `:` after a member's key and the white space around it.
    private mutating func skipMemberColon() throws(WireFormatError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expecting ':' delimiter") }
        index += 1
        skipWhitespace()
    }

    /// Reads `"key":` (up to the value) when the key is plain printable ASCII (no escape) and returns its bytes,
    /// so a reader can match it without making a `String`; returns `nil`, having read nothing,
    /// for any other key, which ``parseMemberKey()`` then reads (decoding escapes, checking UTF-8).
    mutating func parsePlainMemberKey() throws(WireFormatError) -> UnsafeBufferPointer<UInt8>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var end = index + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
              bytes[end] >= 0x20, bytes[end] < 0x80 {
            end += 1
        }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
        let key = UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end])
        index = end + 1
        try skipMemberColon()
        return key
    }

    /// A member's key and the `:` after it, as the name it is among `Name`'s (`nil` for a member
    /// the reader ignores): a plain key matched on its bytes, any other decoded first (escapes
    /// resolved, UTF-8 checked) and then matched the same way.
    package mutating func parseMemberName<Name: JSONMemberName>(_: Name.Type) throws(WireFormatError) -> Name? {
        if let plain = try parsePlainMemberKey() { return Name(utf8: plain) }
        return Name(try parseMemberKey())
    }

    /// A member's value inside `depth` open containers, with a string read directly.
    package mutating func parseMemberValue(depth: Int) throws(WireFormatError) -> JSONValue {
        index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? .string(try parseString()) : try parseValue(depth: depth)
    }

    /// Reads past one value starting at the next non-blank byte, checking it as ``parseValue(depth:)``
    /// does but building nothing (a string or key is decoded and dropped, so at most one lives at a
    /// time), and returns how deep it nests: 0 for a scalar, 1 for `[]` or `{"a":1}`, 2 for
    /// `[[]]`. With `checksDepth`, a container deeper than `maximumDepth` (counting the `depth`
    /// already open) throws as in ``parseValue(depth:)``; without, any depth is read (the kinds of
    /// the open containers take one bit each), so a reader can measure a value and decide.
    package mutating func skipValue(depth: Int, checksDepth: Bool = true) throws(WireFormatError) -> Int {
        // Bit n of the stack is set when the (n+1)th open container is an object.
        var kinds: [UInt64] = []
        var open = 0
        var deepest = 0
        func isObject(_ level: Int) -> Bool { kinds[level >> 6] & (1 << UInt64(level & 63)) != 0 }
        parsing: while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input, expecting a value") }
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let object = bytes[index] == UInt8(ascii: "{")
                let hasContent: Bool
                if checksDepth {
                    hasContent = try openContainer(depth: depth + open + 1)
                } else {
                    hasContent = try openContainer(depth: 0)
                }
                deepest = max(deepest, open + 1)
                if hasContent {
                    if open >> 6 == kinds.count { kinds.append(0) }
                    if object {
                        kinds[open >> 6] |= 1 << UInt64(open & 63)
                    } else {
                        kinds[open >> 6] &= ~(1 << UInt64(open & 63))
                    }
                    open += 1
                    if object { try skipMemberKey() }
                    continue parsing
                }
            case UInt8(ascii: "\""):
                _ = try parseString()
            case UInt8(ascii: "t"): try expectLiteral("true")
            case UInt8(ascii: "f"): try expectLiteral("false")
            case UInt8(ascii: "n"): try expectLiteral("null")
            case UInt8(ascii: "N"): try expectLiteral("NaN")
            case UInt8(ascii: "I"): try expectLiteral("Infinity")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                if bytes[index] == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "I") {
                    index += 1
                    try expectLiteral("Infinity")
                } else if !JSONNumber.scan(bytes, from: &index) {
                    throw fail("invalid number")
                }
            default:
                throw fail("unexpected character, expecting a value")
            }
            // A value ended: close every container that ends here.
            while open > 0 {
                let object = isObject(open - 1)
                guard try containerContinues(closingWith: object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    open -= 1
                    continue
                }
                if object { try skipMemberKey() }
                continue parsing
            }
            return deepest
        }
    }

    /// The JSON text `text` (checked JSON, such as a value ``skipValue(depth:checksDepth:)``
    /// read) without the blanks between tokens: the same value, at most as many bytes.
    package static func compacted(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var inString = false
        var escaped = false
        for byte in text {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: continue
                case UInt8(ascii: "\""): inString = true
                default: break
                }
            }
            output.append(byte)
        }
        return output
    }

    /// Reads past `"key":` without keeping the key.
    private mutating func skipMemberKey() throws(WireFormatError) {
        if try parsePlainMemberKey() == nil { _ = try parseMemberKey() }
    }

    /// Whether `bytes` (a literal's place, a key from ``parsePlainMemberKey()``) are `text`'s UTF-8.
    package static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, are text: StaticString) -> Bool {
        guard text.utf8CodeUnitCount == bytes.count else { return false }
        let expected = UnsafeBufferPointer(start: text.utf8Start, count: bytes.count)
        for offset in 0..<bytes.count where bytes[offset] != expected[offset] { return false }
        return true
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(WireFormatError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw fail("unexpected end of input in a literal") }
        guard Self.bytes(UnsafeBufferPointer(rebasing: bytes[index..<(index + count)]), are: literal) else {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func parseNumber() throws(WireFormatError) -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "I") {
            index += 1
            try expectLiteral("Infinity")
            return JSONNumber(validatedText: "-Infinity")
        }
        guard JSONNumber.scan(bytes, from: &index) else { throw fail("invalid number") }
        return JSONNumber(validatedText: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    /// The text of `bytes` when they are valid UTF-8, else `nil`. Decoding replaces every invalid
    /// sequence with U+FFFD, which is itself valid UTF-8 that no invalid input byte can equal, so
    /// the text is exact if and only if its bytes are the input (`String(validating:as:)` would
    /// need macOS 15 / iOS 18).
    static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// Reads a string starting at its opening quote.
    package mutating func parseString() throws(WireFormatError) -> String {
        let open = index
        index += 1
        let contentStart = index
        // Fast path: no escapes. ASCII needs no UTF-8 validation (most wire strings are CIDs, hex
        // and keys).
        var nonASCII: UInt8 = 0
        // Sixteen, then eight bytes at a time while none is a quote, a backslash, a control
        // character or non-ASCII (metadata hex is hundreds of bytes a post); any such byte is read
        // below. The index is local so the loop keeps it in a register.
        if let base = bytes.baseAddress {
            var position = index
            let end = bytes.count
            while end &- position >= 16 {
                let raw = UnsafeRawPointer(base + position)
                let first = raw.loadUnaligned(as: UInt64.self), second = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                guard Self.isPlainASCII(first, second) else { break }
                position &+= 16
            }
            if end &- position >= 8, Self.isPlainASCII(UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)) {
                position &+= 8
            }
            index = position
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                index += 1
                if nonASCII & 0x80 == 0 { return String(decoding: slice, as: UTF8.self) }
                guard let text = Self.validUTF8(slice) else {
                    throw .invalidJSON(offset: open, reason: "string is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("invalid control character in a string") }
            nonASCII |= byte
            index += 1
        }
        guard index < bytes.count else { throw .invalidJSON(offset: open, reason: "unterminated string") }

        var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = buffer.withUnsafeBufferPointer(Self.validUTF8) else {
                    throw .invalidJSON(offset: open, reason: "string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("invalid control character in a string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw .invalidJSON(offset: open, reason: "unterminated string")
    }

    /// Whether none of the eight bytes of `word` is `"`, `\\`, below 0x20 or above 0x7F (each
    /// test is the exact "has a zero byte" word trick, on the word XORed or offset to make the
    /// byte sought zero).
    @inline(__always)
    static func isPlainASCII(_ word: UInt64) -> Bool {
        flags(word) == 0
    }

    /// ``isPlainASCII(_:)`` of two words, with one test.
    @inline(__always)
    static func isPlainASCII(_ first: UInt64, _ second: UInt64) -> Bool {
        flags(first) | flags(second) == 0
    }

    /// The high bit of each byte of `word` that is `"`, `\\`, below 0x20 or above 0x7F may be set
    /// (and is, for the first such byte); zero when there is none.
    @inline(__always)
    private static func flags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        // A byte is flagged when it is high, or its XOR/offset is zero (the "has a zero byte"
        // trick; ~word over all three drops bytes that were high, already flagged by `word`).
        return (word | ((quote &- ones) | (backslash &- ones) | (word &- ones &* 0x20)) & ~word) & highs
    }

    /// What an unpaired surrogate escape reads as: U+FFFD REPLACEMENT CHARACTER.
    private static let replacementCharacter: Unicode.Scalar = "\u{FFFD}"

    /// Reads the four hex digits after `\u` (and a second escape for a surrogate pair).
    ///
    /// A surrogate escape that is not half of a pair reads as U+FFFD: Python's `json` keeps it as
    /// a lone code point (and `json.dumps` writes one back out), which a Swift `String` cannot
    /// hold. As in Python, an escape after a lone high surrogate is read on its own.
    private mutating func parseUnicodeEscape() throws(WireFormatError) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800...0xDBFF).contains(first) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                return Self.replacementCharacter
            }
            let escape = index
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                index = escape
                return Self.replacementCharacter
            }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail("invalid \\u escape") }
            return scalar
        }
        return Unicode.Scalar(first) ?? Self.replacementCharacter
    }

    private mutating func parseHex4() throws(WireFormatError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}

/// The member names a direct reader looks for, matched on a key's UTF-8 without making a `String`.
package protocol JSONMemberName {
    /// The name whose UTF-8 is `bytes`, or `nil` for a member the reader ignores.
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>)
}

extension JSONMemberName {
    /// The name `name` (a decoded key, or one from a JSON tree), matched as its UTF-8.
    package init?(_ name: String) {
        var name = name
        guard let known = name.withUTF8({ Self(utf8: $0) }) else { return nil }
        self = known
    }
}
