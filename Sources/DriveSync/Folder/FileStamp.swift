#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the sync knows of a local file without reading it: size, modification and change times
/// (microseconds since 1970), file number (inode) and device. Equal stamps mean an unchanged file:
/// a rewrite that keeps the size and sets the modification time back still moves the change time,
/// which no ordinary process can set.
struct FileStamp: Sendable, Hashable, Codable {
    var size: Int64
    var modified: Int64
    var fileNumber: UInt64
    /// `st_dev`; 0 in a stamp stored before it was recorded.
    var device: UInt64
    /// `st_ctime` in microseconds; 0 in a stamp stored before it was recorded.
    var changed: Int64

    init(size: Int64, modified: Int64, fileNumber: UInt64, device: UInt64, changed: Int64) {
        self.size = size
        self.modified = modified
        self.fileNumber = fileNumber
        self.device = device
        self.changed = changed
    }

    /// The stamp of what `stat`, `fstat` or `fstatat` reported.
    init(_ status: stat) {
        #if canImport(Darwin)
        let modified = status.st_mtimespec, changed = status.st_ctimespec
        #else
        let modified = status.st_mtim, changed = status.st_ctim
        #endif
        self.init(size: Int64(status.st_size),
                  modified: Self.microseconds(seconds: Int64(modified.tv_sec), nanoseconds: Int64(modified.tv_nsec)),
                  fileNumber: UInt64(truncatingIfNeeded: status.st_ino), device: UInt64(truncatingIfNeeded: status.st_dev),
                  changed: Self.microseconds(seconds: Int64(changed.tv_sec), nanoseconds: Int64(changed.tv_nsec)))
    }

    /// Whether `other` is the same file, unchanged, as far as a stamp tells.
    func matches(_ other: FileStamp) -> Bool {
        size == other.size && modified == other.modified && changed == other.changed && fileNumber == other.fileNumber
            && device == other.device
    }

    /// Microseconds since 1970, saturated: a file's time is the disk's data and may be anything.
    static func microseconds(seconds: Int64, nanoseconds: Int64) -> Int64 {
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, carried) = whole.addingReportingOverflow(nanoseconds / 1000)
        guard !carried else { return whole < 0 ? .min : .max }
        return total
    }

    enum CodingKeys: String, CodingKey {
        case size, modified, fileNumber, device, changed
    }
}

extension FileStamp {
    /// Reads a stored stamp; one stored before `device` and `changed` were recorded gets 0 for
    /// them, so it matches no file and the planner reads the file again.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(size: try container.decode(Int64.self, forKey: .size), modified: try container.decode(Int64.self, forKey: .modified),
                  fileNumber: try container.decode(UInt64.self, forKey: .fileNumber),
                  device: try container.decodeIfPresent(UInt64.self, forKey: .device) ?? 0,
                  changed: try container.decodeIfPresent(Int64.self, forKey: .changed) ?? 0)
    }
}
