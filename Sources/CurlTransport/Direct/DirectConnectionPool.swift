#if canImport(Glibc)
import Glibc
#endif

/// Idle connections of direct exchanges, by origin (`host:port`), oldest evicted first. Curl
/// thread only.
struct DirectConnectionPool {
    private struct Idle {
        var origin: String
        var socket: Int32
        var since: Double
    }

    /// How many idle connections may be kept in all.
    let limit: Int
    /// Idle connections older than this are closed rather than reused (servers drop idle
    /// keep-alive connections after a while; uvicorn after 5 s).
    let maximumIdleSeconds: Double
    private var idle: [Idle] = []

    init(limit: Int, maximumIdleSeconds: Double = 4) {
        self.limit = max(0, limit)
        self.maximumIdleSeconds = maximumIdleSeconds
    }

    /// The most recently used idle connection to `origin` that still looks alive, or `nil`.
    mutating func take(_ origin: String, now: Double) -> Int32? {
        closeExpired(now: now)
        while let index = idle.lastIndex(where: { $0.origin == origin }) {
            let candidate = idle.remove(at: index)
            if Self.looksAlive(candidate.socket) { return candidate.socket }
            _ = close(candidate.socket)
        }
        return nil
    }

    /// Keeps `socket` for reuse, closing the oldest idle connection when over the limit.
    mutating func put(_ socket: Int32, origin: String, now: Double) {
        guard limit > 0 else {
            _ = close(socket)
            return
        }
        idle.append(Idle(origin: origin, socket: socket, since: now))
        while idle.count > limit { _ = close(idle.removeFirst().socket) }
    }

    mutating func closeExpired(now: Double) {
        idle.removeAll { entry in
            guard now - entry.since >= maximumIdleSeconds else { return false }
            _ = close(entry.socket)
            return true
        }
    }

    mutating func closeAll() {
        for entry in idle { _ = close(entry.socket) }
        idle.removeAll()
    }

    /// An idle connection must have nothing to read: readable means the server closed it (or sent
    /// something unasked), either way it cannot carry a request.
    private static func looksAlive(_ socket: Int32) -> Bool {
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }
}
