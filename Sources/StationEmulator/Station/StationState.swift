import Foundation
import Manifest
import OrderedJSON
import ContentAddressing

/// A row of the station's `followers` table: one device of a uid (the station itself, a paired
/// device of the owner, or a follower's device).
struct FollowerRow: Codable, Sendable, Equatable {
    var uid: String
    var deviceUID: String
    var mlkemPublicKey: String
    var mldsaPublicKey: String?
    var alias: String?
    var allowed: String
    var endpoint: String?
    var ipnsID: String?

    /// The row as the station's `_row_to_follower` writes it (its key order).
    var json: JSONValue {
        .object([
            "uid": .string(uid), "device_uid": .string(deviceUID), "mlkem_public_key": .string(mlkemPublicKey),
            "mldsa_public_key": JSONOut.string(mldsaPublicKey), "alias": JSONOut.string(alias),
            "allowed": .string(allowed), "endpoint": JSONOut.string(endpoint), "ipns_id": JSONOut.string(ipnsID),
        ])
    }
}

/// A row of the `following` table: a station this one follows.
struct FollowingRow: Codable, Sendable, Equatable {
    var uid: String
    var mlkemPublicKey: String
    var mldsaPublicKey: String?
    var endpoint: String
    var ipnsID: String?

    /// The row in the station's column order (`uid, mlkem_public_key, mldsa_public_key, endpoint, ipns_id`).
    var json: JSONValue {
        .object([
            "uid": .string(uid), "mlkem_public_key": .string(mlkemPublicKey),
            "mldsa_public_key": JSONOut.string(mldsaPublicKey), "endpoint": .string(endpoint),
            "ipns_id": JSONOut.string(ipnsID),
        ])
    }
}

/// A pairing session started by `/delegate/start`.
struct PairingSession: Codable, Sendable {
    var pairingID: String
    var createdAt: Int64
    var expiresAt: Int64
    var deviceUID: String
    var mlkemPublicKey: String
    var mldsaPublicKey: String
    /// A salted hash of the PIN: like the station, the emulator keeps no PIN in its state.
    var salt: [UInt8]
    var pinHash: [UInt8]
    var attempts: Int
    var status: String
}

/// Everything the station knows besides its keys and its blocks.
struct StationState: Sendable {
    var publicDocument: PublicDocument
    var followers: [FollowerRow] = []
    var following: [FollowingRow] = []
    /// The manifest with its published bytes kept (change the manifest through it).
    var ledger = ManifestLedger()
    var pairing: [PairingSession] = []
    var pairingFailures: [Int64] = []
    /// The CID of the last published `public.json` (what `/ipns/<name>` resolves to).
    var publishedPublicCID: String?
    /// The sequence number of the last IPNS record published (0 before the first).
    var ipnsSequence: UInt64 = 0
    /// The signed IPNS records published, oldest first (the last 32), each pointing at the
    /// `public.json` of its time.
    var ipnsRecords: [[UInt8]] = []

    var uid: String { publicDocument.uid }

    /// The manifest.
    var manifest: Manifest { ledger.manifest }

    /// Follower rows in the station's `ORDER BY uid, device_uid` (byte order).
    var sortedFollowers: [FollowerRow] {
        followers.sorted { lhs, rhs in
            lhs.uid == rhs.uid ? Self.byteOrder(lhs.deviceUID, rhs.deviceUID) : Self.byteOrder(lhs.uid, rhs.uid)
        }
    }

    /// SQLite's default BINARY collation.
    static func byteOrder(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }

    /// `INSERT OR REPLACE` on the `(uid, device_uid)` key.
    mutating func upsertFollower(_ row: FollowerRow) {
        if let index = followers.firstIndex(where: { $0.uid == row.uid && $0.deviceUID == row.deviceUID }) {
            followers[index] = row
        } else {
            followers.append(row)
        }
    }
}

/// The on-disk form of ``StationState`` (documents kept in their exact wire bytes). The manifest
/// is not copied in: it is the block at `manifestCID` (the last published one), so saving the
/// state after a post does not rewrite every post. Older emulators wrote the manifest itself in
/// `manifest`, which is still read.
struct StationSnapshot: Codable {
    var publicDocument: String
    var followers: [FollowerRow]
    var following: [FollowingRow]
    var manifestCID: String?
    var manifest: String?
    var pairing: [PairingSession]
    var pairingFailures: [Int64]
    var publishedPublicCID: String?
    var ipnsSequence: UInt64?

    init(_ state: StationState) {
        publicDocument = String(decoding: (try? WireJSON.encode(state.publicDocument)) ?? [], as: UTF8.self)
        followers = state.followers
        following = state.following
        manifestCID = state.publicDocument.manifestPointer
        pairing = state.pairing
        pairingFailures = state.pairingFailures
        publishedPublicCID = state.publishedPublicCID
        ipnsSequence = state.ipnsSequence
    }

    /// - Throws: `WireFormatError` when a stored document does not parse;
    ///   ``StationEmulatorError/corruptState(path:reason:)`` when the manifest block is missing.
    func restore(blocks: BlockStore) throws -> StationState {
        var state = StationState(publicDocument: try WireJSON.decode(PublicDocument.self, from: Array(publicDocument.utf8)))
        state.followers = followers
        state.following = following
        if let manifest {
            state.ledger = ManifestLedger(try Manifest.read(Array(manifest.utf8)))
        } else if let manifestCID {
            guard let bytes = blocks.read(manifestCID) else {
                throw StationEmulatorError.corruptState(path: "blocks/\(manifestCID)", reason: "the manifest is missing or damaged")
            }
            state.ledger = ManifestLedger(try Manifest.read(bytes))
        }
        state.pairing = pairing
        state.pairingFailures = pairingFailures
        state.publishedPublicCID = publishedPublicCID
        state.ipnsSequence = ipnsSequence ?? 0
        return state
    }
}
