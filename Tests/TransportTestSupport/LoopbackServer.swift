// The loopback HTTP/1.1 server the transport tests use is the station emulator's own HTTP layer
// (`LoopbackHTTPServer`, `HTTPServerRequest`, `HTTPServerResponse`, `ServerSocketError`), so the
// package has one server, not two; its test content (`PatternBytes`) lives there too, for the
// benchmarks. Re-exported here so the tests keep importing TransportTestSupport.
@_exported import StationEmulator
