import PQCrypto

/// The seven-line string a device signs for every authenticated request:
/// `METHOD\nPATH\nUID\nDEVICE_UID\nTS\nNONCE\nBODY_SHA256`, UTF-8.
///
/// The station rebuilds it from the request: the method uppercased, the path as its framework
/// sees it (percent-decoded, no query string: see ``stationPath(requestTarget:)``), the
/// `x-cipher-*` header values verbatim except the body hash, which it lowercases. The signer and
/// the verifier both build the string here, so they cannot drift apart.
public struct CanonicalRequest: Sendable, Equatable {
    /// The HTTP method, uppercased.
    public let method: String
    /// The path as the station sees it.
    public let path: String
    /// `x-cipher-uid`: the station uid for an owner's device.
    public let uid: String
    /// `x-cipher-device`: the device uid, exactly as paired.
    public let deviceUID: String
    /// `x-cipher-ts`: the timestamp header value, verbatim.
    public let timestamp: String
    /// `x-cipher-nonce`: the nonce header value, verbatim.
    public let nonce: String
    /// `x-cipher-body-sha256`, lowercased.
    public let bodySHA256: String

    /// Creates the canonical request; uppercases `method` and lowercases `bodySHA256` as the
    /// station does, and keeps every other field as given.
    public init(
        method: String, path: String, uid: String, deviceUID: String, timestamp: String, nonce: String,
        bodySHA256: String
    ) {
        self.method = method.uppercased()
        self.path = path
        self.uid = uid
        self.deviceUID = deviceUID
        self.timestamp = timestamp
        self.nonce = nonce
        self.bodySHA256 = bodySHA256.lowercased()
    }

    /// The string to sign.
    public var string: String {
        [method, path, uid, deviceUID, timestamp, nonce, bodySHA256].joined(separator: "\n")
    }

    /// The UTF-8 bytes to sign.
    public var bytes: [UInt8] { Array(string.utf8) }

    /// The path a Cipher Station (uvicorn + Starlette) signs over for a request target such as
    /// `/content/Qm…?x=1`: the part before `?`, percent-decoded (invalid escapes stay literal,
    /// invalid UTF-8 becomes U+FFFD), then re-read as a URL path, which drops tab, CR and LF and
    /// ends at a decoded `?` or `#`.
    ///
    /// For ordinary paths (`/post`, `/content/<cid>`) this is the path unchanged.
    public static func stationPath(requestTarget: String) -> String {
        let rawPath = requestTarget.utf8.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
            .first.map { Array($0) } ?? []
        let decoded = String(decoding: percentDecoded(rawPath), as: UTF8.self)
        var path = ""
        for scalar in decoded.unicodeScalars {
            if scalar == "?" || scalar == "#" { break }
            if scalar == "\t" || scalar == "\r" || scalar == "\n" { continue }
            path.unicodeScalars.append(scalar)
        }
        return path
    }

    /// Python's `urllib.parse.unquote` on bytes: `%XX` with two hex digits becomes that byte;
    /// anything else is kept as is.
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = Hex.value(ofDigit: bytes[index + 1]), let low = Hex.value(ofDigit: bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }
}
