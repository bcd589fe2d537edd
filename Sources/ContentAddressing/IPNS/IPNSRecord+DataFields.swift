import Foundation

extension IPNSRecord {
    /// The fields of the signed DAG-CBOR `data` map.
    struct DataFields {
        var value: [UInt8]
        var validity: [UInt8]
        var validityType: UInt64
        var sequence: UInt64
        var ttl: UInt64?

        init(cbor bytes: [UInt8]) throws(IPNSRecordError) {
            var reader = CBOR.Reader(bytes: bytes)
            let (major, count) = try reader.head()
            guard major == 5 else { throw .malformed("data is not a CBOR map") }
            var value: [UInt8]?, validity: [UInt8]?, validityType: UInt64?, sequence: UInt64?, ttl: UInt64?
            var seen = Set<String>()
            for _ in 0..<count {
                let (keyMajor, keyLength) = try reader.head()
                guard keyMajor == 3 else { throw .malformed("data has a key that is not text") }
                guard let key = String(bytes: try reader.take(keyLength), encoding: .utf8) else {
                    throw .malformed("data has a key that is not UTF-8")
                }
                guard seen.insert(key).inserted else { throw .malformed("data repeats the key \(key)") }
                switch key {
                case "Value": value = try reader.byteString()
                case "Validity": validity = try reader.byteString()
                case "ValidityType": validityType = try reader.unsigned()
                case "Sequence": sequence = try reader.unsigned()
                case "TTL": ttl = try reader.unsigned()
                default: try reader.skip(depth: 0)
                }
            }
            guard reader.isAtEnd else { throw .malformed("bytes after the data map") }
            guard let value, let validity, let validityType, let sequence else {
                throw .malformed("data lacks Value, Validity, ValidityType or Sequence")
            }
            self.value = value
            self.validity = validity
            self.validityType = validityType
            self.sequence = sequence
            self.ttl = ttl
        }
    }
}
