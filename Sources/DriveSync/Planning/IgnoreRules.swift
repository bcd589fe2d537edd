/// Which files a sync leaves alone: the subset of `.gitignore`'s syntax users know, read from the
/// folder's `.cipherignore` on top of ``SyncOptions/ignoreRules`` (``defaults`` unless the app
/// says otherwise).
///
/// An ignored path is neither uploaded nor downloaded nor deleted, on either side, and a rule
/// added later never deletes what it now hides: the sync stops deciding about it.
///
/// One pattern a line:
/// - `#` starts a comment; blank lines are skipped; trailing spaces are dropped (`\ ` keeps one).
/// - `*` matches any run of characters within a name, `?` one character, `[a-z]`, `[!0-9]` one
///   of (or none of) a set; `\` takes the next character literally (`\#`, `\!`, `\*`).
/// - A pattern with no `/` but a trailing one matches a name at any depth (`*.log`, `build/`);
///   one with a `/` at its start or in its middle matches from the folder's top (`/todo.txt`,
///   `docs/*.pdf`).
/// - `**` as a whole name matches any number of folders: `**/cache`, `logs/**` (everything
///   inside `logs`), `a/**/b`.
/// - A trailing `/` matches folders only; everything inside an ignored folder is ignored.
/// - `!` re-includes what an earlier pattern ignored (not inside an ignored folder); the last
///   pattern that matches a path decides.
///
///     let rules = IgnoreRules.defaults.adding(IgnoreRules(parsing: "*.log\nbuild/\n!keep.log"))
///     rules.ignores("build/app.o")        // true
///     rules.ignores("logs/keep.log")      // false
///
/// Names are matched as their characters (Unicode scalars): `é` written precomposed does not
/// match a pattern with `e` and a combining accent.
public struct IgnoreRules: Sendable, Hashable, CustomStringConvertible {
    /// The name of the file of rules at the folder's top: `.cipherignore` (synced like any file,
    /// so every device of the folder follows the same rules).
    public static let fileName = ".cipherignore"
    /// The most bytes of a rules file read; the rest is left out and reported in ``problems``.
    public static let maximumByteCount = 64 * 1024
    /// The most patterns kept; later ones are left out and reported in ``problems``.
    public static let maximumPatternCount = 1_000

    /// The patterns of files that never travel: macOS's, Windows' and editors' litter.
    public static let defaultPatterns = [".DS_Store", "Thumbs.db", "desktop.ini", ".~lock.*#", "~$*", "*.swp"]
    /// The rules of ``defaultPatterns``. The sync's own folder (`.cipher-sync`) is never synced
    /// whatever the rules say.
    public static let defaults = IgnoreRules(parsing: defaultPatterns.joined(separator: "\n"))
    /// No rules: every file travels.
    public static let none = IgnoreRules(rules: [], problems: [])

    /// The patterns, in order, as written (comments and blank lines left out).
    public var patterns: [String] { rules.map(\.text) }
    /// Lines left out and why (over the limits, or an unclosed `[`); empty when all were read.
    public let problems: [String]
    let rules: [Rule]

    /// The patterns as written, one a line.
    public var description: String { patterns.joined(separator: "\n") }

