import Foundation
import Manifest

/// The emulator's IPFS repository: dag-pb blocks keyed by CID, built exactly as Kubo's
/// `ipfs add` builds them (CIDv0, 256 KiB chunks, balanced DAG), with recursive pins and a
/// garbage collector. In memory, and mirrored to a directory when one is given.
public final class BlockStore: Sendable {
    private struct State {
        var blocks: [String: [UInt8]] = [:]
        /// Pinned root → every block CID of its DAG.
        var pins: [String: Set<String>] = [:]
    }

    private let state = Locked(State())
    private let directory: URL?

    /// Creates a store; with `directory`, blocks and pins are written there and read back at start.
    ///
    /// - Throws: file-system errors when the directory cannot be created or read.
    public init(directory: URL? = nil) throws {
        self.directory = directory
        guard let directory else { return }
        let blocksDirectory = directory.appendingPathComponent("blocks")
        try FileManager.default.createDirectory(at: blocksDirectory, withIntermediateDirectories: true)
        var loaded = State()
        for name in try FileManager.default.contentsOfDirectory(atPath: blocksDirectory.path) {
            // Only keep files whose bytes hash to their name: a damaged file is dropped, not served.
            guard let cid = try? CID(name),
                  let data = FileManager.default.contents(atPath: blocksDirectory.appendingPathComponent(name).path),
                  cid.matches(block: [UInt8](data)) else { continue }
            loaded.blocks[name] = [UInt8](data)
        }
        if let data = FileManager.default.contents(atPath: directory.appendingPathComponent("pins.json").path),
           let pins = try? JSONDecoder().decode([String: [String]].self, from: data) {
            loaded.pins = pins.mapValues(Set.init)
        }
        state.withLock { $0 = loaded }
    }

    /// Adds `bytes` as a file (like `ipfs add`, pinned) and returns its CIDv0 string.
    @discardableResult
    public func add(_ bytes: some Collection<UInt8>) -> String {
        let (root, blocks) = UnixFS.dag(of: bytes)
        let rootText = root.description
        let written: [DAGBlock] = state.withLock { state in
            var fresh: [DAGBlock] = []
            for block in blocks where state.blocks[block.cid.description] == nil {
                state.blocks[block.cid.description] = block.bytes
                fresh.append(block)
            }
            state.pins[rootText] = Set(blocks.map(\.cid.description))
            return fresh
        }
        persist(newBlocks: written)
        return rootText
    }

    /// Whether the root block of `cid` is held locally.
    public func contains(_ cid: String) -> Bool { state.withLock { $0.blocks[cid] != nil } }

    /// The size of the file at `cid`, or `nil` when it is not a readable local file.
    public func fileSize(_ cid: String) -> UInt64? {
        guard let parsed = try? CID(cid) else { return nil }
        let blocks = state.withLock { $0.blocks }
        return try? UnixFS.fileSize(root: parsed, blocks: { blocks[$0.description] })
    }

    /// The bytes of the file at `cid` (or `range` of it), or `nil` when it is not a readable
    /// local file.
    public func read(_ cid: String, range: Range<UInt64>? = nil) -> [UInt8]? {
        guard let parsed = try? CID(cid) else { return nil }
        let blocks = state.withLock { $0.blocks }
        return try? UnixFS.readAll(root: parsed, range: range, blocks: { blocks[$0.description] })
    }

    /// The encoded size of the DAG under `cid` (Kubo's `object stat` CumulativeSize, without the
    /// link overhead Kubo adds), or 0 when it is not local.
    public func cumulativeSize(_ cid: String) -> Int {
        state.withLock { state in
            guard let members = state.pins[cid] else { return state.blocks[cid]?.count ?? 0 }
            return members.reduce(0) { $0 + (state.blocks[$1]?.count ?? 0) }
        }
    }

    /// Removes the recursive pin on `cid`; `false` when it was not pinned.
    @discardableResult
    public func unpin(_ cid: String) -> Bool {
        let removed = state.withLock { $0.pins.removeValue(forKey: cid) != nil }
        if removed { persist(newBlocks: []) }
        return removed
    }

    /// Deletes every block no pin reaches and returns their CIDs (like `ipfs repo gc`).
    @discardableResult
    public func collectGarbage() -> [String] {
        let removed: [String] = state.withLock { state in
            let live = state.pins.values.reduce(into: Set<String>()) { $0.formUnion($1) }
            let dead = state.blocks.keys.filter { !live.contains($0) }
            for cid in dead { state.blocks[cid] = nil }
            return dead.sorted()
        }
        if let directory {
            for cid in removed {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent("blocks").appendingPathComponent(cid))
            }
        }
        persist(newBlocks: [])
        return removed
    }

    /// The total size of all blocks, and how many there are.
    public var usage: (bytes: Int, objects: Int) {
        state.withLock { state in (state.blocks.values.reduce(0) { $0 + $1.count }, state.blocks.count) }
    }

    /// Every pinned root.
    public var pinnedRoots: Set<String> { state.withLock { Set($0.pins.keys) } }

    private func persist(newBlocks: [DAGBlock]) {
        guard let directory else { return }
        let blocksDirectory = directory.appendingPathComponent("blocks")
        for block in newBlocks {
            try? Data(block.bytes).write(to: blocksDirectory.appendingPathComponent(block.cid.description), options: .atomic)
        }
        let pins = state.withLock { $0.pins.mapValues { $0.sorted() } }
        if let data = try? JSONEncoder().encode(pins) {
            try? data.write(to: directory.appendingPathComponent("pins.json"), options: .atomic)
        }
    }
}
