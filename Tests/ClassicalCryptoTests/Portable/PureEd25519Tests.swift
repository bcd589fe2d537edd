import ClassicalCrypto
import PQCrypto
import TestSupport
import Testing

/// The pure-Swift Ed25519 against RFC 8032 and Wycheproof (in every build) and libsodium 1.0.18's
/// keys, signatures and verdicts (where it is linked).
@Suite("Pure-Swift Ed25519")
struct PureEd25519Tests {
    static func publicKey(seed: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 32)
        let ok = seed.withUnsafeBytes { s in output.withUnsafeMutableBytes { Ed25519Core.publicKey(seed: s, into: $0) } }
        return ok ? output : nil
    }

    static func sign(_ message: [UInt8], seed: [UInt8], publicKey: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 64)
        let ok = message.withUnsafeBytes { m in
            seed.withUnsafeBytes { s in
                publicKey.withUnsafeBytes { p in output.withUnsafeMutableBytes { Ed25519Core.sign(message: m, seed: s, publicKey: p, into: $0) } }
            }
        }
        return ok ? output : nil
    }

    static func verify(_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) -> Bool {
        signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in publicKey.withUnsafeBytes { Ed25519Core.verify(signature: s, message: m, publicKey: $0) } }
        }
    }

    /// The eight points of small order, each with both sign bits where that gives another
    /// encoding, and encodings of y ≥ p: what libsodium refuses as R or as a public key.
    static let smallOrderAndNonCanonical: [[UInt8]] = [
        "0100000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000080",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ].map { (try? [UInt8](hex: $0)) ?? [] }

    /// RFC 8032 §7.1 TEST 1, 2 and 3: keys and signatures byte for byte.
    @Test func rfc8032Vectors() throws {
        let cases: [(seed: String, publicKey: String, message: String, signature: String)] = [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
            ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
             "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
             "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        ]
        for item in cases {
            let seed = try [UInt8](hex: item.seed), message = try [UInt8](hex: item.message)
            let publicKey = try #require(Self.publicKey(seed: seed))
            #expect(publicKey.hex == item.publicKey)
            let signature = try #require(Self.sign(message, seed: seed, publicKey: publicKey))
            #expect(signature.hex == item.signature)
            #expect(Self.verify(signature, message, publicKey))
            #expect(!Self.verify(signature, message + [0], publicKey))
        }
    }

    /// Wycheproof's 151 cases: the pure verifier and the public API (libsodium where linked) give
    /// Wycheproof's verdict on every one. (libsodium 1.0.18 and Wycheproof agree on every case of
    /// this file, so no case needs libsodium's verdict instead; wrong-size signatures are refused.)
    @Test func wycheproofVerdicts() throws {
        struct File: Decodable {
            struct Group: Decodable {
                struct Key: Decodable { let pk: String }
                struct Case: Decodable { let tcId: Int; let msg: String; let sig: String; let result: String }
                let publicKey: Key
                let tests: [Case]
            }
            let testGroups: [Group]
        }
        let file = try loadResource("wycheproof/ed25519_test.json", as: File.self)
        var count = 0, valid = 0
        for group in file.testGroups {
            let publicKey = try [UInt8](hex: group.publicKey.pk)
            for test in group.tests {
                let message = try [UInt8](hex: test.msg), signature = try [UInt8](hex: test.sig)
                let expected = test.result == "valid"
                #expect(Self.verify(signature, message, publicKey) == expected, "tcId \(test.tcId)")
                #expect(Ed25519.isValidSignature(signature, for: message, publicKey: publicKey) == expected, "tcId \(test.tcId)")
                count += 1
                if expected { valid += 1 }
            }
        }
        #expect(count == 151)
        #expect(valid == 88)
    }

    /// Wrong sizes are refused without a trap; small-order and non-canonical R and public keys
    /// never verify.
    @Test func refusesBadInput() throws {
        #expect(Self.publicKey(seed: [UInt8](repeating: 1, count: 31)) == nil)
        let seed = [UInt8](repeating: 4, count: 32)
        let publicKey = try #require(Self.publicKey(seed: seed))
        #expect(Self.sign([1], seed: seed, publicKey: Array(publicKey.dropLast())) == nil)
        let signature = try #require(Self.sign([1], seed: seed, publicKey: publicKey))
        #expect(!Self.verify(Array(signature.dropLast()), [1], publicKey))
        #expect(!Self.verify(signature, [1], Array(publicKey.dropLast())))
        #expect(!Self.verify([], [], []))
        for point in Self.smallOrderAndNonCanonical {
            #expect(!Self.verify(point + signature[32...], [1], publicKey), "R \(point.hex)")
            #expect(!Self.verify(point + [UInt8](repeating: 0, count: 32), [1], point), "R = A = \(point.hex)")
        }
    }

    /// Random seeds and messages of 0 to 70,000 bytes: libsodium's public keys and signatures;
    /// tampered signatures (R, S, message, key bits; S + L; S with its top bits set; small-order
    /// and non-canonical R and keys) get libsodium's verdict.
    @Test(.enabled(if: DifferentialInputs.comparable)) func differentialAgainstLibsodium() throws {
        var generator = SplitMix64(seed: DifferentialInputs.seed ^ 0xed)
        let order: [UInt8] = (try? [UInt8](hex: "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")) ?? []
        func addOrder(_ s: ArraySlice<UInt8>) -> [UInt8] {
            var carry = 0
            return zip(s, order).map { a, b in
                let sum = Int(a) + Int(b) + carry
                carry = sum >> 8
                return UInt8(truncatingIfNeeded: sum)
            }
        }
        var verdicts = 0
        for index in 0..<DifferentialInputs.count {
            let seed = generator.bytes(32)
            let message = generator.bytes(DifferentialInputs.length(index, using: &generator))
            let key = try Ed25519.PrivateKey(seed: SymmetricKey(data: seed))
            let publicKey = try #require(Self.publicKey(seed: seed))
            #expect(publicKey == key.publicKey, "seed \(seed.hex)")
            let signature = try #require(Self.sign(message, seed: seed, publicKey: publicKey))
            #expect(signature == key.signature(for: message), "input \(index), seed \(DifferentialInputs.seed)")

            var variants: [(signature: [UInt8], message: [UInt8], publicKey: [UInt8])] = [(signature, message, publicKey)]
            var flipped = signature
            flipped[Int.random(in: 0...63, using: &generator)] ^= UInt8(1) << UInt8(Int.random(in: 0...7, using: &generator))
            variants.append((flipped, message, publicKey))
            var otherKey = publicKey
            otherKey[Int.random(in: 0...31, using: &generator)] ^= UInt8(1) << UInt8(Int.random(in: 0...7, using: &generator))
            variants.append((signature, message, otherKey))
            variants.append((signature, message + [0x01], publicKey))
            variants.append((Array(signature[0..<32]) + addOrder(signature[32...]), message, publicKey))
            var highS = signature
            highS[63] |= [0x20, 0x40, 0x80][index % 3]
            variants.append((highS, message, publicKey))
            let point = Self.smallOrderAndNonCanonical[index % Self.smallOrderAndNonCanonical.count]
            variants.append((point + signature[32...], message, publicKey))
            variants.append((signature, message, point))
            variants.append((generator.bytes(64), message, generator.bytes(32)))
            for variant in variants {
                let system = Ed25519.isValidSignature(variant.signature, for: variant.message, publicKey: variant.publicKey)
                #expect(Self.verify(variant.signature, variant.message, variant.publicKey) == system,
                        "input \(index): signature \(variant.signature.hex) key \(variant.publicKey.hex)")
                verdicts += 1
            }
        }
        #expect(verdicts == 9 * DifferentialInputs.count)
    }
}
