import Foundation
@testable import ContentAddressing
import TestSupport
import Testing

/// `kubo-cids.json`: CIDs measured with real Kubo (see Resources/README.md).
struct KuboCIDFile: Decodable {
    struct Case: Decodable, CustomTestStringConvertible {
        let input: String
        let size: Int
        let cid: String
        var testDescription: String { "\(input) \(size) B" }
    }

    let generator: String
    let kubo: String
    let cases: [Case]

    static func load() throws -> KuboCIDFile { try loadResource("kubo-cids.json") }
}

/// The literal input of the non-pattern case: the JSON holds `hello world\n` with the newline
/// written as `\n`.
private func literalBytes(_ text: String) -> [UInt8] {
    Array(text.replacingOccurrences(of: "\\n", with: "\n").utf8)
}

@Suite("CIDs match Kubo's ipfs add")
struct KuboCIDTests {
    static let cases = (try? KuboCIDFile.load().cases) ?? []

    @Test func resourceHasEveryBoundaryCase() throws {
        let file = try KuboCIDFile.load()
        #expect(file.cases.count == 15)
        #expect(file.generator.contains("i % 251"))
        let sizes = Set(file.cases.map(\.size))
        for boundary in [0, 12, 262_144, 262_145, 1_000_000, 174 * 262_144, 174 * 262_144 + 1, 100 * 1_048_576] {
            #expect(sizes.contains(boundary), "missing \(boundary)")
        }
    }

    /// Every case, streamed through `CIDBuilder` in pieces that straddle chunk boundaries.
    @Test(arguments: cases)
    func streamedCIDMatchesKubo(_ entry: KuboCIDFile.Case) throws {
        var builder = CIDBuilder()
        if entry.input == "pattern" {
            PatternStream().forEachPiece(size: entry.size) { piece in
                builder.update(piece)
                #expect(builder.bufferedByteCount < CIDBuilder.chunkSize)
            }
        } else {
            let bytes = literalBytes(entry.input)
            #expect(bytes.count == entry.size)
            builder.update(bytes)
        }
        #expect(builder.byteCount == UInt64(entry.size))
        let cid = builder.finish()
        #expect(cid.description == entry.cid)
        #expect(cid == (try CID(entry.cid)))
        #expect(cid.version == .v0)
    }

    /// The small cases in one piece, through the one-shot API, and verified as file bytes.
    @Test(arguments: cases.filter { $0.size <= 1_000_000 })
    func oneShotCIDAndVerification(_ entry: KuboCIDFile.Case) throws {
        let bytes = entry.input == "pattern" ? PatternStream().bytes(entry.size) : literalBytes(entry.input)
        let expected = try CID(entry.cid)
        #expect(UnixFS.cid(of: bytes) == expected)
        #expect(expected.matches(fileBytes: bytes))
        #expect(expected.v1.matches(fileBytes: bytes))
    }

    /// A byte flipped anywhere (first, last, either side of a chunk boundary, middle) or one
    /// byte added or dropped fails verification.
    @Test func anyChangedByteFailsVerification() throws {
        var rng = SplitMix64(seed: 0xC1D_F11B)
        for entry in Self.cases where entry.size > 0 && entry.size <= 1_000_000 {
            let original = entry.input == "pattern" ? PatternStream().bytes(entry.size) : literalBytes(entry.input)
            let cid = try CID(entry.cid)
            var positions = [0, original.count - 1, original.count / 2]
            for boundary in [CIDBuilder.chunkSize - 1, CIDBuilder.chunkSize, 2 * CIDBuilder.chunkSize] where boundary < original.count {
                positions.append(boundary)
            }
            positions += (0..<8).map { _ in Int(rng.next() % UInt64(original.count)) }
            for position in positions {
                var tampered = original
                tampered[position] ^= UInt8(1 << (rng.next() % 8))
                #expect(!cid.matches(fileBytes: tampered), "\(entry.size) B, byte \(position)")
            }
            #expect(!cid.matches(fileBytes: original.dropLast()))
            #expect(!cid.matches(fileBytes: original + [0]))
        }
        #expect(!(try CID("QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH")).matches(fileBytes: [0]))
    }

    /// A flipped byte inside the 100 MiB stream changes its CID.
    @Test func flippedByteInLargeStreamChangesCID() throws {
        let size = 100 * 1_048_576
        let expected = try #require(Self.cases.first { $0.size == size }).cid
        let flipAt = 77 * CIDBuilder.chunkSize + 12_345
        var builder = CIDBuilder()
        var offset = 0
        PatternStream().forEachPiece(size: size, pieceSizes: [1 << 20]) { piece in
            if (offset..<offset + piece.count).contains(flipAt) {
                var copy = [UInt8](piece)
                copy[flipAt - offset] ^= 0x80
                builder.update(copy)
            } else {
                builder.update(piece)
            }
            offset += piece.count
        }
        #expect(builder.finish().description != expected)
    }

    /// Hashing a file on disk streams it (and matches the in-memory result).
    @Test func fileOnDiskMatchesKubo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        for entry in Self.cases where [0, 262_145, 1_000_000, 45_613_057].contains(entry.size) {
            let url = directory.file("input-\(entry.size)")
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            PatternStream().forEachPiece(size: entry.size) { handle.write(Data($0)) }
            try handle.close()
            #expect(try UnixFS.cid(ofFileAt: url).description == entry.cid)
        }
        let missing = directory.file("missing")
        #expect(throws: UnixFSError.fileSystem(operation: "open", path: missing.path, errno: ENOENT)) {
            try UnixFS.cid(ofFileAt: missing)
        }
    }

    /// A builder is reusable after `finish()`.
    @Test func builderStartsOverAfterFinish() throws {
        var builder = CIDBuilder()
        builder.update(Array("hello world\n".utf8))
        #expect(builder.finish().description == "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
        #expect(builder.byteCount == 0)
        #expect(builder.finish().description == "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH")
    }
}
