#if canImport(CCurl)
import CCurl
import Foundation

/// Typed setters over the shim's fixed-arity `curl_easy_setopt` wrappers. A failing option is
/// reported as a message naming it, because a handle with a missing option must not run.
struct CurlOptions {
    let handle: OpaquePointer
    var failures: [String] = []

    init(_ handle: OpaquePointer) { self.handle = handle }

    mutating func set(_ option: CURLoption, _ value: Int, _ name: StaticString) {
        check(ccurl_easy_setopt_long(handle, option, value), name)
    }

    mutating func set(_ option: CURLoption, offset value: Int64, _ name: StaticString) {
        check(ccurl_easy_setopt_off_t(handle, option, curl_off_t(value)), name)
    }

    mutating func set(_ option: CURLoption, string value: String, _ name: StaticString) {
        check(ccurl_easy_setopt_string(handle, option, value), name)
    }

    mutating func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?, _ name: StaticString) {
        check(ccurl_easy_setopt_pointer(handle, option, value), name)
    }

    mutating func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?, _ name: StaticString) {
        check(ccurl_easy_setopt_slist(handle, option, value), name)
    }

    mutating func check(_ code: CURLcode, _ name: StaticString) {
        if code != CURLE_OK { failures.append("\(name): \(String(cString: curl_easy_strerror(code)))") }
    }

    /// Seconds as whole milliseconds, at least 1 so that a tiny positive limit is not "no limit".
    static func milliseconds(_ seconds: TimeInterval) -> Int {
        max(1, Int(min(seconds, 1e9) * 1000))
    }
}
#endif
