import Foundation
import Transport
import TestSupport
import TransportTestSupport
import URLSessionTransport

extension TemporaryDirectory {
    /// A directory named for this test target.
    init() throws { try self.init(prefix: "urlsession-transport") }
}

extension URLSessionTransport {
    /// A transport with short limits, so failure tests finish quickly.
    static func forTests(idle: TimeInterval = 60, total: TimeInterval = 120,
                         configure: (inout Configuration) -> Void = { _ in }) -> URLSessionTransport {
        var configuration = Configuration()
        configuration.idleTimeout = idle
        configuration.requestTimeout = total
        configure(&configuration)
        return URLSessionTransport(configuration: configuration)
    }
}
