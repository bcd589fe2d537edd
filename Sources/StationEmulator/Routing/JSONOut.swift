import Manifest
import OrderedJSON

/// JSON writing in the station's styles.
enum JSONOut {
    /// Starlette's `JSONResponse` and the station's published documents:
    /// `separators=(",", ":")`, `ensure_ascii=False`.
    static func compact(_ object: JSONObject) -> [UInt8] { WireJSON.serialize(.object(object), style: .compact) }

    /// Python's default `json.dumps` (`", "`, `": "`, ASCII only), used for the graph documents.
    static func pythonDefault(_ value: JSONValue) -> [UInt8] { WireJSON.serialize(value, style: .pythonDefault) }

    /// `json.dumps(indent=2)`, used for `public.json`.
    static func indented(_ value: JSONValue) -> [UInt8] { WireJSON.serialize(value, style: .pythonIndented) }

    /// A string or `null`.
    static func string(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }

    /// An integer.
    static func int(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
}

/// Python's `repr()` of a JSON value (for error texts that embed a dict, like the station's
/// `Malformed device entry: {...}`).
enum PythonRepr {
    static func of(_ value: JSONValue) -> String {
        switch value {
        case .null: return "None"
        case let .bool(flag): return flag ? "True" : "False"
        case let .number(number): return number.pythonText
        case let .string(text): return string(text)
        case let .array(items): return "[" + items.map(of).joined(separator: ", ") + "]"
        case let .object(object):
            return "{" + object.map { "\(string($0.key)): \(of($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    /// `repr(str)`: single quotes unless the text holds a single quote and no double quote.
    static func string(_ text: String) -> String {
        let quote: Character = text.contains("'") && !text.contains("\"") ? "\"" : "'"
        var out = String(quote)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if Character(scalar) == quote { out += "\\\(quote)" }
                else if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
                } else { out.unicodeScalars.append(scalar) }
            }
        }
        out.append(quote)
        return out
    }
}
