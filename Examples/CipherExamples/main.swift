import Foundation

// cipher-examples: one runnable program per step of the station's client guide, each a
// subcommand (`swift run cipher-examples pair-device`). One executable rather than one per step:
// the examples build with the package's tests in the same build (the example tests run them),
// and a step is one file under Examples/ that reads top to bottom.

/// Every step, in the guide's order: its usage (name and summary) and what runs it.
let steps: [(usage: ExampleUsage, run: @Sendable ([String]) async throws -> Void)] = [
    (PairDevice.usage, PairDevice.run),
    (SignRequest.usage, SignRequest.run),
    (ReadManifest.usage, ReadManifest.run),
    (OpenEnvelope.usage, OpenEnvelope.run),
    (PublishPost.usage, PublishPost.run),
    (TwoClients.usage, TwoClients.run),
    (ReadFollowed.usage, ReadFollowed.run),
    (SyncFolder.usage, SyncFolder.run),
    (PostQuantumTour.usage, PostQuantumTour.run),
]

/// The list `cipher-examples` (or `--help`) prints.
func overview() -> String {
    let width = steps.map(\.usage.name.count).max() ?? 0
    return (["usage: swift run cipher-examples STEP [options]   (STEP --help for a step's options)", "", "steps:"]
        + steps.map { "  " + $0.usage.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
            + ($0.usage.summary.split(separator: "\n").first.map(String.init) ?? "") })
        .joined(separator: "\n")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, name != "--help", name != "-h" else {
    print(overview())
    exit(arguments.isEmpty ? 2 : 0)
}
guard let step = steps.first(where: { $0.usage.name == name }) else {
    FileHandle.standardError.write(Data("cipher-examples: no step named \(name)\n\n\(overview())\n".utf8))
    exit(2)
}
do {
    try await step.run(Array(arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
