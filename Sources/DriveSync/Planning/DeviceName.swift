import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SyncOptions {
    /// The name conflict copies carry when the app gives none (``SyncOptions/deviceName``), read
    /// without a network request and without the main actor:
    ///
    /// - on macOS and Linux, the host name as `gethostname(3)` has it, up to its first dot
    ///   (`ada-laptop` for `ada-laptop.local`), `unnamed device` when it is empty or `localhost`;
    /// - on iPhone, iPad, Apple TV, Apple Watch and Vision Pro, the kind of device (`iPhone`,
    ///   `iPad`, `Apple TV`, `Apple Watch`, `Apple Vision Pro`), from the model identifier
    ///   `uname(3)` gives: the generic name `UIDevice.current.name` also returns from iOS 16 on
    ///   unless the app holds the user-assigned device name entitlement.
    ///
    /// An app should pass a name its user recognises, the one it paired the device with
    /// (`StationClient.pair(endpoint:deviceName:…)`) or one the user chose, rather than rely on
    /// this: two iPhones of one user both write `iPhone`. `ProcessInfo.hostName`, the default
    /// before, may wait on a DNS lookup, and on Apple's mobile systems names no device.
    public static var defaultDeviceName: String {
        DefaultDeviceName.make(hostName: DefaultDeviceName.systemHostName(), machine: DefaultDeviceName.systemMachine(),
                               simulatorModel: ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"],
                               isAppleMobile: DefaultDeviceName.isAppleMobile)
    }
}

/// How ``SyncOptions/defaultDeviceName`` is made, apart from the system calls that feed it, so that
/// every platform's answer is tested on Linux.
enum DefaultDeviceName {
    /// Whether this build is for iPhone, iPad, Apple TV, Apple Watch or Vision Pro, whose host names
    /// name no device (a Mac Catalyst app is a Mac's: it has one).
    static let isAppleMobile: Bool = {
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(tvOS) || os(watchOS) || os(visionOS)
        return true
        #else
        return false
        #endif
    }()

    /// The name for the inputs: the kind of device on Apple's mobile systems (from the simulator's
    /// model when there is one, the machine's otherwise), the short host name elsewhere.
    static func make(hostName: String?, machine: String?, simulatorModel: String?, isAppleMobile: Bool) -> String {
        if isAppleMobile {
            return [simulatorModel, machine].lazy.compactMap { $0.flatMap(kind(ofModel:)) }.first ?? "Apple device"
        }
        return shortHostName(hostName) ?? "unnamed device"
    }

    /// `name` up to its first dot, without surrounding blanks; `nil` when that is empty or `localhost`.
    static func shortHostName(_ name: String?) -> String? {
        guard let name else { return nil }
        let label = name.prefix { $0 != "." }.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !label.isEmpty, label.lowercased() != "localhost" else { return nil }
        return label
    }

    /// The kind of device a model identifier (`iPhone16,1`, `iPad14,2`, `Watch7,1`, `AppleTV14,1`,
    /// `RealityDevice14,1`) names; `nil` for any other (`arm64` on a simulator, a Mac's).
    static func kind(ofModel model: String) -> String? {
        let kinds = [("iPhone", "iPhone"), ("iPad", "iPad"), ("iPod", "iPod touch"), ("Watch", "Apple Watch"),
                     ("AppleTV", "Apple TV"), ("RealityDevice", "Apple Vision Pro")]
        return kinds.first { model.hasPrefix($0.0) }?.1
    }

    /// `gethostname(3)`: the kernel's host name, read without a lookup; `nil` when it fails.
    static func systemHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        // A name that filled the buffer may lack its NUL: the last byte stays 0.
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `uname(3)`'s machine: the model identifier on Apple's mobile devices (`iPhone16,1`), the
    /// architecture elsewhere; `nil` when it fails.
    static func systemMachine() -> String? {
        var info = utsname()
        guard uname(&info) == 0 else { return nil }
        return withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
