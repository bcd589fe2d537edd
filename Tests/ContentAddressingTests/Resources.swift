import Foundation
import TestSupport

/// Loads a file from this test target's `Resources` folder.
func resourceData(_ path: String) throws -> Data { try TestSupport.resourceData(in: .module, path) }

/// Decodes a JSON resource of this test target.
func loadResource<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    try TestSupport.loadResource(in: .module, path)
}

extension TemporaryDirectory {
    /// A directory named for this test target.
    init() throws { try self.init(prefix: "content-addressing-tests") }
}

/// The `pattern` input of `kubo-cids.json`: byte `i` is `i % 251`, produced in pieces so that
/// 100 MiB never sits in memory.
struct PatternStream {
    /// Two periods plus room for the largest piece, so any window is one contiguous slice.
    private let source: [UInt8]
    static let maximumPiece = 1 << 20

    init() {
        source = (0..<(251 * 2 + Self.maximumPiece)).map { UInt8($0 % 251) }
    }

    /// Calls `body` with consecutive pieces of the first `size` pattern bytes; piece lengths
    /// cycle through `pieceSizes` so that pieces straddle chunk boundaries.
    func forEachPiece(size: Int, pieceSizes: [Int] = [65_537, 1, 262_143, 300_000, 4096],
                      _ body: (UnsafeRawBufferPointer) -> Void) {
        var offset = 0
        var turn = 0
        source.withUnsafeBytes { all in
            while offset < size {
                let length = min(pieceSizes[turn % pieceSizes.count], size - offset, Self.maximumPiece)
                let start = offset % 251
                body(UnsafeRawBufferPointer(rebasing: all[start..<start + length]))
                offset += length
                turn += 1
            }
        }
    }

    /// The first `size` pattern bytes in memory (for small sizes).
    func bytes(_ size: Int) -> [UInt8] { (0..<size).map { UInt8($0 % 251) } }
}
