import Foundation
import StationEmulator

// cipher-station-emulator: a Cipher Station on loopback.
//
//   cipher-station-emulator [--port 8443] [--gateway-port 8080] [--data-dir DIR] [--log FILE] [--latency SECONDS]
//   cipher-station-emulator soak [--clients 50] [--seconds 60]
//
// Serving prints `station: <url>`, `gateway: <url>` and `uid: <uid>`, logs the pairing PINs to
// the log file and standard error, and runs until SIGINT or SIGTERM. `--latency` delays every station
// answer (the fault injector's `setLatency`), as a real station's own work per request does.

/// Writes a line to standard output at once (a parent process waits for these lines).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("cipher-station-emulator: \(message)\n".utf8))
    exit(2)
}

/// The command-line arguments, consumed option by option.
struct Arguments {
    var rest: [String]

    /// Takes `--name value` out of the arguments.
    mutating func option(_ name: String) -> String? {
        guard let index = rest.firstIndex(of: name) else { return nil }
        guard index + 1 < rest.count else { fail("\(name) needs a value") }
        let value = rest[index + 1]
        rest.removeSubrange(index...(index + 1))
        return value
    }

    mutating func port(_ name: String, default fallback: UInt16) -> UInt16 {
        guard let text = option(name) else { return fallback }
        guard let port = UInt16(text) else { fail("\(name) must be a port number, not \(text)") }
        return port
    }
}

var arguments = Arguments(rest: Array(CommandLine.arguments.dropFirst()))

if arguments.rest.first == "soak" {
    arguments.rest.removeFirst()
    let clients = Int(arguments.option("--clients") ?? "50") ?? 0
    let seconds = Double(arguments.option("--seconds") ?? "60") ?? 0
    guard clients > 0, seconds > 0 else { fail("soak needs --clients > 0 and --seconds > 0") }
    guard arguments.rest.isEmpty else { fail("unknown arguments: \(arguments.rest.joined(separator: " "))") }
    do {
        let report = try Soak(clients: clients, seconds: seconds).run()
        say(report.summary)
        exit(report.passed ? 0 : 1)
    } catch {
        fail("soak failed to start: \(error)")
    }
}

if arguments.rest.contains("--help") || arguments.rest.contains("-h") {
    say("usage: cipher-station-emulator [--port 8443] [--gateway-port 8080] [--data-dir DIR] [--log FILE] [--latency SECONDS]")
    say("       cipher-station-emulator soak [--clients 50] [--seconds 60]")
    exit(0)
}

let port = arguments.port("--port", default: 8443)
let gatewayPort = arguments.port("--gateway-port", default: 8080)
let dataDirectory = arguments.option("--data-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
let logFile = arguments.option("--log").map { URL(fileURLWithPath: $0) }
let latency = arguments.option("--latency").map { text -> Double in
    guard let seconds = Double(text), seconds >= 0, seconds <= 60 else { fail("--latency takes seconds from 0 to 60, not \(text)") }
    return seconds
}
guard arguments.rest.isEmpty else { fail("unknown arguments: \(arguments.rest.joined(separator: " "))") }

let emulator: StationEmulator
do {
    emulator = try StationEmulator(configuration: .init(dataDirectory: dataDirectory, logFile: logFile,
                                                        echoLogToStandardError: true, publishesEndpoint: true))
    if let latency { emulator.faults.setLatency(latency) }
    try emulator.start(port: port, gatewayPort: gatewayPort)
} catch {
    fail("\(error)")
}
say("station: \(emulator.stationURL?.absoluteString ?? "")")
say("gateway: \(emulator.gatewayURL?.absoluteString ?? "")")
say("uid: \(emulator.uid)")

signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let stopped = DispatchSemaphore(value: 0)
let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler { stopped.signal() }
    source.resume()
    return source
}
stopped.wait()
emulator.stop()
_ = sources
exit(0)
