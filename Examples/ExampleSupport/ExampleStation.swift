#if canImport(CCurl)
import CurlTransport
#endif
import Foundation
import StationClient
import StationEmulator
import Transport
import URLSessionTransport

/// The station an example runs against: an embedded ``StationEmulator`` served on loopback (the
/// default), or a real station given with `--station URL` (and optionally `--gateway URL` and,
/// for a self-signed `https` station such as one `run.py` starts, `--fingerprint sha256//…`).
///
/// Either way the example talks HTTP through `CurlTransport` (`URLSessionTransport` where libcurl
/// is absent: iOS, tvOS, watchOS, visionOS), exactly as an app would, and every
/// request to the station carries the pin its client uses (``send(_:body:pinnedAs:)``). What the
/// example creates on the station is registered (``removeAtEnd(_:_:)``) and removed when it ends,
/// unless `--keep` is given.
public final class ExampleStation: Sendable {
    /// The station's URL.
    public let endpoint: URL
    /// The embedded emulator, or `nil` against a real station.
    public let emulator: StationEmulator?
    /// The transport every call goes through.
    public let transport: any HTTPTransport
    /// The IPFS gateway (the emulator's, or `--gateway`), if any.
    public let gateway: IPFSGateway?
    /// The station's TLS key as given with `--fingerprint`, if any: pairing pins it without asking.
    public let fingerprint: PublicKeyFingerprint?
    /// Whether `--keep` was given: what the example created stays on the station.
    public let keep: Bool
    private let leftovers = Locked(Leftovers())

    /// What the example created on the station, to remove at its end.
    private struct Leftovers {
        var removals: [(what: String, remove: @Sendable () async throws -> Void)] = []
        var pairedDevices: [String] = []
        var notes: [String] = []
    }

