import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON
import ContentAddressing

/// How the TLS certificate of a station's current `https` endpoint is trusted.
public enum EndpointTrust: String, Sendable, Hashable {
    /// By its public key alone: every request carries ``DeviceCredentials/stationPublicKeyPin``
    /// (a self-signed station, such as one started by `run.py`).
    case pinnedKey = "pinned_key"
    /// By the certificate authorities the transport trusts (a tunnel or a CA-signed station), or
    /// plain `http`, which has no certificate.
    case certificateAuthority = "certificate_authority"
}

/// Everything a paired device needs to act on its station: both of its keys, the device uid
/// exactly as the station returned it, and the station's identity and addresses.
///
/// Pairing makes them and ``StationClient`` keeps them up to date; an app reads them (which
/// station, which device, which TLS key is pinned) and persists them through a ``KeyStore``
/// (``encoded()`` / ``init(encoded:)``, both on `SecretBytes`, which
/// ``KeyStore/saveSecret(_:as:)`` and ``KeyStore/loadSecret(_:)`` take and return); never log
/// them. The private keys never leave the SDK: an app sees the public halves
/// (``kemPublicKey``, ``signingPublicKey``) and signs a request of its own with
/// ``StationClient/signedHeaders(method:path:body:)``.
///
/// The keys are pure-Swift keys (stored as bytes) unless the app paired with its own
/// ``DeviceKeys`` (stored by reference, loaded back with ``init(encoded:keyResolver:)``); see
/// <doc:KeepingDeviceKeys>.
public struct DeviceCredentials: Sendable {
    /// The device's ML-KEM-768 key: post keys are rewrapped to it.
    package var kemPrivateKey: any MLKEM768DecapsulationKey
    /// The device's ML-DSA-65 key: it signs every owner request.
    package var signingPrivateKey: any MLDSA65SigningKey
    /// The device uid byte for byte as `/delegate/confirm` echoed it (case-sensitive).
    public package(set) var deviceUID: String
    /// The station's uid (sent as `x-cipher-uid`).
    public package(set) var stationUID: String
    /// The station's ML-KEM-768 public key, hex; `self_envelope`s are sealed to it.
    public package(set) var stationKEMPublicKeyHex: String
    /// Where the station answers now (updated by endpoint mobility).
    public package(set) var endpoint: URL
    /// The station's IPFS peer id, when known.
    public package(set) var ipfsPeerID: String?
    /// The station's IPNS name (`k51…`), when known. With ``ipfsPeerID`` it is the trust anchor of
    /// endpoint moves: learned from the first `/profile` that names it (over the pinned or
    /// CA-valid channel), and never replaced by a later one.
    public package(set) var ipnsName: String?
    /// The station's ML-DSA-65 public key, hex, as `/profile` gave it at pairing (or first after);
    /// a moved station's `public.json` must carry the same.
    public package(set) var stationMLDSAPublicKeyHex: String?
    /// The station's TLS public key, accepted at pairing (or re-trusted on purpose), or `nil` for
    /// a station whose certificate a trusted authority signs.
    public package(set) var stationPublicKeyPin: PublicKeyFingerprint?
    /// The endpoint ``stationPublicKeyPin`` was accepted for (at pairing or by
    /// ``StationClient/trust(fingerprint:)``), when known: that server is only ever trusted by
    /// the pin, so a move back to it (after a move to a tunnel) keeps the pin, and a certificate
    /// an authority signed for it later is not enough.
    public package(set) var pinnedEndpoint: URL?
    /// How the current endpoint's certificate is trusted: by ``stationPublicKeyPin`` or by the
    /// certificate authorities.
    public package(set) var endpointTrust: EndpointTrust
    /// The highest IPNS record sequence number seen from the station; an older record is a rollback.
    public package(set) var ipnsSequence: UInt64?

    /// The device's ML-KEM-768 public key: what the station seals this device's envelopes to.
    public var kemPublicKey: MLKEM768.PublicKey { kemPrivateKey.publicKey }

    /// The device's ML-DSA-65 public key: what the station verifies this device's signatures with.
    public var signingPublicKey: MLDSA65.PublicKey { signingPrivateKey.publicKey }

