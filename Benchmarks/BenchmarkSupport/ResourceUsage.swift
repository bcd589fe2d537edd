#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the benchmarks measure of their own process, read once per figure.
public enum ResourceUsage {
    /// This process's `getrusage(RUSAGE_SELF)`.
    public static func current() -> rusage {
        var usage = rusage()
        #if os(Linux) || os(Android)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage
    }

    /// Peak resident memory of the process so far, in bytes (`ru_maxrss` counts KiB on Linux,
    /// bytes on Darwin).
    public static func peakResidentBytes() -> Int {
        #if canImport(Darwin)
        Int(current().ru_maxrss)
        #else
        Int(current().ru_maxrss) * 1024
        #endif
    }

    /// User and system CPU time so far, in seconds.
    public static func cpuSeconds() -> (user: Double, system: Double) {
        let usage = current()
        return (Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
                Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6)
    }
}
