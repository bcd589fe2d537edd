/// How ``WireJSON`` lays out JSON text, as the station's Python calls `json.dumps`: ``compact``
/// here (what clients write); the emulator adds the two other layouts the station uses.
package struct JSONStyle: Sendable, Hashable {
    /// Spaces per nesting level, or `nil` for everything on one line.
    var indent: Int?
    /// What goes between array elements and object members (before the newline, if indenting).
    var itemSeparator: String
    /// What goes between a key and its value.
    var keySeparator: String
    /// Whether every character outside printable ASCII is written as a `\u` escape
    /// (Python's `ensure_ascii=True`).
    var asciiOnly: Bool

    /// Creates a style.
    init(indent: Int?, itemSeparator: String, keySeparator: String, asciiOnly: Bool) {
        self.indent = indent
        self.itemSeparator = itemSeparator
        self.keySeparator = keySeparator
        self.asciiOnly = asciiOnly
    }

    /// `json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`: the station's manifest,
    /// envelope sets and encrypted metadata, and what clients should send.
    package static let compact = JSONStyle(indent: nil, itemSeparator: ",", keySeparator: ":", asciiOnly: false)

    /// `json.dumps(obj)`: the station's social-graph documents.
    package static let pythonDefault = JSONStyle(indent: nil, itemSeparator: ", ", keySeparator: ": ", asciiOnly: true)

    /// `json.dumps(obj, indent=2)`: the `public.json` the station publishes to IPNS.
    package static let pythonIndented = JSONStyle(indent: 2, itemSeparator: ",", keySeparator: ": ", asciiOnly: true)
}

/// Writes ``JSONValue`` as Python's `json.dumps` would, byte for byte.
struct JSONWriter {
    private let style: JSONStyle
    private let itemSeparator: [UInt8]
    private let keySeparator: [UInt8]
    private(set) var output = [UInt8]()

    init(style: JSONStyle) {
        self.style = style
        itemSeparator = Array(style.itemSeparator.utf8)
        keySeparator = Array(style.keySeparator.utf8)
    }

    mutating func write(_ value: JSONValue, depth: Int = 0) {
        switch value {
        case .null: output.append(contentsOf: Array("null".utf8))
        case let .bool(flag): output.append(contentsOf: Array((flag ? "true" : "false").utf8))
        case let .number(number): output.append(contentsOf: Array(number.pythonText.utf8))
        case let .string(text): writeString(text)
        case let .array(elements):
            writeContainer(elements, open: "[", close: "]", depth: depth) { writer, element in
                writer.write(element, depth: depth + 1)
            }
        case let .object(members):
            writeContainer(members, open: "{", close: "}", depth: depth) { writer, member in
                writer.writeString(member.key)
                writer.output.append(contentsOf: writer.keySeparator)
                writer.write(member.value, depth: depth + 1)
            }
        }
    }

    /// Writes an array or object: `open`, each item on its own line when indenting (separated by
    /// the style's item separator), then `close` on its own line; `open` and `close` alone when
    /// there are no items, as Python writes `[]` and `{}`.
    private mutating func writeContainer<Items: Sequence>(
        _ items: Items, open: Unicode.Scalar, close: Unicode.Scalar, depth: Int,
        writeItem: (inout JSONWriter, Items.Element) -> Void
    ) {
        output.append(UInt8(ascii: open))
        var written = 0
        for item in items {
            if written > 0 { output.append(contentsOf: itemSeparator) }
            newline(depth + 1)
            writeItem(&self, item)
            written += 1
        }
        if written > 0 { newline(depth) }
        output.append(UInt8(ascii: close))
    }

    private mutating func newline(_ depth: Int) {
        guard let indent = style.indent else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * depth))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeEscape(_ unit: UInt16) {
        output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) {
            output.append(Self.hexDigits[Int((unit >> UInt16(shift)) & 0xF)])
        }
    }

    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case 0x5C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20: writeEscape(UInt16(scalar.value))
            case 0x20..<0x7F: output.append(UInt8(scalar.value))
            default:
                if style.asciiOnly {
                    for unit in String(scalar).utf16 { writeEscape(unit) }
                } else {
                    output.append(contentsOf: Array(String(scalar).utf8))
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
