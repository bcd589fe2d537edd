import Foundation

/// Fault injection for client tests: failing requests, broken connections, latency and an IPFS
/// outage, switched on and off through the Swift API while the emulator runs.
///
///     emulator.faults.failNextRequests(2, status: 502)
///     emulator.faults.setIPFSDown(true)   // /health → 503 degraded, /content → 503
public final class FaultInjector: Sendable {
    private struct State {
        var failures: [(remaining: Int, status: Int, body: String)] = []
        var closeMidBody = 0
        var latency: Double = 0
        var ipfsDown = false
    }

    /// What happens to the next request.
    enum Action {
        case fail(status: Int, body: String)
        case closeMidBody
    }

    private let state = Locked(State())

    /// Creates an injector with no faults.
    public init() {}

    /// Makes the next `count` station requests fail with `status` and `body` (by default
    /// `{"detail":"injected fault"}`), before routing, authentication or any state change.
    public func failNextRequests(_ count: Int, status: Int, body: String = #"{"detail":"injected fault"}"#) {
        guard count > 0 else { return }
        state.withLock { $0.failures.append((count, status, body)) }
    }

    /// Makes the next `count` station responses stop half-way through the body: the head and half
    /// the bytes are sent, then the connection is closed (in process, the transport throws
    /// `TransportError` with kind `.connectionLost`). The request itself is processed.
    public func closeNextResponsesMidBody(_ count: Int) {
        state.withLock { $0.closeMidBody += max(0, count) }
    }

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

    /// Clears every fault.
    public func reset() { state.withLock { $0 = State() } }

    /// Consumes the fault (if any) that applies to the next request.
    func nextAction() -> Action? {
        state.withLock { state in
            if !state.failures.isEmpty {
                let first = state.failures[0]
                if first.remaining <= 1 { state.failures.removeFirst() } else { state.failures[0].remaining -= 1 }
                return .fail(status: first.status, body: first.body)
            }
            if state.closeMidBody > 0 {
                state.closeMidBody -= 1
                return .closeMidBody
            }
            return nil
        }
    }
}
