import Foundation
import PQCrypto

/// Where new device keys come from when a call needs keys the app did not pass:
/// ``StationClientConfiguration/keyPolicy``, used by pairing
/// (``StationClient/pair(endpoint:deviceName:configuration:trust:keys:pin:)`` with `keys: nil`,
/// and the overloads without `keys`), following (``StationClient/follow(stationAt:trust:name:)``)
/// and ``StationClient/followerIdentity(name:)`` when the key store holds no follower identity.
///
/// - ``generatePureSwiftKeys`` (the default): fresh pure-Swift keys (``DeviceKeys/generate()``),
///   whose bytes are stored in the ``KeyStore``.
/// - ``factory(_:)``: the app's keys, such as Secure Enclave keys (see <doc:KeepingDeviceKeys>),
///   made by the app's closure each time new keys are needed.
/// - ``refuseToGenerate``: no keys are made; a call that would make them throws
///   `StationClientError.Kind.refused` whose ``StationClientError/operation`` names the call, so
///   an app that must keep every key in hardware learns at once where it forgot to pass its own.
///
///     var configuration = StationClientConfiguration(namespace: "drive", keyStore: keys)
///     configuration.keyPolicy = .refuseToGenerate   // every call must be given the app's keys
///
/// Keys passed explicitly (`pair(…keys:…)`, ``FollowerIdentity/init(name:keys:)``) are used
/// whatever the policy. ``DeviceCredentials/keysAreStoredByReference`` and
/// ``FollowerIdentity/keysAreStoredByReference`` tell which kind of keys a device ended up with.
public struct KeyPolicy: Sendable, CustomStringConvertible {
    private enum Source: Sendable {
        case pureSwift
        case factory(@Sendable () throws -> DeviceKeys)
        case refuse
    }

    private let source: Source

    private init(_ source: Source) { self.source = source }

    /// Fresh pure-Swift keys (``DeviceKeys/generate()``): the default.
    public static var generatePureSwiftKeys: KeyPolicy { KeyPolicy(.pureSwift) }

    /// The app's keys, from `makeKeys` each time new keys are needed. To be saved, each key is a
    /// pure-Swift key or a ``ReferenceStorableKey``; an error `makeKeys` throws fails the call
    /// with `StationClientError.Kind.keyStore` (the error is its
    /// ``StationClientError/underlying``).
    public static func factory(_ makeKeys: @escaping @Sendable () throws -> DeviceKeys) -> KeyPolicy {
        KeyPolicy(.factory(makeKeys))
    }

    /// Never makes keys: a call that needs new keys the app did not pass throws
    /// `StationClientError.Kind.refused` naming the call.
    public static var refuseToGenerate: KeyPolicy { KeyPolicy(.refuse) }

    /// The policy's name: `generatePureSwiftKeys`, `factory` or `refuseToGenerate`.
    public var description: String {
        switch source {
        case .pureSwift: "generatePureSwiftKeys"
        case .factory: "factory"
        case .refuse: "refuseToGenerate"
        }
    }

    /// New keys for `operation` (`"pairing"`, `"creating a follower identity"`).
    ///
    /// - Throws: ``StationClientError``: `.refused` under ``refuseToGenerate``, `.keyStore` when
    ///   the app's factory throws.
    func makeKeys(for operation: String) throws(StationClientError) -> DeviceKeys {
        switch source {
        case .pureSwift:
            return .generate()
        case .factory(let make):
            do {
                return try make()
            } catch let error as StationClientError {
                throw error
            } catch {
                throw StationClientError(.keyStore, operation: operation, message: "the app's key factory failed: \(error)",
                                         underlying: error)
            }
        case .refuse:
            throw StationClientError(
                .refused, operation: operation,
                message: "the configuration's key policy (refuseToGenerate) forbids generating keys: pass the app's keys to \(operation)")
        }
    }
}

extension PrivateKeyJSON {
    /// Whether both keys are kept by reference (neither is a pure-Swift key whose bytes go to the store).
    static func storesByReference(kem: any MLKEM768DecapsulationKey, signing: any MLDSA65SigningKey) -> Bool {
        !(kem is MLKEM768.PrivateKey) && !(signing is MLDSA65.PrivateKey)
    }
}
