import Foundation
import PQCrypto
import Transport
import ClassicalCrypto

/// The station's keys: ML-KEM-768 (content envelopes), ML-DSA-65 (its own auth key), and the
/// IPFS node's Ed25519 key.
struct StationIdentity: Sendable {
    let mlkem: MLKEM768.PrivateKey
    let mldsa: MLDSA65.PrivateKey
    let node: NodeIdentity

    var mlkemPublicHex: String { Hex.encode(mlkem.publicKey.rawRepresentation) }
    var mldsaPublicHex: String { Hex.encode(mldsa.publicKey.rawRepresentation) }

    static func generate() -> StationIdentity {
        StationIdentity(mlkem: MLKEM768.PrivateKey(), mldsa: MLDSA65.PrivateKey(), node: NodeIdentity(key: Ed25519.PrivateKey()))
    }

    /// The keys file: expanded ML-KEM dk, expanded ML-DSA sk and the Ed25519 seed, in hex.
    private struct Stored: Codable {
        var mlkem: String
        var mldsa: String
        var ed25519Seed: String
    }

    /// Reads `keys.json` from `directory`, or creates it (mode 0600) with fresh keys.
    ///
    /// - Throws: `StationEmulatorError.corruptState` when the file exists but does not hold keys;
    ///   file-system errors when it cannot be written.
    static func loadOrCreate(in directory: URL) throws -> (StationIdentity, created: Bool) {
        let url = directory.appendingPathComponent("keys.json")
        if let data = FileManager.default.contents(atPath: url.path) {
            do {
                let stored = try JSONDecoder().decode(Stored.self, from: data)
                let identity = StationIdentity(
                    mlkem: try MLKEM768.PrivateKey(expandedRepresentation: try Hex.decode(stored.mlkem)),
                    mldsa: try MLDSA65.PrivateKey(expandedRepresentation: try Hex.decode(stored.mldsa)),
                    node: NodeIdentity(key: try Ed25519.PrivateKey(seed: SymmetricKey(data: try Hex.decode(stored.ed25519Seed)))))
                return (identity, false)
            } catch {
                throw StationEmulatorError.corruptState(path: url.path, reason: "\(error)")
            }
        }
        let identity = generate()
        let seedHex = identity.node.key.seed.withUnsafeBytes { Hex.encode($0) }
        let stored = Stored(mlkem: Hex.encode(identity.mlkem.expandedRepresentation),
                            mldsa: Hex.encode(identity.mldsa.expandedRepresentation), ed25519Seed: seedHex)
        let data = try JSONEncoder().encode(stored)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw StationEmulatorError.corruptState(path: url.path, reason: "cannot write the keys file")
        }
        return (identity, true)
    }
}

/// Errors the emulator throws through its Swift API (HTTP errors are responses, not throws).
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .corruptState:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct StationEmulatorError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .corruptState:`).
    public typealias Kind = ErrorKind<StationEmulatorError>

    private enum Detail: Hashable, Sendable {
        case corruptState(path: String, reason: String)
        case cannotListen(String)
        case notServing
        case noStationAt(String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// A file in the data directory exists but cannot be used (its path, what is wrong).
    public static func corruptState(path: String, reason: String) -> StationEmulatorError {
        StationEmulatorError(.corruptState(path: path, reason: reason), .corruptState)
    }

    /// A listening socket could not be set up (what failed).
    public static func cannotListen(_ reason: String) -> StationEmulatorError {
        StationEmulatorError(.cannotListen(reason), .cannotListen)
    }

    /// The operation needs the emulator to be serving over HTTP.
    public static let notServing = StationEmulatorError(.notServing, .notServing)

    /// No station is attached at `host` on a ``StationNetwork`` (nothing, or a gateway host).
    public static func noStationAt(_ host: String) -> StationEmulatorError {
        StationEmulatorError(.noStationAt(host), .noStationAt)
    }

    /// The unusable file, for `Kind.corruptState`.
    public var path: String? { if case .corruptState(let value, _) = detail { value } else { nil } }

    /// What is wrong, for `Kind.corruptState` and `Kind.cannotListen`.
    public var reason: String? {
        switch detail {
        case .corruptState(_, let value), .cannotListen(let value): value
        default: nil
        }
    }

    /// A readable explanation.
    public var description: String {
        switch detail {
        case let .corruptState(path, reason): "the emulator state at \(path) is unusable: \(reason)"
        case let .cannotListen(reason): "cannot listen: \(reason)"
        case let .noStationAt(host): "no station is attached at \(host)"
        case .notServing: "the emulator is not serving over HTTP (call start first)"
        }
    }
}

extension ErrorKind where Failure == StationEmulatorError {
    /// A file in the data directory exists but cannot be used (its path, what is wrong).
    public static var corruptState: Self { Self() }
    /// A listening socket could not be set up (what failed).
    public static var cannotListen: Self { Self() }
    /// The operation needs the emulator to be serving over HTTP.
    public static var notServing: Self { Self() }
    /// No station is attached at the host a ``StationNetwork`` call named.
    public static var noStationAt: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.corruptState, .cannotListen, .notServing, .noStationAt] }
}
