import Foundation
import LoopbackHTTP

extension StationEmulator {
    /// The emulator as a LoopbackHTTP request handler for `role`: what its HTTP servers run on each
    /// connection and ``InProcessTransport`` hands each request to (see
    /// `StationHTTPServer.handler(clock:maximumBodySize:tooLarge:refusesDeclaredLength:handle:)`).
    /// The emulator is held weakly (its servers are its own); once it is gone the answer is 503.
    func loopbackHandler(_ role: InProcessTransport.Role) -> LoopbackHTTPServer.Handler {
        let router = self.router
        let requests = self.requests
        return StationHTTPServer.handler(
            clock: core.clock, maximumBodySize: core.configuration.maximumUploadSize,
            tooLarge: { head in
                requests.record(role.server(for: head.path), head, router.tooLargeResponse)
                return router.tooLargeResponse
            },
            refusesDeclaredLength: { head in
                role.server(for: head.path) == .station
                    && router.isTooLarge(path: head.path, declaredLength: head.header("content-length"))
            },
            handle: { [weak self] request in
                guard let self else { return StationResponse(status: 503) }
                switch role {
                case .station: return await self.handleStation(request)
                case .gateway: return await self.handleGateway(request)
                case .stationAndGateway: return await self.handle(request)
                }
            })
    }
}

extension InProcessTransport.Role {
    /// Which server of the emulator answers `path` in this role.
    func server(for path: String) -> RequestLog.Server {
        switch self {
        case .station: .station
        case .gateway: .gateway
        case .stationAndGateway: StationEmulator.isGatewayPath(path) ? .gateway : .station
        }
    }
}
