import Foundation
import Transport
import Manifest
import ContentAddressing

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
    /// `pins.log` in the directory.
    private let pinLog: URL?

    /// Creates a store; with `directory`, blocks and pins are written there and read back at start.
    ///
    /// Pins are kept in `pins.log`, one line per change (`+ root member…`, `- root`), so adding a
    /// file appends a line instead of rewriting every pin; it is compacted at start. A `pins.json`
    /// from an older emulator is read first and then folded into the log.
    ///
    /// - Throws: file-system errors when the directory cannot be created or read.
    public init(directory: URL? = nil) throws {
        self.directory = directory
        pinLog = directory?.appendingPathComponent("pins.log")
        guard let directory, let pinLog else { return }
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
        let legacyPins = directory.appendingPathComponent("pins.json")
        if let data = FileManager.default.contents(atPath: legacyPins.path),
           let pins = try? JSONDecoder().decode([String: [String]].self, from: data) {
            loaded.pins = pins.mapValues(Set.init)
        }
        if let data = FileManager.default.contents(atPath: pinLog.path) {
            Self.replay(data, into: &loaded.pins)
        }
        let compacted = loaded.pins.keys.sorted().compactMap { root in loaded.pins[root].map { Self.pinLine(root, $0.sorted()) } }
        try Data(compacted.joined().utf8).write(to: pinLog, options: .atomic)
        try? FileManager.default.removeItem(at: legacyPins)
        state.withLock { $0 = loaded }
    }

    /// Adds `bytes` as a file (like `ipfs add`, pinned) and returns its CIDv0 string.
    @discardableResult
    public func add(_ bytes: some Collection<UInt8>) -> String {
        let (root, blocks) = UnixFS.dag(of: bytes)
        return store(root: root, blocks: blocks, members: blocks.map(\.cid)) ?? root.description
    }

    /// Adds the next version of the file `file` tracks (like ``add(_:)``), whose first
    /// `unchangedPrefix` bytes are the last version's, hashing only the chunks after them;
    /// returns its CIDv0 string.
    func add(_ bytes: [UInt8], unchangedPrefix: Int, revising file: inout UnixFS.RevisedFile) -> String {
        let revision = file.revise(to: bytes, unchangedPrefix: unchangedPrefix)
        if let root = store(root: revision.root, blocks: revision.blocks, members: revision.members) { return root }
        // A reused leaf was collected since the last version: build every block again.
        return add(bytes, unchangedPrefix: 0, revising: &file)
    }

    /// Stores the blocks not held yet, pins `root` with `members` and persists them; `nil` (and
    /// nothing changed) when a member is neither held nor among `blocks`.
    private func store(root: CID, blocks: [DAGBlock], members: [CID]) -> String? {
        let rootText = root.description
        let memberTexts = members.map(\.description)
        let written: [DAGBlock]? = state.withLock { state in
            var fresh: [DAGBlock] = []
            var freshCIDs = Set<String>()
            for block in blocks {
                let cid = block.cid.description
                if state.blocks[cid] == nil, freshCIDs.insert(cid).inserted { fresh.append(block) }
            }
            guard memberTexts.allSatisfy({ state.blocks[$0] != nil || freshCIDs.contains($0) }) else { return nil }
            for block in fresh { state.blocks[block.cid.description] = block.bytes }
            state.pins[rootText] = Set(memberTexts)
            // Under the lock, so the log lists pin changes in the order they happened.
            appendToPinLog(Self.pinLine(rootText, memberTexts))
            return fresh
        }
        guard let written else { return nil }
        if let directory {
            let blocksDirectory = directory.appendingPathComponent("blocks")
            for block in written {
                // Written in place, not through a temporary file and a rename: a block is named by
                // its hash and checked against it when the store is loaded, so a write cut short
                // is dropped then (as if never written), and a station of 10,000 posts writes
                // tens of thousands of blocks.
                try? Data(block.bytes).write(to: blocksDirectory.appendingPathComponent(block.cid.description))
            }
        }
        return rootText
    }

    /// Whether the root block of `cid` is held locally.
    public func contains(_ cid: String) -> Bool { state.withLock { $0.blocks[cid] != nil } }

    /// The size of the file at `cid`, or `nil` when it is not a readable local file.
    public func fileSize(_ cid: String) -> UInt64? {
        guard let parsed = try? CID(cid) else { return nil }
        return try? UnixFS.fileSize(root: parsed, blocks: block)
    }

    /// The block stored under `cid` itself (for a file, its root block), or `nil` when it is not local.
    public func rawBlock(_ cid: String) -> [UInt8]? {
        guard let parsed = try? CID(cid) else { return nil }
        return block(parsed)
    }

    /// The bytes of the file at `cid` (or `range` of it), or `nil` when it is not a readable
    /// local file.
    public func read(_ cid: String, range: Range<UInt64>? = nil) -> [UInt8]? {
        guard let parsed = try? CID(cid) else { return nil }
        return try? UnixFS.readAll(root: parsed, range: range, blocks: block)
    }

    /// One block, looked up under the lock (a copy of the whole table would be copied again by
    /// the next write while a read holds it). ``UnixFS`` checks its hash against the CID.
    private func block(_ cid: CID) -> [UInt8]? { state.withLock { $0.blocks[cid.description] } }

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
        state.withLock { state in
            guard state.pins.removeValue(forKey: cid) != nil else { return false }
            appendToPinLog("- \(cid)\n")
            return true
        }
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
        return removed
    }

    /// The total size of all blocks, and how many there are.
    public var usage: (bytes: Int, objects: Int) {
        state.withLock { state in (state.blocks.values.reduce(0) { $0 + $1.count }, state.blocks.count) }
    }

    /// Every pinned root.
    public var pinnedRoots: Set<String> { state.withLock { Set($0.pins.keys) } }

    // MARK: Pin log

    /// `+ root member…` (a pin set or replaced).
    private static func pinLine(_ root: String, _ members: [String]) -> String {
        "+ " + ([root] + members).joined(separator: " ") + "\n"
    }

    /// Appends one line to the pin log (when there is a directory). Call under the lock.
    private func appendToPinLog(_ line: String) {
        guard let pinLog else { return }
        guard let handle = try? FileHandle(forWritingTo: pinLog) else {
            try? Data(line.utf8).write(to: pinLog)
            return
        }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line.utf8))
    }

    /// Applies the log's lines in order; a last line without its newline (a write cut short) and
    /// lines that do not parse are skipped.
    private static func replay(_ log: Data, into pins: inout [String: Set<String>]) {
        for line in log.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            let fields = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
            guard fields.count >= 2, fields.dropFirst().allSatisfy({ (try? CID($0)) != nil }) else { continue }
            switch fields[0] {
            case "+": pins[fields[1]] = Set(fields.dropFirst(2))
            case "-": pins[fields[1]] = nil
            default: continue
            }
        }
    }
}
