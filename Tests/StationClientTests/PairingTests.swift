import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing

@Suite("Pairing")
struct PairingTests {
    @Test("Pairs, keeps the station's device uid, and persists credentials that load again")
    func pairs() async throws {
        let store = InMemoryKeyStore()
        let (rig, client) = try await StationRig.pairedInProcess(keyStore: store)
        let credentials = await client.credentials
        #expect(credentials.stationUID == rig.emulator.uid)
        #expect(rig.emulator.pairedDeviceUIDs == [credentials.deviceUID])
        #expect(credentials.deviceUID.hasPrefix("testphone-"))
        #expect(credentials.ipnsName == rig.emulator.ipnsName)
        let loaded = try await StationClient.load(configuration: rig.configuration(keyStore: store))
        #expect(await loaded.credentials.deviceUID == credentials.deviceUID)
        // The loaded client can sign owner calls.
        #expect(try await loaded.followers().isEmpty)
    }

    @Test("Loading without credentials is .notPaired")
    func notPaired() async throws {
        let error = await #expect(throws: StationClientError.self) {
            try await StationClient.load(configuration: StationRig.inProcess().configuration())
        }
        #expect(error?.kind == .notPaired)
    }

    @Test("A wrong PIN is reported with attempts left, and a later right PIN pairs")
    func wrongThenRight() async throws {
        let rig = try StationRig.inProcess()
        let log = rig.emulator.log
        let prompts = Locked<[PairingPrompt]>([])
        _ = try await StationClient.pair(endpoint: rig.station, deviceName: "tablet", configuration: rig.configuration()) { prompt in
            prompts.withLock { $0.append(prompt) }
            return prompts.withLock { $0.count } < 3 ? "000000" : log.latestPIN
        }
        let seen = prompts.withLock { $0 }
        #expect(seen.map(\.attemptsLeft) == [5, 4, 3])
        #expect(seen[1].previousFailure == .wrongPIN(attemptsLeft: 4))
        #expect(seen[2].previousFailure == .wrongPIN(attemptsLeft: 3))
    }

    @Test("Five wrong PINs end the session locally as sessionGone, without a sixth attempt")
    func locked() async throws {
        let rig = try StationRig.inProcess()
        let count = Locked(0)
        let error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: rig.station, deviceName: "x", configuration: rig.configuration()) { _ in
                count.withLock { $0 += 1 }
                return "999999"
            }
        }
        #expect(count.withLock { $0 } == 5)
        #expect(rig.count("POST", "/delegate/confirm") == 5)
        guard let failure = error?.pairingFailure, failure.kind == .sessionGone, let text = failure.stationMessage else {
            Issue.record("expected sessionGone, got \(String(describing: error))")
            return
        }
        #expect(text.contains("locked"))
    }

    @Test("Expired sessions, throttling and user cancellation are typed outcomes")
    func otherOutcomes() async throws {
        let rig = try StationRig.inProcess()
        let log = rig.emulator.log
        let clock = rig.clock
        // The PIN's five minutes pass while the user looks for it.
        var error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: rig.station, deviceName: "x", configuration: rig.configuration()) { _ in
                clock.skew(by: 301)
                return log.latestPIN
            }
        }
        #expect(error?.pairingFailure == .sessionGone("pairing session expired"))
        #expect(error?.status == 400)

        rig.emulator.faults.failNextRequests(
            1, status: 429, body: #"{"detail":"too many failed pairing attempts; pairing is temporarily locked"}"#,
            route: RequestRoute("POST", path: "/delegate/confirm"))
        error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: rig.station, deviceName: "x", configuration: rig.configuration()) { _ in
                log.latestPIN
            }
        }
        #expect(error?.status == 429)
        #expect(error?.pairingFailure?.kind == .throttled, "expected throttled")
        #expect(rig.emulator.faults.pendingFaultCount == 0)

        error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: rig.station, deviceName: "x", configuration: rig.configuration()) { _ in nil }
        }
        #expect(error?.pairingFailure == .cancelledByUser)
    }

    @Test("Station answers map to pairing failures as WIRE_NOTES §2.3 lists them")
    func failureMapping() {
        func response(_ status: Int, _ detail: String) -> HTTPResponse {
            HTTPResponse(status: status, body: .data(Data(WireJSON.serialize(.object(["detail": .string(detail)])))))
        }
        #expect(StationClient.pairingFailure(for: response(400, "invalid PIN")) == .wrongPIN(attemptsLeft: 0))
        #expect(StationClient.pairingFailure(for: response(400, "pairing_id not found")) == .sessionGone("pairing_id not found"))
        #expect(StationClient.pairingFailure(for: response(400, "pairing session is not pending (status=confirmed)"))
                == .sessionGone("pairing session is not pending (status=confirmed)"))
        #expect(StationClient.pairingFailure(for: response(429, "too many pending pairing sessions (cap=20); try again shortly"))
                == .throttled("too many pending pairing sessions (cap=20); try again shortly"))
    }

    @Test("Pairing failures read as words, in prompts and in errors")
    func failureWords() {
        #expect("\(PairingFailure.wrongPIN(attemptsLeft: 4))" == "wrong PIN (4 attempts left)")
        #expect("\(PairingFailure.wrongPIN(attemptsLeft: 1))" == "wrong PIN (1 attempt left)")
        #expect("\(PairingFailure.invalidPINFormat)" == "a PIN is 4 to 8 digits")
        #expect("\(PairingFailure.sessionGone("pairing_id not found"))" == "the pairing session is gone (pairing_id not found); start again")
        let error = StationClient.pairingError(.throttled("try again shortly"), status: 429)
        #expect(error.description == "pairing: the station is throttling pairing (try again shortly); wait and retry (HTTP 429)")
    }
}

import Transport
import OrderedJSON
