import PQCrypto
import OrderedJSON

/// A post's envelopes document (`GET /content/<envelopes_cid>`):
/// `{"v":1,"post_cid":"…","envelopes":{"<uid>":"<hex>"}}`, keyed by **uid**, the station's own
/// envelope first.
///
/// The station's reader also accepts the older `{"envelopes": {...}}` without `v` or `post_cid`;
/// so does this one. Envelope values that are not strings are skipped, as the station skips them.
package struct EnvelopeSet: Sendable, Hashable, Codable {
    /// The schema version (`v`, currently 1).
    var version: Int
    /// The post the envelopes belong to.
    package var postCID: String?
    /// uid → hex envelope (1162 bytes, `0440…`), in the station's order.
    package var envelopes: OrderedMap<String>

    /// Creates an envelope set.
    package init(postCID: String?, envelopes: OrderedMap<String>, version: Int = 1) {
        self.version = version
        self.postCID = postCID
        self.envelopes = envelopes
    }

    /// The hex envelope sealed for `uid`, or `nil`.
    package func envelope(for uid: String) -> String? { envelopes[uid] }

    /// The envelope bytes for `uid`, or `nil` when there is none.
    ///
    /// - Throws: ``WireFormatError/invalidValue(path:reason:)`` when the hex does not decode.
    package func envelopeBytes(for uid: String) throws(WireFormatError) -> [UInt8]? {
        guard let hex = envelopes[uid] else { return nil }
        do {
            return try Hex.decode(hex)
        } catch {
            throw .invalidValue(path: "envelopes.\(uid)", reason: error.description)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case version = "v"
        case postCID = "post_cid"
        case envelopes
    }

    /// Reads the document tolerantly (missing `v` reads as 1; a missing or non-object
    /// `envelopes` as empty).
    ///
    /// - Throws: `DecodingError.typeMismatch` when the document is not an object.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = container.lenient(Int.self, .version) ?? 1
        postCID = container.lenient(String.self, .postCID)
        envelopes = [:]
        if let members = container.lenient(JSONObject.self, .envelopes) {
            for (uid, value) in members {
                if let hex = value.stringValue { envelopes[uid] = hex }
            }
        }
    }

    /// Writes `v`, `post_cid` (when known) and `envelopes`, in that order.
    ///
    /// - Throws: whatever the encoder throws.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encodeIfPresent(postCID, forKey: .postCID)
        try container.encode(envelopes, forKey: .envelopes)
    }
}
