import Foundation
import Manifest
@testable import StationClient
import Testing

@Suite("Pairing")
struct PairingTests {
    @Test("Pairs, keeps the station's device uid, and persists credentials that load again")
    func pairs() async throws {
        let station = FakeStation()
        let store = InMemoryKeyStore()
        let client = try await Fixture.paired(station, keyStore: store)
        let credentials = await client.credentials
        #expect(credentials.stationUID == station.uid)
        #expect(await station.pairedDevices() == [credentials.deviceUID])
        #expect(credentials.deviceUID.hasPrefix("testphone-"))
        #expect(credentials.ipnsName == station.ipnsName)
        let loaded = try await StationClient.load(configuration: Fixture.configuration(station, keyStore: store))
        #expect(await loaded.credentials.deviceUID == credentials.deviceUID)
        // The loaded client can sign owner calls.
        #expect(try await loaded.followers().isEmpty)
    }

    @Test("Loading without credentials is .notPaired")
    func notPaired() async throws {
        let error = await #expect(throws: StationClientError.self) {
            try await StationClient.load(configuration: Fixture.configuration(FakeStation()))
        }
        #expect(error?.kind == .notPaired)
    }

    @Test("A wrong PIN is reported with attempts left, and a later right PIN pairs")
    func wrongThenRight() async throws {
        let station = FakeStation()
        let right = await station.pin
        let prompts = Locked<[PairingPrompt]>([])
        _ = try await StationClient.pair(
            endpoint: await station.endpoint, deviceName: "tablet", configuration: Fixture.configuration(station)
        ) { prompt in
            prompts.withLock { $0.append(prompt) }
            return prompts.withLock { $0.count } < 3 ? "000000" : right
        }
        let seen = prompts.withLock { $0 }
        #expect(seen.map(\.attemptsLeft) == [5, 4, 3])
        #expect(seen[1].previousFailure == .wrongPIN(attemptsLeft: 4))
        #expect(seen[2].previousFailure == .wrongPIN(attemptsLeft: 3))
    }

    @Test("Five wrong PINs end the session locally as sessionGone, without a sixth attempt")
    func locked() async throws {
        let station = FakeStation()
        let count = Locked(0)
        let error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: await station.endpoint, deviceName: "x",
                                         configuration: Fixture.configuration(station)) { _ in
                count.withLock { $0 += 1 }
                return "999999"
            }
        }
        #expect(count.withLock { $0 } == 5)
        guard case .sessionGone(let text)? = error?.pairingFailure else {
            Issue.record("expected sessionGone, got \(String(describing: error))")
            return
        }
        #expect(text.contains("locked"))
    }

    @Test("Expired sessions, throttling and user cancellation are typed outcomes")
    func otherOutcomes() async throws {
        let station = FakeStation()
        let pin = await station.pin
        await station.update { $0.expireSessions = true }
        var error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: await station.endpoint, deviceName: "x",
                                         configuration: Fixture.configuration(station)) { _ in pin }
        }
        #expect(error?.pairingFailure == .sessionGone("pairing session expired"))
        #expect(error?.status == 400)

        await station.update { $0.expireSessions = false }
        await station.update { $0.throttleConfirm = true }
        error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: await station.endpoint, deviceName: "x",
                                         configuration: Fixture.configuration(station)) { _ in pin }
        }
        #expect(error?.status == 429)
        if case .throttled? = error?.pairingFailure {} else { Issue.record("expected throttled") }

        await station.update { $0.throttleConfirm = false }
        error = await #expect(throws: StationClientError.self) {
            try await StationClient.pair(endpoint: await station.endpoint, deviceName: "x",
                                         configuration: Fixture.configuration(station)) { _ in nil }
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
}

import Transport
