import Foundation
import Transport

/// Fault injection for client tests: failing requests, broken connections, latency, an IPFS
/// outage and damaged content, switched on and off through the Swift API while the emulator runs.
///
///     emulator.faults.failNextRequests(2, status: 502)
///     emulator.faults.failNextRequests(1, status: 429, route: RequestRoute("POST", path: "/delegate/confirm"))
///     emulator.faults.closeNextResponsesMidBody(1, route: RequestRoute("GET", pathPrefix: "/content/"), afterBytes: 50_000)
///     emulator.faults.setIPFSDown(true)   // /health → 503 degraded, /content → 503
///
/// Request faults (``failNextRequests(_:status:body:route:)`` and
/// ``closeNextResponsesMidBody(_:route:afterBytes:)``) apply to station requests, not to the
/// gateway's; each is used up by the requests on its route, in the order the faults were added.
/// ``inject(_:count:route:server:)`` aims any ``RequestFault`` (a status, a body replaced by N
/// bytes or an endless one, a delay, a close mid-body) at a route of the station or of the
/// gateway, and ``forgeIPNSAnswer(_:)`` replaces the gateway's `/ipns` answer.
public final class FaultInjector: Sendable {
    /// A queued fault: used up by `remaining` requests (`Int.max`: standing until ``reset()``).
    private protocol Queued {
        var remaining: Int { get set }
    }

    private struct Failure: Queued {
        var remaining: Int
        let status: Int
        let body: String
        let headers: [String: String]
        let route: RequestRoute
    }

    private struct Cut: Queued {
        var remaining: Int
        let route: RequestRoute
        let afterBytes: Int?
    }

    private struct Injected: Queued {
        var remaining: Int
        let fault: RequestFault
        let route: RequestRoute
        let server: RequestLog.Server
    }

    private struct Throttle {
        let route: RequestRoute
        let server: RequestLog.Server
        let bytesPerSecond: Int
    }

    private struct State {
        var throttles: [Throttle] = []
        var failures: [Failure] = []
        var cuts: [Cut] = []
        var injected: [Injected] = []
        var forgedIPNSAnswer: [UInt8]?
        var latency: Double = 0
        var ipfsDown = false
        var replacedContent: [String: [UInt8]] = [:]
        var ipnsRecord: (bytes: [UInt8], cid: String?)?
    }

    /// What happens to the next request.
    enum Action {
        case fail(status: Int, body: String, headers: [String: String])
        /// Send `afterBytes` of the body (`nil`: half), then close the connection.
        case closeMidBody(afterBytes: Int?)
        /// One of the faults queued with ``FaultInjector/inject(_:count:route:server:)``.
        case injected(RequestFault)
    }

    private let state = Locked(State())

    /// Creates an injector with no faults.
    public init() {}

    /// Makes the next `count` station requests on `route` (by default every route) fail with
    /// `status` and `body` (by default `{"detail":"injected fault"}`), before routing,
    /// authentication or any state change: a tunnel's 502, a rate limiter's 429.
    ///
    /// A `count` of `Int.max` keeps failing the route until ``reset()``.
    public func failNextRequests(_ count: Int, status: Int, body: String = #"{"detail":"injected fault"}"#,
                                 route: RequestRoute = .any) {
        failNextRequests(count, status: status, body: body, headers: [:], route: route)
    }

    /// As ``failNextRequests(_:status:body:route:)``, with `headers` added to each failing answer
    /// (after its `content-type`): a rate limiter's `Retry-After`, say.
    ///
    ///     emulator.faults.failNextRequests(1, status: 429, headers: ["Retry-After": "30"],
    ///                                      route: RequestRoute("POST", path: "/rewrap"))
    public func failNextRequests(_ count: Int, status: Int, body: String = #"{"detail":"injected fault"}"#,
                                 headers: [String: String], route: RequestRoute = .any) {
        guard count > 0 else { return }
        state.withLock {
            $0.failures.append(Failure(remaining: count, status: status, body: body, headers: headers, route: route))
        }
    }

    /// Makes the next `count` station responses on `route` (by default every route) stop
    /// part-way through the body: the head and the first `afterBytes` body bytes (by default half
    /// the body) are sent, then the connection is closed. The request itself is processed, so this
    /// is also a lost answer. A body no longer than `afterBytes` is sent whole before the close.
    /// A `count` of `Int.max` keeps cutting the route until ``reset()``.
    ///
    /// In process, a streamed response (`TransferOptions.response == .stream`) yields those bytes
    /// and then throws `TransportError` with kind `.connectionLost`; any other response throws it
    /// at once.
    public func closeNextResponsesMidBody(_ count: Int, route: RequestRoute = .any, afterBytes: Int? = nil) {
        guard count > 0 else { return }
        state.withLock { $0.cuts.append(Cut(remaining: count, route: route, afterBytes: afterBytes.map { max(0, $0) })) }
    }