    /// Reads patterns from the text of a `.cipherignore` file.
    public init(parsing text: String) {
        var rules: [Rule] = []
        var problems: [String] = []
        var consumed = 0
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            consumed += line.utf8.count + 1
            guard consumed <= Self.maximumByteCount + 1 else {
                problems.append("line \(index + 1) and after: past the first \(Self.maximumByteCount) bytes")
                break
            }
            guard rules.count < Self.maximumPatternCount else {
                problems.append("line \(index + 1) and after: more than \(Self.maximumPatternCount) patterns")
                break
            }
            do {
                if let rule = try Rule(line: String(line)) { rules.append(rule) }
            } catch {
                problems.append("line \(index + 1): \(error.reason)")
            }
        }
        self.init(rules: rules, problems: problems)
    }

    init(rules: [Rule], problems: [String]) {
        self.rules = rules
        self.problems = problems
    }

    /// These rules followed by `other`'s (which win where both match).
    public func adding(_ other: IgnoreRules) -> IgnoreRules {
        IgnoreRules(rules: rules + other.rules, problems: problems + other.problems)
    }

    /// Whether `path` (relative to the folder, `/`-separated: `docs/notes.txt`) is ignored: by a
    /// pattern that matches it, or because a folder it is in is ignored.
    ///
    /// - Parameters:
    ///   - path: the path relative to the folder.
    ///   - isDirectory: whether `path` names a folder (patterns with a trailing `/` match
    ///     folders only).
    public func ignores(_ path: String, isDirectory: Bool = false) -> Bool {
        guard !rules.isEmpty else { return false }
        let components = path.split(separator: "/").map { Array($0.unicodeScalars) }
        guard !components.isEmpty else { return false }
        for depth in 1..<components.count where decides(components[..<depth], isDirectory: true) {
            return true
        }
        return decides(components[...], isDirectory: isDirectory)
    }

    /// Whether the rules ignore `path` itself (its folders are not looked at).
    func decides(_ path: SyncPath, isDirectory: Bool) -> Bool {
        !rules.isEmpty && decides(path.components.map { Array($0.unicodeScalars) }[...], isDirectory: isDirectory)
    }

    /// Whether the last rule matching `components` itself (not its folders) ignores it.
    func decides(_ components: ArraySlice<[Unicode.Scalar]>, isDirectory: Bool) -> Bool {
        for rule in rules.reversed() where rule.matches(components, isDirectory: isDirectory) {
            return !rule.isNegated
        }
        return false
    }

    public static func == (lhs: IgnoreRules, rhs: IgnoreRules) -> Bool { lhs.patterns == rhs.patterns }
    public func hash(into hasher: inout Hasher) { hasher.combine(patterns) }
}

extension IgnoreRules {
    /// One pattern: what it matches, per name of a path.
    struct Rule: Sendable {
        let text: String
        let isNegated: Bool
        let isDirectoryOnly: Bool
        let segments: [Segment]

        enum Segment: Sendable {
            /// `**`: any number of names, at least `minimum`.
            case anyDepth(minimum: Int)
            case name([Token])
        }

        enum Token: Sendable, Equatable {
            case literal(Unicode.Scalar)
            case anyCharacter
            case anyRun
            case set(negated: Bool, ranges: [ClosedRange<Unicode.Scalar>])
        }

        struct Refusal: Error {
            let reason: String
        }

        /// The rule of one line, `nil` for a comment or a blank line.
        init?(line: String) throws(Refusal) {
            var scalars = Array(line.unicodeScalars)
            // Trailing spaces go, unless escaped.
            while scalars.last == " ", !(scalars.count >= 2 && scalars[scalars.count - 2] == "\\") { scalars.removeLast() }
            guard let first = scalars.first, first != "#" else { return nil }
            text = String(String.UnicodeScalarView(scalars))
            isNegated = first == "!"
            if isNegated { scalars.removeFirst() }
            isDirectoryOnly = scalars.last == "/"
            if isDirectoryOnly { scalars.removeLast() }
            let anchored = scalars.dropLast().contains("/")
            let names = scalars.split(separator: "/", omittingEmptySubsequences: true)
            guard !names.isEmpty else { return nil }
            var segments: [Segment] = anchored || names.count > 1 ? [] : [.anyDepth(minimum: 0)]
            for (index, name) in names.enumerated() {
                if name.elementsEqual(["*", "*"]) {
                    // `logs/**` is what is inside `logs`, not `logs` itself.
                    segments.append(.anyDepth(minimum: index == names.count - 1 ? 1 : 0))
                } else {
                    segments.append(.name(try Self.tokens(of: name)))
                }
            }
            self.segments = segments
        }

