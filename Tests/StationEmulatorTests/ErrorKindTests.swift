import StationEmulator
import Testing
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Emulator errors are values that can grow")
struct EmulatorErrorKindTests {
    @Test("StationEmulatorError carries its details; its kind compares without them")
    func stationEmulatorError() {
        let corrupt = StationEmulatorError.corruptState(path: "/d/keys.json", reason: "truncated")
        #expect(corrupt.kind == .corruptState && corrupt.path == "/d/keys.json" && corrupt.reason == "truncated")
        #expect(corrupt != .corruptState(path: "/d/keys.json", reason: "other") && corrupt.kind != StationEmulatorError.notServing.kind)
        #expect(StationEmulatorError.cannotListen("bind").reason == "bind")
        #expect(corrupt.description == "the emulator state at /d/keys.json is unusable: truncated")
        #expect(StationEmulatorError.notServing == .notServing)
    }

    @Test("ServerSocketError carries its details; its kind compares without them")
    func serverSocketError() {
        let system = ServerSocketError.system("bind", EADDRINUSE)
        #expect(system.kind == .system && system.call == "bind" && system.code == EADDRINUSE)
        #expect(system != .system("bind", EACCES) && system.kind != ServerSocketError.closedEarly.kind)
        #expect(ServerSocketError.malformed("no host").reason == "no host")
        #expect(ServerSocketError.deadlinePassed("head").part == "head")
        #expect(system.description == "bind failed: \(String(cString: strerror(EADDRINUSE)))")
        #expect(ServerSocketError.deadlinePassed("body").description == "the request body did not arrive in time")
    }
}
