import Foundation

/// Transfer progress told in the file's bytes. The wire carries more than the file — the
/// multipart form around an upload, the SecretBox overhead around a download — so the wire's
/// figures are scaled down by that overhead: a 15-byte file reports 0…15, ending at 15.
enum FileProgress {
    /// `handler` fed with the file's bytes, from wire progress whose total exceeds the file's
    /// size by `overhead` bytes; `nil` when `handler` is.
    static func handler(_ handler: ProgressHandler?, wireOverhead overhead: Int64) -> ProgressHandler? {
        guard let handler else { return nil }
        return { wire in handler(fileBytes(of: wire, wireOverhead: overhead)) }
    }

    /// The file's share of `wire`: completed scaled by (total − overhead) / total when the total
    /// is known, else the bytes past the overhead.
    static func fileBytes(of wire: ByteProgress, wireOverhead overhead: Int64) -> ByteProgress {
        let overhead = max(0, overhead)
        guard let total = wire.total, total > 0 else {
            return ByteProgress(completed: max(0, wire.completed - overhead), total: nil)
        }
        let fileTotal = max(0, total - overhead)
        let done = min(max(0, wire.completed), total)
        let completed = done == total ? fileTotal : Int64((Double(done) / Double(total) * Double(fileTotal)).rounded(.down))
        return ByteProgress(completed: min(completed, fileTotal), total: fileTotal)
    }
}
