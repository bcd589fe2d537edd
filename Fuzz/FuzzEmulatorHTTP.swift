// libFuzzer harness for the emulator's HTTP parsers, which face untrusted peers: request heads,
// Content-Length and chunked bodies (read from a socket pair holding the input, as one
// connection's bytes), and multipart forms. Nothing traps, and multipart parsing stays linear.
// Build and run with Fuzz/run.sh (see Fuzz/README.md).
@_spi(Fuzzing) import StationEmulator

private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 32, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    let outcome: EmulatorFuzzing.Outcome
    if selector & 1 == 0 {
        // The bytes of a connection: heads, bodies, and each body as the form its head names.
        outcome = EmulatorFuzzing.parseConnection(rest)
    } else {
        // A form body: the first line is the boundary, the rest the body.
        let newline = rest.firstIndex(of: 0x0A) ?? rest.count
        let boundary = String(decoding: rest[..<newline], as: UTF8.self)
        let body = Array(rest[min(newline + 1, rest.count)...])
        outcome = EmulatorFuzzing.multipart(body, contentType: "multipart/form-data; boundary=\(boundary)")
    }
    guard outcome.multipartSteps <= outcome.multipartStepBound else {
        violated("multipart parsing took \(outcome.multipartSteps) steps, over its linear bound \(outcome.multipartStepBound)")
    }
    return 0
}
