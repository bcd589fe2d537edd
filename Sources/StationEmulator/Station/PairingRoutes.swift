import Foundation
import Manifest
import ClassicalCrypto
import SHA2
import OrderedJSON

extension StationCore {
    static let pairingTTL: Int64 = 300
    static let pairingMaxAttempts = 5
    static let pairingLockoutWindow: Int64 = 15 * 60
    static let pairingMaxFailures = 25
    static let pairingMaxPending = 20

    /// `POST /delegate/start`: validates the device keys, opens a session, logs the PIN.
    func delegateStart(_ request: StationRequest) -> StationResponse {
        let model = BodyModel(fields: [.required("device_uid"), .required("mlkem_public_key"), .required("mldsa_public_key")])
        return model.answer(request.body) { body in
            let deviceUID = body["device_uid"]?.stringValue ?? ""
            let mlkem = body["mlkem_public_key"]?.stringValue ?? ""
            let mldsa = body["mldsa_public_key"]?.stringValue ?? ""
            guard !deviceUID.isEmpty else { return .detail(400, "device_uid required") }
            guard mlkem.utf8.count == 2368, mlkem.isStrictHex else {
                return .detail(400, "device_mlkem_public_key must be 2368 hex chars")
            }
            guard mldsa.utf8.count == 3904, mldsa.isStrictHex else {
                return .detail(400, "device_mldsa_public_key must be 3904 hex chars")
            }
            let now = self.now
            let pin = Self.randomPIN()
            let pairingID = Self.urlSafeToken(byteCount: 18)
            let salt = SecureRandom.bytes(count: 16)
            let created: Bool = state.withLock { state in
                let pending = state.pairing.filter { $0.status == "pending" && $0.expiresAt > now }.count
                guard pending < Self.pairingMaxPending else { return false }
                state.pairing.append(PairingSession(
                    pairingID: pairingID, createdAt: now, expiresAt: now + Self.pairingTTL, deviceUID: deviceUID,
                    mlkemPublicKey: mlkem, mldsaPublicKey: mldsa, salt: salt, pinHash: Self.pinHash(pin, salt: salt),
                    attempts: 0, status: "pending"))
                persist(state)
                return true
            }
            guard created else {
                return .detail(429, "too many pending pairing sessions (cap=\(Self.pairingMaxPending)); try again shortly")
            }
            log.info("Pairing session created: pairing_id=\(pairingID)")
            log.pairingPIN(pin)
            return .json(200, JSONOut.compact([
                "status": "ok", "pairing_id": .string(pairingID), "expires_in_seconds": JSONOut.int(Int(Self.pairingTTL)),
            ]))
        }
    }

    /// `POST /delegate/confirm`: checks the PIN and registers the device as an owner device.
    func delegateConfirm(_ request: StationRequest) -> StationResponse {
        let model = BodyModel(fields: [.required("pairing_id"), .required("pin")])
        return model.answer(request.body) { body in
            let pairingID = body["pairing_id"]?.stringValue ?? ""
            let pin = body["pin"]?.stringValue ?? ""
            let now = self.now
            return state.withLock { state -> StationResponse in
                func recordFailure() {
                    state.pairingFailures.append(now)
                    state.pairingFailures.removeAll { $0 < now - Self.pairingLockoutWindow }
                }
                defer { persist(state) }
                let recent = state.pairingFailures.filter { $0 >= now - Self.pairingLockoutWindow }.count
                guard recent < Self.pairingMaxFailures else {
                    return .detail(429, "too many failed pairing attempts; pairing is temporarily locked")
                }
                guard let index = state.pairing.firstIndex(where: { $0.pairingID == pairingID }) else {
                    recordFailure()
                    return .detail(400, "pairing_id not found")
                }
                let session = state.pairing[index]
                guard session.status == "pending" else {
                    return .detail(400, "pairing session is not pending (status=\(session.status))")
                }
                guard now <= session.expiresAt else {
                    state.pairing[index].status = "expired"
                    return .detail(400, "pairing session expired")
                }
                guard session.attempts < Self.pairingMaxAttempts else {
                    state.pairing[index].status = "locked"
                    return .detail(400, "pairing session locked (too many attempts)")
                }
                guard SecureMemory.constantTimeEquals(Self.pinHash(pin, salt: session.salt), session.pinHash) else {
                    state.pairing[index].attempts += 1
                    recordFailure()
                    return .detail(400, "invalid PIN")
                }
                state.pairing[index].status = "confirmed"
                let uid = state.uid
                state.upsertFollower(FollowerRow(uid: uid, deviceUID: session.deviceUID, mlkemPublicKey: session.mlkemPublicKey,
                                                 mldsaPublicKey: session.mldsaPublicKey, alias: nil, allowed: "Allowed"))
                log.info("Delegate device paired: device_uid=\(session.deviceUID)")
                return .json(200, JSONOut.compact([
                    "status": "ok", "action": "delegate_added", "uid": .string(uid), "device_uid": .string(session.deviceUID),
                ]))
            }
        }
    }

    /// A uniformly random 6-digit PIN, zero-padded.
    static func randomPIN() -> String {
        // Rejection sampling keeps the distribution uniform over 0..<1_000_000.
        while true {
            let bytes = SecureRandom.bytes(count: 4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard value < 4_294_000_000 else { continue }
            let text = String(value % 1_000_000)
            return String(repeating: "0", count: 6 - text.count) + text
        }
    }

    /// Python's `secrets.token_urlsafe(n)`: url-safe base64 of `n` random bytes, no padding.
    static func urlSafeToken(byteCount: Int) -> String {
        Data(SecureRandom.bytes(count: byteCount)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The stored PIN check value (the station stores an scrypt hash; a salted SHA-256 keeps the
    /// emulator fast while still never storing the PIN).
    static func pinHash(_ pin: String, salt: [UInt8]) -> [UInt8] {
        SHA256.hash(data: salt + Array(pin.utf8))
    }
}