    /// Queues `fault` for the next `count` requests on `route` (by default every route) to
    /// `server` (by default the station): the station's routes, or the gateway's `/ipfs/…` and
    /// `/ipns/…`. `Int.max` keeps it until ``reset()``.
    ///
    ///     emulator.faults.inject(.status(404), route: RequestRoute("GET", pathPrefix: "/ipns/"), server: .gateway)
    ///     emulator.faults.inject(.endlessBody, route: RequestRoute("GET", pathPrefix: "/ipfs/"), server: .gateway)
    ///     emulator.faults.inject(.replaceBody(byteCount: 1 << 20), route: RequestRoute("POST", path: "/rewrap"))
    ///
    /// Faults queued by ``failNextRequests(_:status:body:route:)`` come first; then these, in
    /// the order they were added. A ``RequestFault/status(_:body:)`` answers before routing (the
    /// request has no effect); the others act on the routed answer (the request is processed).
    public func inject(_ fault: RequestFault, count: Int = 1, route: RequestRoute = .any,
                       server: RequestLog.Server = .station) {
        guard count > 0 else { return }
        state.withLock { $0.injected.append(Injected(remaining: count, fault: fault, route: route, server: server)) }
    }

    /// Slows the body of every answer on `route` (by default every route) from `server` (by
    /// default the station) to about `bytesPerSecond`, until ``reset()``: the head goes out at
    /// once, then the body in slices of a twentieth of a second's bytes (at least one), each
    /// followed by the time it takes at that rate. The answer is otherwise the same (it combines
    /// with the other faults: a cut mid-body comes after the throttled bytes). A later throttle
    /// of the same route and server replaces the earlier one; a rate of 0 or less removes it.
    ///
    /// What makes "cancel a download halfway" a short test, in process or over HTTP (see
    /// <doc:TestingWithTheEmulator>):
    ///
    ///     emulator.faults.throttle(RequestRoute("GET", pathPrefix: "/content/"), toBytesPerSecond: 1 << 20)
    ///     let download = ProgressTask(cancellingWhen: { $0.completed * 2 >= $0.total ?? .max }) {
    ///         try await client.download(postCID: cid, to: file, progress: $0)
    ///     }
    public func throttle(_ route: RequestRoute = .any, toBytesPerSecond bytesPerSecond: Int, server: RequestLog.Server = .station) {
        state.withLock { state in
            state.throttles.removeAll { $0.route == route && $0.server == server }
            if bytesPerSecond > 0 {
                state.throttles.append(Throttle(route: route, server: server, bytesPerSecond: bytesPerSecond))
            }
        }
    }

    /// The byte rate answers to `method` `path` from `server` are throttled to (the latest
    /// throttle whose route matches), or `nil`.
    func throttleRate(method: String, path: String, server: RequestLog.Server) -> Int? {
        state.withLock { state in
            state.throttles.last { $0.server == server && $0.route.matches(method: method, path: path) }?.bytesPerSecond
        }
    }

    /// Makes the gateway answer `GET /ipns/<the station's name or peer id>` with `document`
    /// (status 200, `application/json`) instead of the published `public.json`, as a hostile or
    /// stale gateway would: another station's record, an endpoint the attacker controls, or bytes
    /// that are not JSON. Until ``reset()`` or a call with `nil`.
    public func forgeIPNSAnswer(_ document: Data?) {
        state.withLock { $0.forgedIPNSAnswer = document.map { [UInt8]($0) } }
    }

    /// The bytes ``forgeIPNSAnswer(_:)`` put in place of the station's IPNS record, if any.
    var forgedIPNSAnswer: [UInt8]? { state.withLock { $0.forgedIPNSAnswer } }

    /// How many requests the queued request faults still apply to (`Int.max` while a standing
    /// failure is queued); 0 once every one has been used up.
    public var pendingFaultCount: Int {
        state.withLock { state in
            let counts = state.failures.map(\.remaining) + state.cuts.map(\.remaining) + state.injected.map(\.remaining)
            return counts.reduce(0) { total, count in
                let (sum, overflow) = total.addingReportingOverflow(count)
                return overflow ? Int.max : sum
            }
        }
    }

    /// Serves `bytes` instead of the stored file for `cid`, from the station's `/content/<cid>`
    /// and the gateway's `/ipfs/<cid>` (ranges are cut from `bytes`), as a damaged disk or a
    /// tampering proxy would: the bytes no longer match the CID. Until ``reset()``.
    public func replaceContent(of cid: String, with bytes: Data) {
        state.withLock { $0.replacedContent[cid] = [UInt8](bytes) }
    }

