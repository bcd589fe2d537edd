import Foundation

/// One timed operation. `run` performs the operation `iterations` times; the harness times whole
/// batches and reports the median per-operation time over the batches.
struct TimedOperation {
    let name: String
    /// Operations per batch, chosen so that a batch takes a few milliseconds.
    let iterations: Int
    let run: (_ iterations: Int) -> Void
}

/// Bytes per operation, for throughput benchmarks (reported as MB/s besides the time).
struct ThroughputBenchmark {
    let benchmark: TimedOperation
    let bytesPerOperation: Int
}

struct BenchmarkOptions {
    var json = false
    var filter: String?
    var batches = 31

    init(arguments: [String]) {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": json = true
            case "--filter": filter = rest.popFirst()
            case "--batches": batches = rest.popFirst().flatMap(Int.init) ?? batches
            case "--help", "-h":
                print("usage: cipher-bench [--json] [--filter PREFIX] [--batches N]")
                exit(0)
            default:
                FileHandle.standardError.write(Data("cipher-bench: unknown argument \(argument)\n".utf8))
                exit(2)
            }
        }
    }
}

func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Times `benchmark` and prints one line (or one JSON object) with the median µs per operation.
func measure(_ benchmark: TimedOperation, bytesPerOperation: Int? = nil, options: BenchmarkOptions) {
    if let filter = options.filter, !benchmark.name.hasPrefix(filter) { return }
    benchmark.run(max(1, benchmark.iterations / 4))  // warm caches and lazy state
    var perOperation = [Double]()
    for _ in 0..<options.batches {
        let start = monotonicNanoseconds()
        benchmark.run(benchmark.iterations)
        let elapsed = monotonicNanoseconds() - start
        perOperation.append(Double(elapsed) / 1000 / Double(benchmark.iterations))
    }
    perOperation.sort()
    let median = perOperation[perOperation.count / 2]
    let throughput = bytesPerOperation.map { Double($0) / median }  // bytes per µs = MB/s
    if options.json {
        var line = "{\"op\":\"\(benchmark.name)\",\"median_us\":\(rounded(median)),\"batches\":\(options.batches)"
        if let throughput { line += ",\"mb_per_s\":\(rounded(throughput))" }
        print(line + "}")
    } else {
        var line = benchmark.name.padding(toLength: 28, withPad: " ", startingAt: 0)
            + String(format: "median %10.2f µs", median)
        if let throughput { line += String(format: "   %8.1f MB/s", throughput) }
        print(line + "   (\(options.batches) batches of \(benchmark.iterations))")
    }
}

private func rounded(_ value: Double) -> String {
    String(format: "%.3f", value)
}

/// Keeps the optimizer from discarding a benchmark's result.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
