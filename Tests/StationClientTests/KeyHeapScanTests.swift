import Foundation
import Manifest
import PQCrypto
@testable import StationClient
import ClassicalCrypto
import StationEmulator
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OrderedJSON

/// Private keys leave no copy in the heap: after pairing, a listing and a reload through a
/// `FileKeyStore`, with every object dropped, the process's writable memory holds neither the
/// keys' hex nor their raw bytes. Linux only (it reads `/proc/self/mem`).
@Suite("Private keys leave no copy in the heap")
struct KeyHeapScanTests {
    /// Masked search patterns (each byte XOR ``mask``), so the scanner's own memory never holds a
    /// pattern in the clear.
    struct Needles {
        static let mask: UInt8 = 0x5A
        var kemHex: [UInt8] = []
        var kemRaw: [UInt8] = []
        var signingHex: [UInt8] = []
        var signingRaw: [UInt8] = []

        /// 16 secret bytes of each key (the start of ML-KEM's dk_PKE; ML-DSA's K, after the
        /// public ρ) and their hex.
        init(kem: MLKEM768.PrivateKey, signing: MLDSA65.PrivateKey) {
            kem.expandedSecret.withUnsafeBytes { bytes in
                kemRaw = Self.masked(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
                kemHex = Self.maskedHex(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
            }
            signing.expandedSecret.withUnsafeBytes { bytes in
                signingRaw = Self.masked(UnsafeRawBufferPointer(rebasing: bytes[32..<48]))
                signingHex = Self.maskedHex(UnsafeRawBufferPointer(rebasing: bytes[32..<48]))
            }
        }

        static func masked(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { bytes.map { $0 ^ mask } }

        static func maskedHex(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
            let hex = SecretBytes(count: bytes.count * 2) { Hex.encode(bytes, into: $0) }
            return hex.withUnsafeBytes { masked($0) }
        }
    }

    struct Counts: Equatable, CustomStringConvertible {
        var kemHex = 0, kemRaw = 0, signingHex = 0, signingRaw = 0
        var total: Int { kemHex + kemRaw + signingHex + signingRaw }
        var description: String { "ML-KEM hex \(kemHex), raw \(kemRaw); ML-DSA hex \(signingHex), raw \(signingRaw)" }
    }

    /// Pairs, publishes, lists and reloads from the store; returns the needles of
    /// the device's keys and a scan taken while the client is still alive. Everything it made is
    /// dropped when it returns.
    static func pairListReload(directory: URL, legacyCopies: Bool) async throws -> (Needles, Counts) {
        let emulator = try StationEmulator()
        let store = try FileKeyStore(directory: directory, passphrase: "heap scan", limits: .init(operations: 1, memoryBytes: 1 << 20))
        let configuration = StationClientConfiguration(namespace: "drive", keyStore: store, transport: emulator.transport)
        let log = emulator.log
        let client = try await StationClient.pair(endpoint: URL(string: "http://station.test")!, deviceName: "Scanner",
                                                  configuration: configuration) { _ in log.latestPIN }
        _ = try await client.publish(data: Data("scanned".utf8), metadata: Fixture.drive("scan.txt", size: 7))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        // The reload comes last, so whatever copies its decoding leaves are the newest in the heap.
        let reloaded = try await StationClient.load(configuration: configuration)
        let credentials = await reloaded.credentials
        let needles = Needles(kem: try credentials.pureKEMKey, signing: try credentials.pureSigningKey)
        if legacyCopies {
            // What the SDK did before: the keys as hex `String`s in the JSON, decoded through
            // `String`s and `Data` that are never zeroed.
            let json = WireJSON.serialize(.object([
                "kem_private_key": .string(Hex.encode(try credentials.pureKEMKey.expandedRepresentation)),
                "signing_private_key": .string(Hex.encode(try credentials.pureSigningKey.expandedRepresentation)),
            ]))
            let object = try WireJSON.parse(json).objectValue
            _ = try MLKEM768.PrivateKey(expandedRepresentation: Hex.decode(object?["kem_private_key"]?.stringValue ?? ""))
            _ = try MLDSA65.PrivateKey(expandedRepresentation: Hex.decode(object?["signing_private_key"]?.stringValue ?? ""))
        }
        // While the keys are alive the scanner finds their raw bytes (in their own storage).
        let live = try scan(needles)
        return (needles, live)
    }

    @Test("After pairing, a listing and a reload, with every object dropped, no key hex or raw bytes are left")
    func noKeyBytesLeft() async throws {
        #if os(Linux)
        let directory = try Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (needles, live) = try await Self.pairListReload(directory: directory.appendingPathComponent("a"), legacyCopies: false)
        #expect(live.signingRaw >= 1, "the scanner must see the live key: \(live)")
        let after = try Self.scan(needles)
        print("heap scan, keys alive: \(live); every object dropped: \(after)")
        #expect(after.total == 0, "\(after)")

        // The same run with the SDK's earlier copies made on purpose: what the scan found before.
        let (legacyNeedles, _) = try await Self.pairListReload(directory: directory.appendingPathComponent("b"), legacyCopies: true)
        let legacy = try Self.scan(legacyNeedles)
        print("heap scan with the earlier String/Data copies, every object dropped: \(legacy)")
        #else
        // /proc/self/mem is Linux's; the structural checks (KeyStoreTests) run everywhere.
        #endif
    }

    /// Counts the needles in every readable and writable mapping of this process.
    static func scan(_ needles: Needles) throws -> Counts {
        #if os(Linux)
        // Read to the end: `String(contentsOfFile:)` trusts the size the file reports (0) and
        // keeps one read (a page), which left the mappings past the first 4 KiB unscanned.
        let maps = String(decoding: try BoundedFileRead.bytes(of: URL(fileURLWithPath: "/proc/self/maps"), limit: 16 << 20),
                          as: UTF8.self)
        let memory = open("/proc/self/mem", O_RDONLY)
        try #require(memory >= 0)
        defer { close(memory) }
        // The read buffer is a mapping of its own, left out of the scan.
        let chunk = 1 << 20
        guard let raw = mmap(nil, chunk + 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else {
            throw CocoaError(.featureUnsupported)
        }
        defer {
            memset(raw, 0, chunk + 64)
            munmap(raw, chunk + 64)
        }
        let bufferStart = UInt(bitPattern: raw)
        let buffer = raw.assumingMemoryBound(to: UInt8.self)
        var counts = Counts()
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            if fields.count >= 6, fields[5].hasPrefix("[v") { continue }  // [vvar], [vsyscall]
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16) else { continue }
            // The kernel may merge the buffer's mapping with a neighbouring one: leave out the
            // buffer's own bytes only, not the region around it.
            let bufferEnd = bufferStart + UInt(chunk + 64)
            let ranges = bufferStart < end && start < bufferEnd
                ? [start..<max(start, bufferStart), min(end, bufferEnd)..<end] : [start..<end]
            for range in ranges where !range.isEmpty {
                let end = range.upperBound
                var address = range.lowerBound
                while address < end {
                    // Overlap by 31 bytes so a pattern across two reads is still found.
                    let count = Int(min(UInt(chunk), end - address))
                    let read = pread(memory, buffer, count, off_t(Int64(bitPattern: UInt64(address))))
                    // Another test's thread may unmap or protect pages of this region while it is
                    // read (tests run in parallel): skip the page that fails, not the rest of the region.
                    if read <= 0 {
                        address += 4096
                        continue
                    }
                    let region = UnsafeRawBufferPointer(start: buffer, count: read)
                    counts.kemHex += occurrences(needles.kemHex, in: region)
                    counts.kemRaw += occurrences(needles.kemRaw, in: region)
                    counts.signingHex += occurrences(needles.signingHex, in: region)
                    counts.signingRaw += occurrences(needles.signingRaw, in: region)
                    address += UInt(read) > 31 && address + UInt(read) < end ? UInt(read) - 31 : UInt(read)
                }
            }
        }
        return counts
        #else
        return Counts()
        #endif
    }

    /// How often the unmasked `needle` occurs in `haystack` (candidates found with `memchr`).
    static func occurrences(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int {
        guard let first = needle.first, let base = haystack.baseAddress, haystack.count >= needle.count else { return 0 }
        let lead = Int32(first ^ Needles.mask)
        var found = 0
        var offset = 0
        while offset <= haystack.count - needle.count {
            guard let hit = memchr(base + offset, lead, haystack.count - needle.count + 1 - offset) else { break }
            let position = base.distance(to: UnsafeRawPointer(hit))
            var matches = true
            for index in 1..<needle.count where haystack[position + index] ^ Needles.mask != needle[index] {
                matches = false
                break
            }
            if matches { found += 1 }
            offset = position + 1
        }
        return found
    }
}
