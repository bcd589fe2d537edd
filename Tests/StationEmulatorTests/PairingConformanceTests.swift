import Foundation
import Manifest
import StationEmulator
import Testing

/// WIRE_NOTES §2.3 and §0.6–0.7: pairing, the PIN in the log, every refusal.
@Suite("Conformance: pairing (WIRE_NOTES §2.3)")
struct PairingConformanceTests {
    static func start(_ harness: Harness, deviceUID: String = "phone-1234abcd", mlkem: String? = nil,
                      mldsa: String? = nil) throws -> RawResponse {
        let device = TestDevice(uid: harness.uid, deviceUID: deviceUID)
        return try harness.json("POST", "/delegate/start", [
            "device_uid": .string(deviceUID), "mlkem_public_key": .string(mlkem ?? device.mlkemHex),
            "mldsa_public_key": .string(mldsa ?? device.mldsaHex),
        ])
    }

    static func confirm(_ harness: Harness, _ pairingID: String, _ pin: String) throws -> RawResponse {
        try harness.json("POST", "/delegate/confirm", ["pairing_id": .string(pairingID), "pin": .string(pin)])
    }

    /// A PIN that is not `pin`.
    static func wrong(_ pin: String) -> String { pin == "000000" ? "000001" : "000000" }

    @Test func startAndConfirmShapesAndThePINLogLine() throws {
        let harness = try Harness()
        let started = try Self.start(harness, deviceUID: "990DCF48-AAAA-4BBB-8CCC-DDDDDDDDDDDD")
        #expect(started.status == 200)
        let object = try started.object()
        #expect(object.keys == ["status", "pairing_id", "expires_in_seconds"])
        let pairingID = try #require(object["pairing_id"]?.stringValue)
        #expect(object["status"] == "ok" && object["expires_in_seconds"] == 300)
        #expect(pairingID.count == 24 && pairingID.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })

        let line = try #require(harness.emulator.log.lines.last)
        let pin = try #require(harness.emulator.log.latestPIN)
        #expect(pin.count == 6 && pin.allSatisfy(\.isNumber))
        #expect(line.hasSuffix("  cipher_station.main  INFO  >>> PAIRING PIN: \(pin) <<< (expires in 5 minutes)"))
        #expect(line.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}  "#, options: .regularExpression) != nil)

        let confirmed = try Self.confirm(harness, pairingID, pin)
        #expect(confirmed.status == 200)
        // The device uid comes back byte for byte, upper case included.
        #expect(confirmed.text == #"{"status":"ok","action":"delegate_added","uid":"\#(harness.uid)","device_uid":"990DCF48-AAAA-4BBB-8CCC-DDDDDDDDDDDD"}"#)

        let again = try Self.confirm(harness, pairingID, pin)
        #expect(again.status == 400 && again.text == #"{"detail":"pairing session is not pending (status=confirmed)"}"#)
    }

    @Test func badKeysAndMissingFields() throws {
        let harness = try Harness()
        var response = try Self.start(harness, mlkem: "abcd")
        #expect(response.status == 400 && response.text == #"{"detail":"device_mlkem_public_key must be 2368 hex chars"}"#)
        response = try Self.start(harness, mldsa: String(repeating: "zz", count: 1952))
        #expect(response.status == 400 && response.text == #"{"detail":"device_mldsa_public_key must be 3904 hex chars"}"#)
        response = try harness.json("POST", "/delegate/start", ["device_uid": "x"])
        #expect(response.status == 422)
        let detail = try #require(try response.object()["detail"]?.arrayValue)
        #expect(detail.map { $0["loc"] } == [["body", "mlkem_public_key"], ["body", "mldsa_public_key"]])
        #expect(detail.allSatisfy { $0["type"] == "missing" && $0["msg"] == "Field required" })
        #expect(Harness.keys(detail.first) == ["type", "loc", "msg", "input"])
        response = try harness.json("POST", "/delegate/confirm", ["pairing_id": "x"])
        #expect(response.status == 422)
    }

    @Test func wrongPINUnknownIDExpiryAndSessionLock() throws {
        let clock = ManualClock()
        let harness = try Harness(clock: clock)
        let first = try #require(try Self.start(harness).object()["pairing_id"]?.stringValue)
        let pin = try #require(harness.emulator.log.latestPIN)
        var response = try Self.confirm(harness, first, Self.wrong(pin))
        #expect(response.status == 400 && response.text == #"{"detail":"invalid PIN"}"#)
        response = try Self.confirm(harness, "no-such-pairing-id", pin)
        #expect(response.status == 400 && response.text == #"{"detail":"pairing_id not found"}"#)
        for _ in 0..<4 { _ = try Self.confirm(harness, first, Self.wrong(pin)) }
        // Five wrong PINs: even the right one is refused now.
        response = try Self.confirm(harness, first, pin)
        #expect(response.status == 400 && response.text == #"{"detail":"pairing session locked (too many attempts)"}"#)
        response = try Self.confirm(harness, first, pin)
        #expect(response.text == #"{"detail":"pairing session is not pending (status=locked)"}"#)

        let second = try #require(try Self.start(harness).object()["pairing_id"]?.stringValue)
        let secondPIN = try #require(harness.emulator.log.latestPIN)
        clock.advance(by: 301)
        response = try Self.confirm(harness, second, secondPIN)
        #expect(response.status == 400 && response.text == #"{"detail":"pairing session expired"}"#)
    }

    @Test func globalLockoutAfter25FailuresIncludingUnknownIDs() throws {
        let clock = ManualClock()
        let harness = try Harness(clock: clock)
        for _ in 0..<25 { _ = try Self.confirm(harness, "unknown", "123456") }
        let id = try #require(try Self.start(harness).object()["pairing_id"]?.stringValue)
        let pin = try #require(harness.emulator.log.latestPIN)
        var response = try Self.confirm(harness, id, pin)
        #expect(response.status == 429)
        #expect(response.text == #"{"detail":"too many failed pairing attempts; pairing is temporarily locked"}"#)
        // The window is 15 minutes.
        clock.advance(by: 15 * 60 + 1)
        let fresh = try #require(try Self.start(harness).object()["pairing_id"]?.stringValue)
        response = try Self.confirm(harness, fresh, try #require(harness.emulator.log.latestPIN))
        #expect(response.status == 200)
    }

    @Test func pendingSessionCapOf20() throws {
        let harness = try Harness()
        for index in 0..<20 { #expect(try Self.start(harness, deviceUID: "d\(index)").status == 200) }
        let response = try Self.start(harness, deviceUID: "d20")
        #expect(response.status == 429)
        #expect(response.text == #"{"detail":"too many pending pairing sessions (cap=20); try again shortly"}"#)
    }
}
