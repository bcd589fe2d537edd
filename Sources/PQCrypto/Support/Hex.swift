#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ErrorKinds

/// Lowercase hex, the encoding the station uses for keys, envelopes, metadata and digests.
///
/// Both directions run in time that does not depend on the byte values (each digit and each
/// nibble is computed arithmetically, never looked up in a table), so hex-encoded secret keys can
/// pass through here.
public enum Hex {
    /// Returns the lowercase hex of `bytes`.
    public static func encode(_ bytes: some DataProtocol) -> String {
        withContiguousBytes(of: bytes) { encode($0) }
    }

    /// Returns the lowercase hex of the bytes in `buffer`.
    public static func encode(_ buffer: UnsafeRawBufferPointer) -> String {
        guard !buffer.isEmpty else { return "" }
        return String(unsafeUninitializedCapacity: buffer.count * 2) { target in
            encode(buffer, into: UnsafeMutableRawBufferPointer(target))
            return target.count
        }
    }

    /// Writes the lowercase hex of `buffer` into `output` (exactly twice as long), in constant
    /// time and without another copy: the form for secret bytes headed for zeroizable storage.
    ///
    /// - Returns: `false` (writing nothing) when `output` is not `2 × buffer.count` bytes.
    @discardableResult
    public static func encode(_ buffer: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard output.count == buffer.count * 2 else { return false }
        guard let target = output.baseAddress?.assumingMemoryBound(to: UInt8.self), !buffer.isEmpty else { return true }
        for index in 0..<buffer.count {
            // Arithmetic, not a table: a nibble n becomes '0' + n, plus 39 more when n > 9.
            let byte = buffer[index]
            target[2 * index] = hexDigit(byte >> 4)
            target[2 * index + 1] = hexDigit(byte & 0x0F)
        }
        return true
    }