    /// Whether both private keys are kept by reference (the app's ``ReferenceStorableKey`` keys,
    /// such as Secure Enclave keys): the key store then holds only their references and public
    /// keys, never their bytes. `false` when either is a pure-Swift key (its bytes are stored,
    /// sealed by the store), as keys from ``KeyPolicy/generatePureSwiftKeys`` are. What an app
    /// checks to be sure the credentials did not get generated keys; see ``StationClientConfiguration/keyPolicy``.
    public var keysAreStoredByReference: Bool {
        PrivateKeyJSON.storesByReference(kem: kemPrivateKey, signing: signingPrivateKey)
    }

    /// The pins every request to ``endpoint`` carries: ``stationPublicKeyPin`` when the endpoint
    /// is trusted by it, otherwise none.
    public var endpointPins: [PublicKeyFingerprint] {
        guard endpointTrust == .pinnedKey, let stationPublicKeyPin else { return [] }
        return [stationPublicKeyPin]
    }

    /// Creates credentials (pairing does; an app loads them with ``init(encoded:)``).
    package init(
        kemPrivateKey: any MLKEM768DecapsulationKey, signingPrivateKey: any MLDSA65SigningKey, deviceUID: String,
        stationUID: String, stationKEMPublicKeyHex: String, endpoint: URL, ipfsPeerID: String? = nil,
        ipnsName: String? = nil, stationMLDSAPublicKeyHex: String? = nil, stationPublicKeyPin: PublicKeyFingerprint? = nil,
        endpointTrust: EndpointTrust? = nil, ipnsSequence: UInt64? = nil
    ) {
        self.stationMLDSAPublicKeyHex = stationMLDSAPublicKeyHex
        self.stationPublicKeyPin = stationPublicKeyPin
        self.endpointTrust = endpointTrust ?? (stationPublicKeyPin == nil ? .certificateAuthority : .pinnedKey)
        pinnedEndpoint = stationPublicKeyPin == nil || self.endpointTrust != .pinnedKey ? nil : endpoint
        self.ipnsSequence = ipnsSequence
        self.kemPrivateKey = kemPrivateKey
        self.signingPrivateKey = signingPrivateKey
        self.deviceUID = deviceUID
        self.stationUID = stationUID
        self.stationKEMPublicKeyHex = stationKEMPublicKeyHex
        self.endpoint = endpoint
        self.ipfsPeerID = ipfsPeerID
        self.ipnsName = ipnsName
    }

    /// The station's ML-KEM public key.
    ///
    /// - Throws: ``StationClientError`` (`.integrity`) when the stored hex is not a 1184-byte key.
    func stationKEMPublicKey() throws -> MLKEM768.PublicKey {
        do {
            return try MLKEM768.PublicKey(rawRepresentation: Hex.decode(stationKEMPublicKeyHex))
        } catch {
            throw StationClientError(.integrity, operation: "reading the station's ML-KEM key",
                                     message: "the stored station key is not a valid ML-KEM-768 key", underlying: error)
        }
    }

    /// The credentials as compact JSON (pure-Swift secret keys as lowercase hex; the TLS pin, the
    /// station's ML-DSA key and the IPNS sequence only when known, so older readers still read
    /// them), in storage that is zeroed when dropped: the private keys go from their key objects
    /// into it with no `String`, `Data` or array copy in between. Never log it.
    ///
    /// Credentials with pure-Swift keys are `"version": 1`, as earlier versions wrote them. A key
    /// the app keeps itself (``ReferenceStorableKey``) is stored as its reference and public key,
    /// and the JSON becomes `"version": 2` (load it with ``init(encoded:keyResolver:)``).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when a key is neither a pure-Swift key nor
    ///   ``ReferenceStorableKey``, or cannot give its reference: such credentials cannot be saved.
    public func encoded() throws -> SecretBytes {
        var object: JSONObject = [
            "version": 1,
            "device_uid": .string(deviceUID),
            "station_uid": .string(stationUID),
            "station_kem_public_key": .string(stationKEMPublicKeyHex),
            "endpoint": .string(endpoint.absoluteString),
        ]
        if let ipfsPeerID { object["ipfs_peer_id"] = .string(ipfsPeerID) }
        if let ipnsName { object["ipns_name"] = .string(ipnsName) }
        if let stationMLDSAPublicKeyHex { object["station_mldsa_public_key"] = .string(stationMLDSAPublicKeyHex) }
        if let stationPublicKeyPin { object["tls_public_key_pin"] = .string(stationPublicKeyPin.pinString) }
        if let pinnedEndpoint { object["tls_public_key_pin_endpoint"] = .string(pinnedEndpoint.absoluteString) }
        object["endpoint_trust"] = .string(endpointTrust.rawValue)
        if let ipnsSequence { object["ipns_sequence"] = .string(String(ipnsSequence)) }
        return try PrivateKeyJSON.encode(kem: kemPrivateKey, signing: signingPrivateKey, others: object,
                                         operation: "saving credentials")
    }

