// libFuzzer harness for DriveSync's planner: a sync state and journal, a scanned tree (with unread
// and skipped places) and a station's versions of files (any names, sizes, digests, ancestry and
// dates, as a compromised station may publish) in; a plan out. Every plan must be bounded, decide
// nothing where the folder was not read, touch only files as the scan saw them, and give each
// conflict copy a free name. Build and run with Fuzz/run.sh (see Fuzz/README.md).
@_spi(Fuzzing) import DriveSync

/// A scenario's plan is a few dozen small values: the input is copied, little else.
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 64, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: min(size, 512)))
    runToCompletion {
        let outcome = await SyncPlannerFuzzing.plan(bytes)
        if !outcome.violations.isEmpty { fatalError("property violated: \(outcome.violations)") }
    }
    return 0
}
