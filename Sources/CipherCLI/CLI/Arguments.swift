/// One option a command accepts.
struct OptionSpec: Sendable {
    /// `--name` (and an optional short form such as `-o`).
    var names: [String]
    /// What `--help` says about it.
    var help: String
    /// The value's placeholder (`FILE`), or `nil` for a flag.
    var value: String?
    /// Whether it takes every following non-option argument (`--to UID…`).
    var takesMany = false
}

/// A command's syntax: what `--help` prints and what the parser accepts.
struct CommandSpec: Sendable {
    var name: String
    /// What follows the name in the usage line (`URL [--name NAME]`).
    var arguments = ""
    var summary: String
    var options: [OptionSpec] = []
    var positionals: ClosedRange<Int> = 0...0

    /// Options every command accepts.
    static let globalOptions = [
        OptionSpec(names: ["--home"], help: "where credentials live (default: $CIPHER_HOME or the platform config directory)", value: "DIR"),
        OptionSpec(names: ["--json"], help: "print one JSON document for scripts"),
        OptionSpec(names: ["--verbose"], help: "on failure, print every detail (transport, IPNS search) instead of the short words"),
        OptionSpec(names: ["--help", "-h"], help: "show this help"),
    ]

    /// The usage line after `cipher`: the name and its arguments.
    var usage: String { arguments.isEmpty ? name : name + " " + arguments }

    var helpText: String {
        var lines = ["usage: cipher \(usage)", "", summary]
        let all = options + Self.globalOptions
        lines.append("")
        lines.append("options:")
        lines += all.map(\.helpLine)
        return lines.joined(separator: "\n")
    }
}

extension OptionSpec {
    /// The option's line in a help text: its names and value, then what it does.
    var helpLine: String {
        let name = names.joined(separator: ", ") + (value.map { " \($0)" + (takesMany ? "…" : "") } ?? "")
        return "  " + name.padding(toLength: max(name.count, 22), withPad: " ", startingAt: 0) + "  " + help
    }
}

/// The parsed command line of one command.
struct ParsedArguments: Sendable {
    var positionals: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    /// The last value given for `name`.
    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for `name`.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether the flag `name` was given.
    func has(_ name: String) -> Bool { flags.contains(name) }
}

/// Parses arguments against a spec. `--help` anywhere wins; unknown options and wrong counts are
/// usage errors (exit 2).
enum CommandLineParser {
    static func parse(_ arguments: [String], spec: CommandSpec) throws(CLIError) -> ParsedArguments {
        var parsed = ParsedArguments()
        let options = spec.options + CommandSpec.globalOptions
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            var argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            guard let option = options.first(where: { $0.names.contains(argument) }) else {
                throw .usage("unknown option \(argument) for `cipher \(spec.name)`")
            }
            let key = option.names[0]
            guard option.value != nil else {
                guard inlineValue == nil else { throw .usage("\(key) takes no value") }
                parsed.flags.insert(key)
                continue
            }
            if let inlineValue {
                parsed.values[key, default: []].append(inlineValue)
                continue
            }
            guard index < arguments.count, !arguments[index].hasPrefix("-") || arguments[index] == "-" else {
                throw .usage("\(key) needs a value")
            }
            repeat {
                parsed.values[key, default: []].append(arguments[index])
                index += 1
            } while option.takesMany && index < arguments.count && !arguments[index].hasPrefix("-")
        }
        if parsed.has("--help") { return parsed }
        guard spec.positionals.contains(parsed.positionals.count) else {
            throw .usage("`cipher \(spec.name)` takes " + describe(spec.positionals) + "; usage: cipher \(spec.usage)")
        }
        return parsed
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        if range.lowerBound == range.upperBound { return range.lowerBound == 0 ? "no arguments" : "\(range.lowerBound) argument(s)" }
        return "\(range.lowerBound) to \(range.upperBound) arguments"
    }
}
