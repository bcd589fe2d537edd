// cipher-bench: median time per operation for the SDK's hot paths.
// Run with `swift run -c release cipher-bench [--json] [--filter PREFIX]`; Benchmarks/compare.sh
// runs it next to the OpenSSL/PyNaCl comparators and prints the ratios.
import Foundation

let options = BenchmarkOptions(arguments: CommandLine.arguments)
for benchmark in keccakBenchmarks() + mlkemBenchmarks() + mldsaBenchmarks() + manifestBenchmarks() {
    measure(benchmark, options: options)
}
runClassicalCryptoBenchmarks(options: options)
runPortableBenchmarks(options: options)
#if canImport(CCurl)
runTransportBenchmarks(options: options)
#endif