    /// The bytes ``replaceContent(of:with:)`` put in place of `cid`, if any.
    func replacedContent(of cid: String) -> [UInt8]? { state.withLock { $0.replacedContent[cid] } }

    /// Delays every station response by `seconds` (0 turns the delay off).
    public func setLatency(_ seconds: Double) { state.withLock { $0.latency = max(0, seconds) } }

    /// The current added latency in seconds.
    public var latency: Double { state.withLock { $0.latency } }

    /// Takes the emulated IPFS node down or brings it back: while down, `/health` answers 503
    /// `degraded`, `/content` 503 `content store unavailable`, the gateway 502, and `/storage`
    /// reports an IPFS error.
    public func setIPFSDown(_ down: Bool) { state.withLock { $0.ipfsDown = down } }

    /// Whether the IPFS node is down.
    public var isIPFSDown: Bool { state.withLock { $0.ipfsDown } }

    /// Serves `record` from the gateway's `/ipns/<name>?format=ipns-record` instead of the
    /// station's latest (see `StationEmulator.serveIPNSRecord(pointingAt:sequence:validity:forged:)`).
    /// The plain `/ipns/<name>` serves the file `cid` names (as a gateway that resolved the record would).
    func setIPNSRecord(_ record: [UInt8], pointingAt cid: String?) { state.withLock { $0.ipnsRecord = (record, cid) } }

    /// The IPNS record served in place of the station's own, and the CID it points to, if any.
    var injectedIPNSRecord: (bytes: [UInt8], cid: String?)? { state.withLock { $0.ipnsRecord } }

    /// Clears every fault.
    public func reset() { state.withLock { $0 = State() } }

    /// Consumes the fault (if any) that applies to the next request, `method` `path`, to
    /// `server`. A queued failure comes before a queued cut, and both before an injected fault.
    func nextAction(method: String, path: String, server: RequestLog.Server = .station) -> Action? {
        let onRoute = { (route: RequestRoute) in route.matches(method: method, path: path) }
        return state.withLock { state in
            if server == .station, let failure = Self.useFirst(of: &state.failures, where: { onRoute($0.route) }) {
                return .fail(status: failure.status, body: failure.body, headers: failure.headers)
            }
            if server == .station, let cut = Self.useFirst(of: &state.cuts, where: { onRoute($0.route) }) {
                return .closeMidBody(afterBytes: cut.afterBytes)
            }
            if let injected = Self.useFirst(of: &state.injected, where: { $0.server == server && onRoute($0.route) }) {
                return .injected(injected.fault)
            }
            return nil
        }
    }

    /// The first fault in `queue` that `applies` to the request, with one of its requests used
    /// up: it leaves the queue with its last one, and a standing fault (`Int.max`) never does.
    private static func useFirst<Fault: Queued>(of queue: inout [Fault], where applies: (Fault) -> Bool) -> Fault? {
        guard let index = queue.firstIndex(where: applies) else { return nil }
        let fault = queue[index]
        if fault.remaining == Int.max {
            // Standing until reset.
        } else if fault.remaining <= 1 {
            queue.remove(at: index)
        } else {
            queue[index].remaining -= 1
        }
        return fault
    }
}

/// A fault for ``FaultInjector/inject(_:count:route:server:)``: what a hostile or broken station,
/// tunnel or gateway does to one answer.
public enum RequestFault: Sendable, Hashable {
    /// Answers `status` with `body` before routing (the request has no effect), as a tunnel or a
    /// rate limiter does. The body is sent as `application/json` when it parses as JSON, else as
    /// `text/plain`.
    case status(Int, body: Data = Data(#"{"detail":"injected fault"}"#.utf8))
    /// Processes the request, then answers with its status and headers but a body of
    /// `byteCount` pseudo-random bytes (`PatternBytes`) in place of the real one, with a
    /// matching `Content-Length`: an oversized answer.
    case replaceBody(byteCount: Int)
    /// Processes the request, then answers with its status and a body that never ends (no
    /// `Content-Length`; pseudo-random bytes until the client gives up). In process, a streamed
    /// response never ends, a response to memory fails with `.responseTooLarge`, and one to a
    /// file is written until the transfer's total time limit.
    case endlessBody
    /// Waits `seconds`, then answers as usual.
    case delay(seconds: Double)
    /// Processes the request, sends the head and the first `afterBytes` body bytes (`nil`: half
    /// the body), then closes the connection: a lost answer.
    case closeMidBody(afterBytes: Int?)
}
