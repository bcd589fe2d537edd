import Foundation
import StationClient

// Step 1 of the seed guide: pair a device.
//
// Pairing earns a key-less device the right to act on a station: the client checks /health,
// reads /profile, generates its ML-KEM-768 and ML-DSA-65 key pairs, starts a session with
// /delegate/start and confirms it with the 6-digit PIN the station printed in its log.
//
//   swift run cipher-examples pair-device                  # against an embedded StationEmulator
//   swift run cipher-examples pair-device --station URL    # against a real station (asks for the PIN)
//   swift run cipher-examples pair-device --station https://127.0.0.1:8445 --fingerprint sha256//…
//                                                          # a run.py station: its self-signed key, pinned
//   swift run cipher-examples pair-device --help           # what it does and its options (every step)
//
// The paired device stays on the station: the protocol has no call to remove one.

enum PairDevice {
    static let usage = ExampleUsage(name: "pair-device", summary: """
        Pairs a device with a station (PIN from the station's log), shows its uids, keys and TLS pin,
        reloads the credentials from the key store and makes one signed call.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let client = try await station.pair(deviceName: "Example Laptop")
            let credentials = await client.credentials

            // Keep the device uid the station returned, byte for byte: every signature carries it.
            print("paired device uid: \(credentials.deviceUID)")
            print("station uid: \(credentials.stationUID)")
            // A self-signed https station's key is pinned in the credentials; every later request carries it.
            print("TLS key pin: \(credentials.stationPublicKeyPin?.pinString ?? "none (plain http or a CA-signed certificate)")")
            print("ML-KEM-768 public key: \(credentials.kemPublicKey.rawRepresentation.count) B")
            print("ML-DSA-65 public key: \(credentials.signingPublicKey.rawRepresentation.count) B")

            // The credentials were saved to the configured key store; a restarted app loads them.
            let reloaded = try await StationClient.load(configuration: client.configuration)
            print("reloaded from the key store: \(await reloaded.credentials.deviceUID == credentials.deviceUID)")

            // The first signed call proves the station knows this device.
            print("signed call accepted, followers: \(try await client.followers().count)")
        }
    }
}
