#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads and writes the station's JSON: tolerant, order-preserving reading and byte-exact
/// writing in the layouts of Python's `json.dumps`.
///
/// Read every station body with ``decode(_:from:dates:)-(_,[UInt8],_)``: it keeps objects in document
/// order (so a manifest written back with ``encode(_:style:dates:)`` has the same bytes and the same
/// CID), accepts everything Python's `json.loads` accepts, and reports failures as
/// ``WireFormatError`` with the path of the bad field. The models also work with Foundation's
/// `JSONDecoder`/`JSONEncoder`, without those guarantees.
package enum WireJSON {
    /// The deepest nesting of arrays and objects a document may have. The station's Python
    /// cannot write JSON much deeper than 1,000 levels; nothing it publishes comes near this.
    package static let maximumDepth = 512

    /// The most memory the values of one document may take, as ``JSONMemoryBudget`` charges
    /// them (64 MiB): more than any station answer needs (the largest, a followers list of
    /// 16 MiB, is mostly long hex strings, charged about their length), and far below what
    /// hostile JSON within the size limits would build (up to
    /// ``JSONMemoryBudget/maximumCostPerByte`` times its size).
    package static let documentMemoryLimit = 64 << 20

    /// Parses JSON into a ``JSONValue``.
    ///
    /// - Throws: ``WireFormatError/invalidJSON(offset:reason:)`` for text Python's `json.loads`
    ///   would reject (and for invalid UTF-8; an unpaired surrogate escape reads as U+FFFD);
    ///   ``WireFormatError/nestingTooDeep(offset:limit:)`` past ``maximumDepth``;
    ///   ``WireFormatError/memoryLimitExceeded(limit:)`` when its values would take more than
    ///   ``documentMemoryLimit``.
    package static func parse(_ bytes: [UInt8]) throws(WireFormatError) -> JSONValue {
        var memory = JSONMemoryBudget(limit: documentMemoryLimit)
        return try parse(bytes, charging: &memory)
    }

    /// Parses JSON into a ``JSONValue``, charging what it builds to `memory` (shared by the
    /// documents of one reading, the metadata of a listing's posts, say).
    ///
    /// - Throws: as ``parse(_:)-([UInt8])``, with ``WireFormatError/memoryLimitExceeded(limit:)``
    ///   when `memory` runs out.
    package static func parse(_ bytes: [UInt8], charging memory: inout JSONMemoryBudget) throws(WireFormatError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth, memory: memory)
            let value = Result { () throws(WireFormatError) in try parser.parseDocument() }
            return (value, parser.memory)
        }
        memory = result.1
        return try result.0.get()
    }

    /// Parses JSON held in any byte container (`Data`, a slice, …); see ``parse(_:)-([UInt8])``.
    ///
    /// - Throws: as ``parse(_:)-([UInt8])``.
    package static func parse(_ bytes: some DataProtocol) throws(WireFormatError) -> JSONValue {
        // Contiguous bytes (`Data`, arrays) are read in place; others are copied once.
        let direct = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(WireFormatError) in
                var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth,
                                        memory: JSONMemoryBudget(limit: documentMemoryLimit))
                return try parser.parseDocument()
            }
        }
        if let direct { return try direct.get() }
        return try parse([UInt8](bytes))
    }

    /// Writes `value` in `style` (by default the station's compact form).
    package static func serialize(_ value: JSONValue, style: JSONStyle = .compact) -> [UInt8] {
        var writer = JSONWriter(style: style)
        writer.write(value)
        return writer.output
    }

    /// Decodes a model from JSON bytes.
    ///
    /// `Date` members are read with `dates`: by default integer or fractional Unix seconds or
    /// ISO-8601 strings (see ``DateDecoding``).
    ///
    /// - Throws: ``WireFormatError``: the JSON errors of ``parse(_:)-([UInt8])``, or
    ///   ``WireFormatError/missingField(path:)``, ``WireFormatError/typeMismatch(path:expected:found:)``
    ///   and ``WireFormatError/invalidValue(path:reason:)`` when the JSON does not fit the model.
    package static func decode<T: Decodable>(
        _ type: T.Type, from bytes: [UInt8], dates: DateDecoding = .flexible
    ) throws(WireFormatError) -> T {
        try decode(type, from: parse(bytes), dates: dates)
    }

    /// Decodes a model from JSON held in any byte container; see ``decode(_:from:dates:)-(_,[UInt8],_)``.
    ///
    /// - Throws: as ``decode(_:from:dates:)-(_,[UInt8],_)``.
    package static func decode<T: Decodable>(
        _ type: T.Type, from bytes: some DataProtocol, dates: DateDecoding = .flexible
    ) throws(WireFormatError) -> T {
        try decode(type, from: parse(bytes), dates: dates)
    }

    /// Decodes a model from an already parsed value (for example a public post's metadata).
    ///
    /// - Throws: as ``decode(_:from:dates:)-(_,[UInt8],_)``, without the JSON syntax errors.
    package static func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, dates: DateDecoding = .flexible
    ) throws(WireFormatError) -> T {
        do {
            return try WireValueDecoder(value: value, codingPath: [], dates: dates).decode(type)
        } catch let error as WireFormatError {
            throw error
        } catch let error as DecodingError {
            throw WireFormatError.from(error)
        } catch {
            throw WireFormatError.invalidValue(path: "", reason: String(describing: error))
        }
    }

    /// Converts a model into a ``JSONValue``, objects in the order the model encodes its keys.
    /// `Date` members are written with `dates` (by default integer Unix seconds, the station's
    /// convention; see ``DateEncoding``).
    ///
    /// - Throws: ``WireFormatError/encodingFailed(reason:)`` when the model's `encode(to:)` throws.
    package static func value<T: Encodable>(of model: T, dates: DateEncoding = .unixSeconds) throws(WireFormatError) -> JSONValue {
        let root = EncodingNode()
        do {
            try WireValueEncoder(node: root, codingPath: [], dates: dates).encode(model)
        } catch {
            throw WireFormatError.encodingFailed(reason: String(describing: error))
        }
        return root.materialize()
    }

    /// Writes a model as JSON in `style` (by default the station's compact form), members in the
    /// order the model encodes them, `Date` members as `dates` has them (by default integer Unix
    /// seconds, as PROTOCOL.md's `"created_at": 1704067200`).
    ///
    /// - Throws: ``WireFormatError/encodingFailed(reason:)`` when the model's `encode(to:)` throws.
    package static func encode<T: Encodable>(
        _ model: T, style: JSONStyle = .compact, dates: DateEncoding = .unixSeconds
    ) throws(WireFormatError) -> [UInt8] {
        serialize(try value(of: model, dates: dates), style: style)
    }
}
