import Foundation
import Testing
@testable import DriveSync

/// The device name conflict copies carry when the app gives none: made without a DNS lookup, on
/// every platform from the same inputs, so each platform's answer is checked here.
@Suite("Default device name")
struct DeviceNameTests {
    /// macOS and Linux: the host name up to its first dot; a missing, empty or `localhost` one
    /// gives `unnamed device`.
    @Test func aComputerIsNamedByItsShortHostName() {
        func name(_ hostName: String?) -> String {
            DefaultDeviceName.make(hostName: hostName, machine: "x86_64", simulatorModel: nil, isAppleMobile: false)
        }
        #expect(name("ada-laptop.local") == "ada-laptop")
        #expect(name("build-7.ci.example.com") == "build-7")
        #expect(name("nas") == "nas")
        #expect(name(" spaced \n") == "spaced")
        for nameless in [nil, "", ".local", "localhost", "LOCALHOST.localdomain"] {
            #expect(name(nameless) == "unnamed device", "\(String(describing: nameless))")
        }
    }

    /// iPhone, iPad, Apple TV, Apple Watch and Vision Pro: the kind of device from the model
    /// identifier (a simulator's from its environment, its machine being the Mac's architecture),
    /// never the host name.
    @Test func anAppleMobileDeviceIsNamedByItsKind() {
        func name(machine: String?, simulatorModel: String? = nil) -> String {
            DefaultDeviceName.make(hostName: "Adas-iPhone.local", machine: machine, simulatorModel: simulatorModel, isAppleMobile: true)
        }
        #expect(name(machine: "iPhone16,1") == "iPhone")
        #expect(name(machine: "iPad14,2") == "iPad")
        #expect(name(machine: "iPod9,1") == "iPod touch")
        #expect(name(machine: "Watch7,1") == "Apple Watch")
        #expect(name(machine: "AppleTV14,1") == "Apple TV")
        #expect(name(machine: "RealityDevice14,1") == "Apple Vision Pro")
        #expect(name(machine: "arm64", simulatorModel: "iPad16,3") == "iPad")
        #expect(name(machine: "arm64") == "Apple device")
        #expect(name(machine: nil) == "Apple device")
    }

    /// What this machine gives, through the system calls: a short name, and the options take it
    /// when the app passes none (a name it passes is kept as given).
    @Test func theOptionsUseItWhenGivenNone() throws {
        let made = SyncOptions.defaultDeviceName
        #expect(!made.isEmpty && !made.contains("."))
        #if os(Linux) || os(macOS)
        let host = try #require(DefaultDeviceName.systemHostName())
        #expect(made == DefaultDeviceName.shortHostName(host) ?? "unnamed device")
        #expect(!DefaultDeviceName.isAppleMobile)
        #endif
        #expect(try #require(DefaultDeviceName.systemMachine()).isEmpty == false)
        #expect(SyncOptions().deviceName == made)
        #expect(SyncOptions(deviceName: nil).deviceName == made)
        #expect(SyncOptions(deviceName: "Ada's laptop").deviceName == "Ada's laptop")
    }
}
