import PQCrypto

func keccakBenchmarks() -> [TimedOperation] {
    let input = [UInt8](repeating: 0xA5, count: 1184)
    return [
        TimedOperation(name: "sha3_256.1184B", iterations: 2000) { n in
            for _ in 0..<n { blackHole(SHA3_256.hash(data: input)) }
        },
        TimedOperation(name: "shake128.block", iterations: 20000) { n in
            var xof = SHAKE128()
            xof.update(data: input)
            var reader = xof.finalize()
            var block = [UInt8](repeating: 0, count: 168)
            for _ in 0..<n { block.withUnsafeMutableBytes { reader.read(into: $0) } }
            blackHole(block)
        },
    ]
}