    /// The lowercase digit of a nibble, without a branch or a table lookup.
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        let above9 = UInt8(truncatingIfNeeded: (Int16(9) - Int16(nibble)) >> 8) & 39
        return 0x30 &+ nibble &+ above9
    }

    /// Decodes hex held as ASCII bytes straight into zeroizable storage (the scratch copy is
    /// zeroed before this returns); throws like the `String` form.
    public static func decodeSecret(_ ascii: UnsafeRawBufferPointer) throws(HexDecodingError) -> SecretBytes {
        var bytes = try decode(ascii.bindMemory(to: UInt8.self))
        return SecretBytes(zeroing: &bytes)
    }

    /// Decodes upper- or lowercase hex.
    ///
    /// - Throws: ``HexDecodingError/oddLength(_:)`` when the text has an odd number of characters,
    ///   ``HexDecodingError/invalidCharacter(offset:)`` at the first character that is not a hex
    ///   digit (whitespace included).
    public static func decode(_ text: some StringProtocol) throws(HexDecodingError) -> [UInt8] {
        let contiguous = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(HexDecodingError) in try decode(buffer) }
        }
        if let contiguous { return try contiguous.get() }
        let copy = Array(text.utf8)
        return try copy.withUnsafeBufferPointer { buffer throws(HexDecodingError) in try decode(buffer) }
    }

    /// Decodes hex held as ASCII bytes; throws like the `String` form.
    public static func decode(_ ascii: UnsafeBufferPointer<UInt8>) throws(HexDecodingError) -> [UInt8] {
        guard ascii.count % 2 == 0 else { throw .oddLength(ascii.count) }
        let byteCount = ascii.count / 2
        guard let source = ascii.baseAddress, byteCount > 0 else { return [] }
        // Invalid digits set flag bits; they are collected without branching and located only if
        // there was one.
        var invalid: UInt64 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: byteCount) { output, initialized in
            guard let target = output.baseAddress else { return }
            var index = 0
            // Eight characters (four bytes) at a time.
            while index &+ 4 <= byteCount {
                let word = UInt64(littleEndian: UnsafeRawPointer(source + 2 &* index).loadUnaligned(as: UInt64.self))
                let (decoded, flags) = decodeWord(word)
                invalid |= flags
                UnsafeMutableRawPointer(target + index).storeBytes(of: decoded.littleEndian, as: UInt32.self)
                index &+= 4
            }
            while index < byteCount {
                let high = nibble(source[2 &* index])
                let low = nibble(source[2 &* index &+ 1])
                invalid |= UInt64(high | low) & ~0xF
                target[index] = UInt8(truncatingIfNeeded: high &<< 4 | low)
                index &+= 1
            }
            initialized = byteCount
        }
        guard invalid == 0 else {
            let offset = (0..<ascii.count).first { nibble(source[$0]) > 0xF } ?? 0
            throw .invalidCharacter(offset: offset)
        }
        return bytes
    }

    /// Decodes eight hex characters (little-endian in `word`) into four bytes, branch-free; the
    /// second result is non-zero if any character is not a hex digit.
    @inline(__always)
    static func decodeWord(_ word: UInt64) -> (UInt32, UInt64) {
        let top: UInt64 = 0x8080_8080_8080_8080
        // Clear bit 7 so that the additions below never carry into the next byte; characters
        // that had it set are invalid anyway.
        let ascii = word & ~top
        let folded = ascii | 0x2020_2020_2020_2020                      // 'A'...'F' -> 'a'...'f'
        let isLetter = (folded &+ 0x1F1F_1F1F_1F1F_1F1F) & ~(folded &+ 0x1919_1919_1919_1919) & top
        let isDigit = (ascii &+ 0x5050_5050_5050_5050) & ~(ascii &+ 0x4646_4646_4646_4646) & top
        let invalid = ~(isLetter | isDigit) & top | (word & top)
        // '0'...'9' -> 0...9; 'a'...'f' -> 1...6 + 9.
        let values = (ascii & 0x0F0F_0F0F_0F0F_0F0F) &+ (isLetter >> 7) &* 9
        // Byte 2k becomes value[2k] << 4 | value[2k + 1]; then the even bytes are packed together.
        var packed = (values << 4 | values >> 8) & 0x00FF_00FF_00FF_00FF
        packed = (packed | packed >> 8) & 0x0000_FFFF_0000_FFFF
        packed = (packed | packed >> 16) & 0x0000_0000_FFFF_FFFF
        return (UInt32(truncatingIfNeeded: packed), invalid)
    }

    /// The value of one hex digit (either case), or `nil` for any other byte: for readers that
    /// decode hex inside other text (percent-escapes, Python's `bytes.fromhex`).
    package static func value(ofDigit character: UInt8) -> UInt8? {
        let value = nibble(character)
        return value <= 0xF ? UInt8(truncatingIfNeeded: value) : nil
    }

    /// The value of one hex digit, or a value above 15 for any other byte, computed without
    /// branching on the byte (the same arithmetic libsodium's `sodium_hex2bin` uses).
    @inline(__always)
    static func nibble(_ character: UInt8) -> UInt32 {
        let c = UInt32(character)
        let digit = c ^ 0x30                                   // '0'...'9' -> 0...9
        let isDigit = (digit &- 10) >> 8                       // all ones when digit < 10
        let letter = (c & ~0x20) &- 55                          // 'A'...'F' / 'a'...'f' -> 10...15
        let isLetter = ((letter &- 10) ^ (letter &- 16)) >> 8  // all ones when 10 <= letter < 16
        let valid = (isDigit | isLetter) & 0xFF
        return ((isDigit & digit) | (isLetter & letter)) & 0xF | ((valid ^ 0xFF) << 4)
    }
}

/// Why a hex string could not be decoded.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .oddLength:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct HexDecodingError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .oddLength:`).
    public typealias Kind = ErrorKind<HexDecodingError>

    private enum Detail: Hashable, Sendable {
        case oddLength(Int)
        case invalidCharacter(offset: Int)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// The text has an odd number of characters.
    public static func oddLength(_ count: Int) -> HexDecodingError { HexDecodingError(.oddLength(count), .oddLength) }

    /// The character at this UTF-8 offset is not a hex digit.
    public static func invalidCharacter(offset: Int) -> HexDecodingError {
        HexDecodingError(.invalidCharacter(offset: offset), .invalidCharacter)
    }

    /// The text's length, for `Kind.oddLength`.
    public var count: Int? { if case .oddLength(let value) = detail { value } else { nil } }

    /// The UTF-8 offset of the first non-hex character, for `Kind.invalidCharacter`.
    public var offset: Int? { if case .invalidCharacter(let value) = detail { value } else { nil } }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch detail {
        case let .oddLength(count): "hex text has an odd length (\(count))"
        case let .invalidCharacter(offset): "hex text has a non-hex character at offset \(offset)"
        }
    }
}

extension ErrorKind where Failure == HexDecodingError {
    /// The text has an odd number of characters.
    public static var oddLength: Self { Self() }
    /// The character at this UTF-8 offset is not a hex digit.
    public static var invalidCharacter: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.oddLength, .invalidCharacter] }
}
