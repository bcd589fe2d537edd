import PQCrypto

/// Names for a file written beside its destination and renamed onto it once complete.
///
/// The name is hidden, unique (16 random hex digits) and short whatever the destination is called:
/// a destination name may itself use all of `NAME_MAX` (255 bytes), so only a prefix of it is kept,
/// enough for a person to tell what the leftover of a crash was for.
package enum TemporaryFileName {
    /// How many bytes of the destination's name the temporary name keeps.
    static let keptNameBytes = 32

    /// `<directory>/.<name prefix>.<random>.<suffix>` for the destination `path`.
    package static func path(beside path: String, suffix: String) -> String {
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        return path[..<nameStart] + ".\(keptName(of: path)).\(Hex.encode(SecureRandom.bytes(count: 8))).\(suffix)"
    }

    /// Whether the file name `name` is one that ``path(beside:suffix:)`` gives for `path` and
    /// `suffix` (any random part): the leftover of an interrupted write to `path`.
    package static func isTemporary(_ name: String, beside path: String, suffix: String) -> Bool {
        let prefix = ".\(keptName(of: path)).", ending = ".\(suffix)"
        guard name.hasPrefix(prefix), name.hasSuffix(ending),
              name.utf8.count == prefix.utf8.count + 16 + ending.utf8.count else { return false }
        let random = name.utf8.dropFirst(prefix.utf8.count).prefix(16)
        return random.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The start of `path`'s last component that the temporary name keeps.
    private static func keptName(of path: String) -> String {
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        var kept = ""
        for character in path[nameStart...] {
            guard kept.utf8.count + character.utf8.count <= keptNameBytes else { break }
            kept.append(character)
        }
        return kept
    }
}
