import Manifest

func manifestBenchmarks() -> [Benchmark] {
    let file = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 % 251) }
    let manifestBody = Array(#"{"clients":{"interop":{"posts":["#.utf8)
        + Array((0..<100).map { index in
            #"{"post_cid":"QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4","audience_mode":"all","envelopes_cid":"QmY2b52WrNZ8SSebVA1u5tbzLsoXQMYwLozZ6AnNH4Qe7c","envelopes_count":3,"created_at":\#(1_795_956_595 + index),"metadata":"320e7003c48a4f1e9b2c"}"#
        }.joined(separator: ",").utf8)
        + Array("]}}}".utf8)
    return [
        Benchmark(name: "manifest.cid.1MiB", iterations: 20) { n in
            for _ in 0..<n { blackHole(UnixFS.cid(of: file)) }
        },
        Benchmark(name: "manifest.decode.100posts", iterations: 200) { n in
            for _ in 0..<n { blackHole(try? WireJSON.decode(Manifest.self, from: manifestBody)) }
        },
    ]
}
