import Foundation
@testable import PQCrypto
import Testing

/// The system random source behind key generation and hedged signing: it fills whole buffers in
/// one call, draws differ, and a draw larger than one `getrandom` call returns is filled to the end.
@Suite("System random source")
struct SystemRandomTests {
    static func draw(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var failure: SystemRandomError?
        bytes.withUnsafeMutableBytes { buffer in
            do throws(SystemRandomError) { try SystemRandom.fill(throwing: buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        return bytes
    }

    @Test func fillsTheBufferAndDrawsDiffer() throws {
        let first = try Self.draw(64), second = try Self.draw(64)
        // Each of these fails for a correct source with probability 2^-256 or less.
        #expect(first != [UInt8](repeating: 0, count: 64))
        #expect(first != second)
        #expect(first[32...] != second[32...], "the second half is filled too")
        #expect(try Self.draw(0).isEmpty)
    }

    /// Linux returns at most 32 MiB − 1 per `getrandom` call, so this takes the short-read loop.
    @Test func largeDrawIsFilledToTheEnd() throws {
        let count = 32 << 20 + 8192
        let bytes = try Self.draw(count)
        let tail = bytes[(count - 8192)...]
        #expect(tail.contains { $0 != 0 })
        // Every byte value shows up in the last 8 KiB (one missing has probability below 2^-37).
        #expect(Set(tail).count == 256)
    }

    @Test func temporaryDrawsAndKeysAreFresh() {
        let a = SystemRandom.withBytes(count: 32) { Array($0) }
        let b = SystemRandom.withBytes(count: 32) { Array($0) }
        #expect(a.count == 32 && a != b)
        #expect(SymmetricKey(randomByteCount: 32) != SymmetricKey(randomByteCount: 32))
        #expect(MLKEM768.PrivateKey().seedRepresentation != MLKEM768.PrivateKey().seedRepresentation)
        #expect(MLDSA65.PrivateKey().seedRepresentation != MLDSA65.PrivateKey().seedRepresentation)
    }
}
