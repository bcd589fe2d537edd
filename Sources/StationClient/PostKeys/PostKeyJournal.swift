import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto

/// The post-key cache as the cache store keeps it (with
/// ``StationClientConfiguration/persistsPostKeys``): a journal of sealed items, so a listing writes
/// only what it changed.
///
/// - `post-keys` (``CacheItem/postKeys(station:)``, named after the station) holds every key as of
///   the last compaction;
/// - `post-keys-1` … `post-keys-16` (that name followed by `-1` … `-16`) each hold the changes of
///   one write since: keys learned, and keys dropped (`null`). They are read in order after `post-keys`.
///
/// Each item is a JSON object from post CID to the key's 64 hex digits (or `null`), sealed by the
/// store like any cache item. A listing that learned nothing writes nothing; one that learned keys
/// writes one item with those keys. When the sixteen change items are used up, when a write
/// failed, or when a quarter of the keys belong to posts no longer in the manifest (and at least
/// 32), the next write compacts: `post-keys` is rewritten with the live keys only, then the change
/// items are deleted in order (a crash between the two leaves a tail of changes already in
/// `post-keys`, which reads the same). An item that does not open or parse, and an entry that is
/// not a CID with a 32-byte key, are skipped; reading the change items stops at the first that
/// is missing or does not open.
struct PostKeyJournal {
    /// How many change items may follow `post-keys` before the next write compacts.
    static let changeItemLimit = 16
    /// The longest post CID kept: the manifest reader skips (and reports) an entry with a longer
    /// one, so no key is learned for it; one read back longer is a foreign entry and skipped. With
    /// keys only for the manifest's posts, an item holds at most `maximumManifestPosts` entries
    /// of at most this plus 72 bytes.
    static let maximumCIDLength = ManifestLimits.defaultMaximumCIDBytes

    /// Keys learned since the last write.
    var learned: [String: SymmetricKey] = [:]
    /// Keys dropped since the last write (a post deleted, a key that no longer opened its post).
    var dropped: Set<String> = []
    /// The change items the store holds after `post-keys` (the next one written is `changeItems + 1`).
    var changeItems = 0
    /// Keys dropped from memory because their posts left the manifest, still in the store.
    var staleInStore = 0
    /// Whether the next write rewrites `post-keys` (a write failed, the cache was cleared, or
    /// this client does not persist keys and removes what an earlier run kept).
    var needsCompaction = false
    /// The last write started: each write waits for the one before, so items are written in order.
    var lastWrite: Task<(any Error)?, Never>?

    /// Whether stale keys are many enough to rewrite `post-keys` without them.
    func prunes(liveKeyCount: Int) -> Bool { staleInStore >= max(32, liveKeyCount / 4) }

    /// One write to the store.
    enum Write {
        /// `post-keys` replaced by these keys (deleted when empty), then every change item deleted.
        case compaction([String: SymmetricKey])
        /// Change item `index` holding these changes.
        case changes(index: Int, learned: [String: SymmetricKey], dropped: Set<String>)
    }

    /// Serializes keys (and drops, as `null`) as an item: `{"<post CID>": "<64 hex>" | null, …}`.
    static func serialize(_ keys: [String: SymmetricKey], dropped: Set<String> = []) -> [UInt8] {
        var object = JSONObject()
        for cid in dropped.sorted() { object[cid] = .null }
        for (cid, key) in keys.sorted(by: { $0.key < $1.key }) {
            object[cid] = .string(key.withUnsafeBytes { Hex.encode($0) })
        }
        return WireJSON.serialize(.object(object))
    }

    /// Applies one stored item to `keys`: each valid entry sets or (with `null`) removes a key;
    /// anything else is skipped.
    static func apply(_ item: [UInt8], to keys: inout [String: SymmetricKey]) {
        guard let object = try? WireJSON.parse(item).objectValue else { return }
        for (cid, value) in object where !cid.isEmpty && cid.utf8.count <= maximumCIDLength {
            if value.isNull {
                keys[cid] = nil
            } else if let hex = value.stringValue, hex.utf8.count == 64, let raw = try? Hex.decode(hex), raw.count == 32 {
                keys[cid] = SymmetricKey(data: raw)
            }
        }
    }
}

extension CacheItem {
    /// Change item `index` (1…16) of the post-key journal of the station `station` (see ``PostKeyJournal``).
    static func postKeyChanges(_ index: Int, station: String) -> String { "\(postKeys(station: station))-\(index)" }

    /// The post-key items versions before station-keyed caches wrote (removed by the client).
    static var legacyPostKeyItems: [String] { [postKeys] + (1...PostKeyJournal.changeItemLimit).map { "\(postKeys)-\($0)" } }
}
