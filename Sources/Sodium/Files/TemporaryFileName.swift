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
        var kept = ""
        for character in path[nameStart...] {
            guard kept.utf8.count + character.utf8.count <= keptNameBytes else { break }
            kept.append(character)
        }
        return path[..<nameStart] + ".\(kept).\(Hex.encode(SecureRandom.bytes(count: 8))).\(suffix)"
    }
}