        private static func tokens(of name: ArraySlice<Unicode.Scalar>) throws(Refusal) -> [Token] {
            var tokens: [Token] = []
            var index = name.startIndex
            while index < name.endIndex {
                let scalar = name[index]
                index += 1
                switch scalar {
                case "\\":
                    if index < name.endIndex {
                        tokens.append(.literal(name[index]))
                        index += 1
                    }
                case "?": tokens.append(.anyCharacter)
                case "*": if tokens.last != .anyRun { tokens.append(.anyRun) }
                case "[": tokens.append(try set(in: name, at: &index))
                default: tokens.append(.literal(scalar))
                }
            }
            return tokens
        }

        /// A `[…]` set whose `[` is just before `index`; moves `index` past its `]`.
        private static func set(in name: ArraySlice<Unicode.Scalar>, at index: inout Int) throws(Refusal) -> Token {
            var negated = false
            if index < name.endIndex, name[index] == "!" || name[index] == "^" {
                negated = true
                index += 1
            }
            var ranges: [ClosedRange<Unicode.Scalar>] = []
            var first = true
            while index < name.endIndex {
                var low = name[index]
                index += 1
                if low == "]" && !first { return .set(negated: negated, ranges: ranges) }
                first = false
                if low == "\\", index < name.endIndex {
                    low = name[index]
                    index += 1
                }
                var high = low
                if index + 1 < name.endIndex, name[index] == "-", name[index + 1] != "]" {
                    high = name[index + 1]
                    index += 2
                }
                if low <= high { ranges.append(low...high) }
            }
            throw Refusal(reason: "a [ without its ]")
        }

        /// Whether the rule matches the path of `components`, a folder when `isDirectory`.
        func matches(_ components: ArraySlice<[Unicode.Scalar]>, isDirectory: Bool) -> Bool {
            guard isDirectory || !isDirectoryOnly else { return false }
            let names = Array(components)
            // matched[i][j]: segments[i...] match names[j...]; filled from the end.
            var matched = [[Bool]](repeating: [Bool](repeating: false, count: names.count + 1), count: segments.count + 1)
            matched[segments.count][names.count] = true
            for i in stride(from: segments.count - 1, through: 0, by: -1) {
                for j in stride(from: names.count, through: 0, by: -1) {
                    switch segments[i] {
                    case let .anyDepth(minimum):
                        // Zero names (when allowed), or one more name and the same `**`.
                        let none = minimum == 0 && matched[i + 1][j]
                        let more = j < names.count && (matched[i][j + 1] || matched[i + 1][j + 1])
                        matched[i][j] = none || more
                    case let .name(tokens):
                        matched[i][j] = j < names.count && matched[i + 1][j + 1] && Self.match(tokens, names[j])
                    }
                }
            }
            return matched[0][0]
        }

        /// Glob matching of one name: on a mismatch, the last `*` takes one more character.
        static func match(_ tokens: [Token], _ name: [Unicode.Scalar]) -> Bool {
            var (t, n) = (0, 0)
            var star: (token: Int, name: Int)?
            while n < name.count {
                if t < tokens.count {
                    switch tokens[t] {
                    case .anyRun:
                        star = (t, n)
                        t += 1
                        continue
                    case let .literal(scalar) where scalar == name[n]:
                        t += 1
                        n += 1
                        continue
                    case .anyCharacter:
                        t += 1
                        n += 1
                        continue
                    case let .set(negated, ranges) where ranges.contains { $0.contains(name[n]) } != negated:
                        t += 1
                        n += 1
                        continue
                    default: break
                    }
                }
                guard let last = star else { return false }
                star = (last.token, last.name + 1)
                (t, n) = (last.token + 1, last.name + 1)
            }
            while t < tokens.count, tokens[t] == .anyRun { t += 1 }
            return t == tokens.count
        }
    }
}