    /// Reads credentials written by ``encoded()`` (or by earlier versions: those that wrote the
    /// same JSON as an array, and those written before the TLS pin was kept, which have no pin and
    /// are trusted by the certificate authorities), from zeroizable storage: the key hex is
    /// decoded straight into the keys' own zeroed-on-drop storage.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the bytes are not such credentials, or
    ///   hold a key stored by reference (use ``init(encoded:keyResolver:)``).
    public init(encoded secret: SecretBytes) throws {
        try self.init(encoded: secret, keyResolver: nil)
    }

    /// Reads credentials written by ``encoded()``, as ``init(encoded:)``, with the app's keys: a
    /// key stored by reference is given to `keyResolver`, which returns the key; it must have
    /// the public key stored with the reference.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the bytes are not such credentials, a
    ///   key is stored by reference and `keyResolver` is `nil`, or the resolver fails or returns a
    ///   key with another public key than the stored one.
    public init(encoded secret: SecretBytes, keyResolver: KeyReferenceResolver?) throws {
        let operation = "reading stored credentials"
        func bad(_ why: String) -> StationClientError {
            StationClientError(.keyStore, operation: operation, message: why)
        }
        let decoded = try PrivateKeyJSON.decode(secret, resolver: keyResolver, operation: operation)
        let object = decoded.others
        func string(_ key: String) throws -> String {
            guard let value = object[key]?.stringValue else { throw bad("missing \(key)") }
            return value
        }
        kemPrivateKey = decoded.keys.kemKey
        signingPrivateKey = decoded.keys.signingKey
        deviceUID = try string("device_uid")
        stationUID = try string("station_uid")
        stationKEMPublicKeyHex = try string("station_kem_public_key")
        guard let url = URL(string: try string("endpoint")), url.scheme != nil else { throw bad("invalid endpoint") }
        endpoint = url
        ipfsPeerID = object["ipfs_peer_id"]?.stringValue
        ipnsName = object["ipns_name"]?.stringValue
        stationMLDSAPublicKeyHex = object["station_mldsa_public_key"]?.stringValue
        if let pin = object["tls_public_key_pin"]?.stringValue {
            guard let parsed = try? PublicKeyFingerprint(pin: pin) else { throw bad("invalid tls_public_key_pin") }
            stationPublicKeyPin = parsed
        } else {
            stationPublicKeyPin = nil
        }
        if let trust = object["endpoint_trust"]?.stringValue {
            guard let parsed = EndpointTrust(rawValue: trust) else { throw bad("invalid endpoint_trust") }
            endpointTrust = parsed
        } else {
            endpointTrust = stationPublicKeyPin == nil ? .certificateAuthority : .pinnedKey
        }
        if let pinned = object["tls_public_key_pin_endpoint"]?.stringValue {
            guard let parsed = URL(string: pinned), parsed.host != nil else { throw bad("invalid tls_public_key_pin_endpoint") }
            pinnedEndpoint = parsed
        } else {
            // Written before the pin's endpoint was kept: the current endpoint when it is pinned.
            pinnedEndpoint = stationPublicKeyPin != nil && endpointTrust == .pinnedKey ? endpoint : nil
        }
        if let sequence = object["ipns_sequence"]?.stringValue {
            guard let parsed = UInt64(sequence) else { throw bad("invalid ipns_sequence") }
            ipnsSequence = parsed
        } else {
            ipnsSequence = nil
        }
    }
}
