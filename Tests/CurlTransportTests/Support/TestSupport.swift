#if canImport(CCurl)
import CurlTransport
import Foundation
import Transport
import TestSupport
import TransportTestSupport

extension TemporaryDirectory {
    /// A directory named for this test target.
    init() throws { try self.init(prefix: "curl-transport") }
}

extension CurlTransport {
    /// A transport with short limits, so failure tests finish quickly.
    static func forTests(idle: TimeInterval = 60, total: TimeInterval = 120, connect: TimeInterval = 30,
                         configure: (inout Configuration) -> Void = { _ in }) -> CurlTransport {
        var configuration = Configuration()
        configuration.idleTimeout = idle
        configuration.requestTimeout = total
        configuration.connectTimeout = connect
        configure(&configuration)
        return CurlTransport(configuration: configuration)
    }
}
#endif
