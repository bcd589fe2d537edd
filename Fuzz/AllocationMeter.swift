// The memory amplification check every harness is linked with (Fuzz/run.sh compiles this file
// beside the harness's own). libFuzzer calls LLVMFuzzerTestOneInput here; it runs the harness's
// `fuzzOneInput` and measures, through AddressSanitizer's allocation hooks, the peak of the bytes
// the program had asked for and not yet freed while the input ran, above what was live before it.
// What a harness does beyond reading (writing a value back in every layout and re-reading it,
// its own property checks) runs in `unmetered { }`: the peak is not raised there, though what it
// leaves allocated still counts. An input whose peak passes `amplificationLimit.bytesPerInputByte` times its size (plus
// `amplificationLimit.fixedBytes`, what any input may cost: keys, buffers, a scratch directory's
// names) is a finding: the run stops with the input saved, as for a crash. At exit it prints the
// largest peak per input byte seen on inputs of at least 1 KiB, the figure Fuzz/README.md records.
import Dispatch
import Synchronization

/// The bytes asked for and not yet freed, and their peak since the current input started.
private let liveBytes = Atomic<Int>(0)
private let peakBytes = Atomic<Int>(0)
/// The largest peak per input byte seen (in thousandths) on inputs of at least 1 KiB, and that input's size.
private let worstRatio = Atomic<Int>(0)
private let worstSize = Atomic<Int>(0)
/// The largest peak seen on any input, in bytes, and that input's size.
private let largestGrowth = Atomic<Int>(0)
private let largestGrowthSize = Atomic<Int>(0)
private let hooksInstalled = Atomic<Bool>(false)
/// Whether the peak follows the live bytes (off inside `unmetered`).
private let metering = Atomic<Bool>(true)

@_silgen_name("__sanitizer_install_malloc_and_free_hooks")
private func installAllocationHooks(
    _ malloc: @convention(c) (UnsafeRawPointer?, Int) -> Void, _ free: @convention(c) (UnsafeRawPointer?) -> Void
) -> CInt

@_silgen_name("__sanitizer_get_allocated_size")
private func allocatedSize(_ pointer: UnsafeRawPointer?) -> Int

@_silgen_name("atexit")
private func atExit(_ function: @convention(c) () -> Void) -> CInt

// The hooks run inside malloc and free: they only touch atomics (initialized before the hooks
// are installed), never allocate.
private let onMalloc: @convention(c) (UnsafeRawPointer?, Int) -> Void = { _, size in
    let now = liveBytes.add(size, ordering: .relaxed).newValue
    guard metering.load(ordering: .relaxed) else { return }
    var peak = peakBytes.load(ordering: .relaxed)
    while now > peak {
        let (exchanged, original) = peakBytes.compareExchange(expected: peak, desired: now, ordering: .relaxed)
        if exchanged { break }
        peak = original
    }
}

private let onFree: @convention(c) (UnsafeRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    liveBytes.subtract(allocatedSize(pointer), ordering: .relaxed)
}

private let printWorst: @convention(c) () -> Void = {
    let ratio = worstRatio.load(ordering: .relaxed)
    print("allocation amplification: at most \(ratio / 1000).\(String(ratio % 1000 + 1000).dropFirst()) bytes per input byte"
          + " on inputs of 1 KiB or more (at \(worstSize.load(ordering: .relaxed)) bytes); the largest peak"
          + " \(largestGrowth.load(ordering: .relaxed)) bytes (an input of \(largestGrowthSize.load(ordering: .relaxed)) bytes);"
          + " limit \(amplificationLimit.bytesPerInputByte) per byte + \(amplificationLimit.fixedBytes) bytes")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func meteredFuzzInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if !hooksInstalled.exchange(true, ordering: .relaxed) {
        _ = liveBytes.load(ordering: .relaxed)
        _ = peakBytes.load(ordering: .relaxed)
        _ = worstRatio.load(ordering: .relaxed)
        _ = worstSize.load(ordering: .relaxed)
        _ = largestGrowth.load(ordering: .relaxed)
        _ = largestGrowthSize.load(ordering: .relaxed)
        _ = metering.load(ordering: .relaxed)
        _ = installAllocationHooks(onMalloc, onFree)
        _ = atExit(printWorst)
    }
    let before = liveBytes.load(ordering: .relaxed)
    peakBytes.store(before, ordering: .relaxed)
    let result = fuzzOneInput(data, size)
    let growth = peakBytes.load(ordering: .relaxed) - before
    if growth > largestGrowth.load(ordering: .relaxed) {
        largestGrowth.store(growth, ordering: .relaxed)
        largestGrowthSize.store(size, ordering: .relaxed)
    }
    if size >= 1024 {
        let ratio = growth * 1000 / size
        if ratio > worstRatio.load(ordering: .relaxed) {
            worstRatio.store(ratio, ordering: .relaxed)
            worstSize.store(size, ordering: .relaxed)
        }
    }
    let limit = amplificationLimit.bytesPerInputByte * size + amplificationLimit.fixedBytes
    if growth > limit {
        fatalError("property violated: an input of \(size) bytes made the readers hold \(growth) bytes at once, more than "
                   + "\(amplificationLimit.bytesPerInputByte) per input byte + \(amplificationLimit.fixedBytes)")
    }
    return result
}

/// Runs `body` without raising the peak: for a harness's own checks of what the package writes
/// (not a reader of the untrusted input). What `body` leaves allocated still counts afterwards.
func unmetered<Result>(_ body: () throws -> Result) rethrows -> Result {
    metering.store(false, ordering: .relaxed)
    defer { metering.store(true, ordering: .relaxed) }
    return try body()
}

/// What a harness allows one input to cost: `bytesPerInputByte` times its size, plus `fixedBytes`.
struct AmplificationLimit {
    var bytesPerInputByte: Int
    var fixedBytes: Int
}

/// Runs `work`, an input's reading through async API, to its end on the calling thread: libFuzzer
/// hands inputs over one at a time and synchronously.
func runToCompletion(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await work()
        done.signal()
    }
    done.wait()
}