    /// Reads `--station URL`, `--gateway URL`, `--fingerprint sha256//…` and `--keep` from the
    /// parsed command line; without `--station`, starts an emulator on loopback.
    ///
    /// - Throws: ``ExampleError`` for a malformed URL or fingerprint; the emulator's errors when it
    ///   cannot start.
    public init(arguments: ExampleArguments = ExampleArguments()) throws {
        #if canImport(CCurl)
        transport = CurlTransport()
        #else
        // libcurl is absent (iOS, tvOS, watchOS, visionOS): the platform's own transport.
        transport = URLSessionTransport()
        #endif
        keep = arguments.has("--keep")
        if let text = arguments.value("--fingerprint") {
            guard let parsed = try? PublicKeyFingerprint(pin: text) else {
                throw ExampleError("\(text) is not a fingerprint (sha256//<base64>)")
            }
            fingerprint = parsed
        } else {
            fingerprint = nil
        }
        if let station = arguments.value("--station") {
            guard let url = URL(string: station), url.host != nil else { throw ExampleError("\(station) is not a URL") }
            endpoint = url
            emulator = nil
            if let given = arguments.value("--gateway") {
                guard let gatewayURL = URL(string: given), gatewayURL.host != nil else { throw ExampleError("\(given) is not a URL") }
                gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)
            } else {
                gateway = nil
            }
        } else {
            let emulator = try StationEmulator()
            endpoint = try emulator.start()
            guard let gatewayURL = emulator.gatewayURL else { throw ExampleError("the emulator's gateway did not start") }
            gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)
            self.emulator = emulator
        }
    }

    /// `true` when running against the embedded emulator.
    public var isEmbedded: Bool { emulator != nil }

    /// A client configuration for `namespace` with an in-memory key store.
    public func configuration(namespace: String = "drive") -> StationClientConfiguration {
        StationClientConfiguration(namespace: namespace, keyStore: InMemoryKeyStore(), transport: transport, gateway: gateway)
    }

    /// Pairs a new device. The PIN comes from the emulator's log, or is asked on the terminal
    /// for a real station (the station prints it in its log). A self-signed `https` station's key
    /// is pinned when it is the `--fingerprint` given; without one it is shown and asked about.
    ///
    /// - Throws: ``StationClientError`` when pairing fails (`.untrustedKey` for a key not accepted).
    public func pair(deviceName: String, namespace: String = "drive") async throws -> StationClient {
        let emulator = self.emulator
        let client = try await StationClient.pair(endpoint: endpoint, deviceName: deviceName,
                                                  configuration: configuration(namespace: namespace), trust: keyTrust) { prompt in
            if let emulator { return emulator.log.latestPIN }
            FileHandle.standardError.write(Data("PIN shown by the station (\(prompt.attemptsLeft) attempts left): ".utf8))
            return readLine(strippingNewline: true)
        }
        let device = await client.credentials.deviceUID
        leftovers.withLock { $0.pairedDevices.append(device) }
        return client
    }

    /// How this station's TLS key is trusted (pairing with it, or following it): the
    /// `--fingerprint` given, else shown on the terminal and asked about.
    public var keyTrust: StationKeyTrust {
        if let fingerprint { return .expected(fingerprint) }
        return .confirm { prompt in
            FileHandle.standardError.write(Data("""
                The station presents a self-signed TLS key: \(prompt.fingerprint.pinString)
                (on the station: openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
                | openssl dgst -sha256 -binary | base64). Trust it? [y/N] 
                """.utf8))
            return readLine(strippingNewline: true)?.lowercased().hasPrefix("y") == true
        }
    }

    /// Sends a request of the example's own to the station with `client`'s transport and the pins
    /// its requests carry (`StationClient.activePins`): the only way an app's own request reaches
    /// a station whose self-signed key is pinned.
    ///
    /// - Throws: `TransportError` when no response could be had (a pin mismatch among them).
    public func send(_ request: HTTPRequest, body: HTTPRequestBody = .none, pinnedAs client: StationClient) async throws -> HTTPResponse {
        try await transport.send(request, body: body, options: TransferOptions(pinnedPublicKeys: await client.activePins))
    }

    // MARK: Leaving nothing behind

    /// Registers something the example created on the station, removed by `remove` when the
    /// example ends (last created, first removed), unless `--keep` is given.
    public func removeAtEnd(_ what: String, _ remove: @escaping @Sendable () async throws -> Void) {
        leftovers.withLock { $0.removals.append((what, remove)) }
    }

    /// Registers `post`, published by `client`, for removal from the manifest when the example ends.
    /// A post already gone by then (a reshare removed it) counts as removed.
    public func removeAtEnd(_ post: PublishedPost, publishedBy client: StationClient, name: String) {
        removeAtEnd(postCID: post.postCID, publishedBy: client, name: name)
    }

    /// Registers the post `postCID` (one the example made some other way, e.g. a sync) for removal
    /// when the example ends, as ``removeAtEnd(_:publishedBy:name:)``.
    public func removeAtEnd(postCID: String, publishedBy client: StationClient, name: String) {
        removeAtEnd("post \(name)") {
            do {
                _ = try await client.delete(postCID: postCID)
            } catch let error as StationClientError where error.kind == .notFound {
                return
            }
        }
    }

    /// Registers the follower `uid`, approved by `client`'s station, for removal when the example ends.
    public func removeFollowerAtEnd(_ uid: String, approvedBy client: StationClient) {
        removeAtEnd("follower \(uid)") { _ = try await client.removeFollower(uid: uid) }
    }

    /// Records something the example leaves on the station that the protocol cannot remove,
    /// printed when the example ends against a station.
    public func noteLeftBehind(_ note: String) {
        leftovers.withLock { $0.notes.append(note) }
    }

    /// Removes what the example registered (or, with `--keep`, lists it), then says what stays on
    /// a station: the devices it paired and its notes. Against the embedded emulator the
    /// removals run too; nothing is said about what stays.
    ///
    /// - Returns: `false` when something could not be removed.
    public func finish() async -> Bool {
        let (removals, devices, notes) = leftovers.withLock { state in
            defer { state = Leftovers() }
            return (state.removals, state.pairedDevices, state.notes)
        }
        var clean = true
        for (what, remove) in removals.reversed() {
            if keep { print("kept (--keep): \(what)"); continue }
            do {
                try await remove()
                print("removed: \(what)")
            } catch {
                clean = false
                FileHandle.standardError.write(Data("could not remove \(what): \(error)\n".utf8))
            }
        }
        guard !isEmbedded else { return clean }
        for device in devices {
            print("left on the station: paired device \(device) (the protocol has no call to remove a paired device; remove it on the station)")
        }
        for note in notes { print("left on the station: \(note)") }
        return clean
    }

    /// Stops the embedded emulator, if any.
    public func stop() { emulator?.stop() }
}

/// A failure in an example's own setup.
public struct ExampleError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// Creates an error with a message.
    public init(_ description: String) { self.description = description }
}

/// Runs an example's body: `--help` prints `usage` and exits before anything starts; otherwise
/// the station is set up from the command line, the body runs, and what it registered is removed
/// (unless `--keep`). Prints any error and exits with status 1 on failure.
public func runExample(_ usage: ExampleUsage, _ given: [String], _ body: @Sendable (ExampleStation) async throws -> Void) async {
    let arguments = ExampleArguments.parse(given, usage: usage)
    let station: ExampleStation
    do {
        station = try ExampleStation(arguments: arguments)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
    defer { station.stop() }
    var failed = false
    do {
        try await body(station)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        failed = true
    }
    if await !station.finish() { failed = true }
    if failed {
        station.stop()
        exit(1)
    }
}
