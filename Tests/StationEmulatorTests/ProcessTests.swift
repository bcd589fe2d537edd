import Foundation
import TestSupport
import Testing

/// The `cipher-station-emulator` executable as a separate process: a Python-built owner flow
/// against it (acceptance 2), and the soak command (acceptance 3).
@Suite("Emulator process: Python owner flow and soak",
       .enabled(if: Programs.canStart, "starts cipher-station-emulator and python3, which this platform cannot"))
struct ProcessTests {
    /// The built `cipher-station-emulator` (the test target depends on it).
    static var executable: URL {
        var url = Bundle.main.bundleURL
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url.appendingPathComponent("cipher-station-emulator")
    }

    #if os(macOS) || os(Linux)
    /// Starts the emulator on free ports and returns it with its printed station URL.
    static func launch(log: URL, dataDirectory: URL) throws -> (Process, station: String, uid: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--port", "0", "--gateway-port", "0", "--log", log.path, "--data-dir", dataDirectory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let handle = output.fileHandleForReading
        while !text.contains("uid: ") || !text.hasSuffix("\n") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let lines = text.split(separator: "\n").map(String.init)
        let station = lines.first { $0.hasPrefix("station: ") }.map { String($0.dropFirst(9)) } ?? ""
        let uid = lines.first { $0.hasPrefix("uid: ") }.map { String($0.dropFirst(5)) } ?? ""
        return (process, station, uid)
    }
    #endif

    struct FlowRequest: Encodable {
        let station: String
        let log: String
    }

    struct FlowResponse: Decodable {
        let steps: [String]
        let cid: String?
        let error: String?
    }

    @Test func pythonOwnerFlowAgainstTheExecutable() throws {
        #if os(macOS) || os(Linux)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("station.log")
        let (process, station, uid) = try Self.launch(log: log, dataDirectory: directory.appendingPathComponent("data"))
        defer {
            process.interrupt()
            process.waitUntilExit()
        }
        #expect(station.hasPrefix("http://127.0.0.1:"))
        #expect(uid.count == 36)
        let response = try InteropPython.call("emulator_owner_flow.py", FlowRequest(station: station, log: log.path), as: FlowResponse.self)
        #expect(response.error == nil, "\(response.error ?? "")")
        #expect(response.steps == ["profile", "pair", "post", "rewrap-open", "content-decrypt",
                                   "manifest-metadata", "envelopes", "bad-signature"])
        // The PIN line is in the log file exactly as a station writes it.
        let logText = try String(contentsOf: log, encoding: .utf8)
        #expect(logText.range(of: #"  cipher_station\.main  INFO  >>> PAIRING PIN: \d{6} <<< \(expires in 5 minutes\)\n"#,
                              options: .regularExpression) != nil)
        #else
        // Skipped here by the suite's trait; run anyway, it says why it cannot.
        throw ProgramsUnavailable("cipher-station-emulator")
        #endif
    }

    @Test func soakFor10Seconds() throws {
        let output = try InteropPython.run(Self.executable.path, ["soak", "--clients", "50", "--seconds", "10"], input: Data())
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("soak: PASS"), "\(text)")
        #expect(text.contains(" 0 failures, ") && text.contains(" 0 lost, manifest consistent"), "\(text)")
    }
}
