#if canImport(Security) && !canImport(FoundationNetworking)
import Foundation
import Security

/// Reads the certificates out of a server-trust object (Darwin only), DER, leaf first.
enum ServerTrustCertificates {
    static func chainDER(of trust: SecTrust) -> [[UInt8]] {
        let certificates: [SecCertificate]
        if #available(macOS 12.0, iOS 15.0, tvOS 15.0, watchOS 8.0, *) {
            certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        } else {
            certificates = (0..<SecTrustGetCertificateCount(trust)).compactMap { SecTrustGetCertificateAtIndex(trust, $0) }
        }
        return certificates.map { [UInt8](SecCertificateCopyData($0) as Data) }
    }
}
#endif
