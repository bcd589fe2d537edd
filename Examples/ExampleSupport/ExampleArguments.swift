import Foundation

/// What an example says about itself on `--help`: its name, what it does, and whether it talks
/// to a station (and so takes the station options).
public struct ExampleUsage: Sendable {
    /// The step name, as `swift run cipher-examples <name>` takes it.
    public var name: String
    /// What the example does, in a few lines.
    public var summary: String
    /// Whether the example runs against a station (`--station`, `--gateway`, `--fingerprint`, `--keep`).
    public var networked: Bool

    /// A usage for the example `name`.
    public init(name: String, summary: String, networked: Bool = true) {
        self.name = name
        self.summary = summary
        self.networked = networked
    }

    /// The options the example accepts: the station options when it is networked, and `--help`.
    var options: [ExampleOption] {
        (networked ? ExampleOption.station : []) + [ExampleOption(names: ["--help", "-h"], help: "show this help and exit")]
    }

    /// The text `--help` prints.
    public var helpText: String {
        var lines = ["usage: swift run cipher-examples \(name)" + (networked ? " [--station URL [--gateway URL] [--fingerprint sha256//…]] [--keep]" : ""),
                     "", summary, "", "options:"]
        for option in options {
            let name = option.names.joined(separator: ", ") + (option.value.map { " \($0)" } ?? "")
            lines.append("  " + name.padding(toLength: max(name.count, 24), withPad: " ", startingAt: 0) + "  " + option.help)
        }
        if networked {
            lines += ["", "Without --station the example runs against an embedded StationEmulator on loopback.",
                      "Against a station it removes the posts and follows it created unless --keep is given;",
                      "the device it pairs stays (the protocol cannot remove a paired device)."]
        }
        return lines.joined(separator: "\n")
    }
}

/// One option of an example's command line.
struct ExampleOption: Sendable {
    var names: [String]
    var help: String
    /// The value's placeholder, or `nil` for a flag.
    var value: String?

    /// The options every networked example takes.
    static let station = [
        ExampleOption(names: ["--station"], help: "run against the station at URL (pairing asks for the PIN it logs)", value: "URL"),
        ExampleOption(names: ["--gateway"], help: "the IPFS gateway to read through (with --station)", value: "URL"),
        ExampleOption(names: ["--fingerprint"], help: "the station's self-signed TLS key, pinned without asking", value: "sha256//…"),
        ExampleOption(names: ["--keep"], help: "leave the posts and follows the example created on the station"),
    ]
}

/// An example's parsed command line (every example parses with it).
public struct ExampleArguments: Sendable {
    /// The value of each option given (`--station` → URL).
    var values: [String: String] = [:]
    /// The flags given (`--keep`).
    var flags: Set<String> = []

    /// No options: the embedded emulator, nothing kept.
    public init() {}

    /// The value given for `name`, if any.
    public func value(_ name: String) -> String? { values[name] }
    /// Whether the flag `name` was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `arguments` (what follows the step's name on the command line) for `usage`.
    ///
    /// `--help` or `-h` anywhere prints the usage and exits with status 0 before anything starts;
    /// an unknown option, a missing value or a stray argument prints the error and the usage line
    /// and exits with status 2.
    public static func parse(_ given: [String], usage: ExampleUsage) -> ExampleArguments {
        if given.contains("--help") || given.contains("-h") {
            print(usage.helpText)
            exit(0)
        }
        do {
            return try parse(given, options: usage.options)
        } catch {
            FileHandle.standardError.write(Data("\(usage.name): \(error)\n\(usage.helpText.prefix { $0 != "\n" })\n".utf8))
            exit(2)
        }
    }

    static func parse(_ given: [String], options: [ExampleOption]) throws -> ExampleArguments {
        var parsed = ExampleArguments()
        var rest = given[...]
        while let argument = rest.popFirst() {
            guard let option = options.first(where: { $0.names.contains(argument) }) else {
                throw ExampleError(argument.hasPrefix("-") ? "unknown option \(argument)" : "unexpected argument \(argument)")
            }
            guard option.value != nil else { parsed.flags.insert(option.names[0]); continue }
            guard let value = rest.popFirst(), !value.hasPrefix("--") else { throw ExampleError("\(argument) needs a value") }
            parsed.values[option.names[0]] = value
        }
        return parsed
    }
}
