// The signer's Keccak work in one two-state permutation: ExpandMask's streams for the attempts in
// order, and each attempt's challenge hash c̃ = H(μ ‖ w1Encode(w1), 48) in whichever state is free
// while the other runs ahead on the next attempt's mask (which is what the next attempt needs
// unless this one is accepted, about one attempt in five). The hash would otherwise run one state
// at a time, which costs nearly as much as two.

/// Runs ExpandMask (FIPS 204 Algorithm 34, γ1 = 2^19) for signing attempts 0, 1, 2, … and their
/// challenge hashes on a ``KeccakStateX2``.
///
/// Mask stream κ (the counter κ = 5·attempt + r) is polynomial r of attempt κ / 5's y,
/// the 20-bit unpacking of 640 bytes of SHAKE256(ρ'' ‖ κ as two bytes); its five output blocks
/// take five permutations. The y of attempts a and a + 1 live in two slots of `masks`, so a state
/// may run ahead one attempt, never two. Which stream runs when depends only on the attempt
/// count, never on secret values. The caller zeroes `masks` and `scratch`; ``clear()`` zeroes the
/// state.
struct MLDSAMaskSchedule {
    static let n = MLDSA65Parameters.n
    static let l = MLDSA65Parameters.l
    static let rate = MLDSASampling.shake256Rate
    static let blocksPerStream = 5  // 680 bytes ≥ 640
    static let seedLength = 66
    static let outputBytes = blocksPerStream * rate
    /// Scratch bytes the schedule needs: a seed and a stream's output per state, and a block for
    /// SampleInBall.
    static let scratchBytes = 2 * (seedLength + outputBytes) + rate
    /// Polynomials of `masks`: two attempts' y.
    static let maskPolynomials = 2 * MLDSA65Parameters.l

    var state = KeccakStateX2()
    /// Per state: the mask counter it runs, `idle`, or `hashing`.
    var job = MLDSAIntPair(idle, idle)
    /// Per state: output blocks of its mask stream so far.
    var blocks = MLDSAIntPair(0, 0)
    /// Per slot of `masks`: finished polynomials of that slot's attempt.
    var finished = MLDSAIntPair(0, 0)
    /// The next mask counter no state has started.
    var nextCounter = 0
    let rhoDoublePrime: UnsafeRawPointer
    let masks: UnsafeMutablePointer<Int32>
    let scratch: UnsafeMutableRawPointer

    static let idle = -1
    static let hashing = -2

    /// `rhoDoublePrime` is ρ'' (64 bytes), `masks` holds ``maskPolynomials`` polynomials and
    /// `scratch` ``scratchBytes`` bytes.
    init(rhoDoublePrime: UnsafeRawPointer, masks: UnsafeMutablePointer<Int32>, scratch: UnsafeMutableRawPointer) {
        self.rhoDoublePrime = rhoDoublePrime
        self.masks = masks
        self.scratch = scratch
    }

    /// y of `attempt` (l polynomials), complete after ``fill(attempt:)``.
    func mask(attempt: Int) -> UnsafeMutablePointer<Int32> {
        masks + (attempt & 1) &* Self.l &* Self.n
    }

    /// Runs the streams until attempt `attempt`'s y is complete. Attempts are filled in order.
    mutating func fill(attempt: Int) {
        while finished[attempt & 1] < Self.l {
            startIdleStates(limit: Self.l &* (attempt &+ 2))
            step()
        }
    }

    /// c̃ = H(`message`, 48) for the 832-byte μ ‖ w1Encode(w1), in a free state, while the other runs
    /// mask streams for the attempt after `attempt` (the attempt whose y was filled last).
    mutating func challengeHash(
        attempt: Int, message: UnsafeRawBufferPointer, into challenge: UnsafeMutableRawBufferPointer
    ) {
        guard let bytes = message.baseAddress, let out = challenge.baseAddress,
              challenge.count % 8 == 0, challenge.count <= Self.rate
        else { preconditionFailure("the challenge hash's buffers") }
        // fill(attempt:) returns right after a stream ended, so some state is idle.
        let lane = job[0] == Self.idle ? 0 : 1
        precondition(job[lane] == Self.idle, "a state is free after fill")
        job[lane] = Self.hashing
        state.clear(state: lane)
        var offset = 0
        var padded = false
        while !padded {
            if message.count &- offset >= Self.rate {
                for i in 0..<(Self.rate / 8) {
                    state.xorWord(i, state: lane, UInt64(littleEndian: bytes.loadUnaligned(
                        fromByteOffset: offset &+ 8 &* i, as: UInt64.self)))
                }
                offset &+= Self.rate
            } else {
                KeccakSpongeX2.absorbPadded(
                    &state, lane: lane, UnsafeRawBufferPointer(rebasing: message[offset...]), rate: Self.rate)
                padded = true
            }
            startIdleStates(limit: Self.l &* (attempt &+ 2))
            step()
        }
        for i in 0..<(challenge.count / 8) {
            out.storeBytes(of: state.word(i, state: lane).littleEndian, toByteOffset: 8 &* i, as: UInt64.self)
        }
        job[lane] = Self.idle
    }

    /// c = SampleInBall(c̃) (FIPS 204 Algorithm 29: τ = 49 coefficients ±1, the rest 0) from the
    /// SHAKE256 stream of the 48-byte c̃, in a free state while the other runs mask streams for the
    /// attempt after `attempt`, as ``challengeHash(attempt:message:into:)`` does.
    ///
    /// c̃ is a hash output; for a rejected attempt it is never revealed, but learning it does not
    /// help an attacker (it is a random-oracle value independent of the key given w1), so the
    /// positions drawn here may steer memory accesses, as in the reference implementations.
    ///
    /// Also lists c's τ nonzero positions in `positions` (any order): each step makes one more
    /// coefficient nonzero, j when c_j was zero, i otherwise.
    mutating func sampleInBall(
        attempt: Int, challenge: UnsafeRawBufferPointer, into c: UnsafeMutablePointer<Int32>,
        positions: UnsafeMutablePointer<Int>
    ) {
        let n = Self.n, limit = Self.l &* (attempt &+ 2)
        c.initialize(repeating: 0, count: n)
        let lane = job[0] == Self.idle ? 0 : 1
        precondition(job[lane] == Self.idle, "a state is free after the challenge hash")
        job[lane] = Self.hashing
        state.clear(state: lane)
        KeccakSpongeX2.absorbPadded(&state, lane: lane, challenge, rate: Self.rate)
        let block = scratch + 2 &* (Self.seedLength &+ Self.outputBytes)
        let bytes = block.assumingMemoryBound(to: UInt8.self)
        func nextBlock() {
            startIdleStates(limit: limit)
            step()
            for i in 0..<(Self.rate / 8) {
                block.storeBytes(of: state.word(i, state: lane).littleEndian, toByteOffset: 8 &* i, as: UInt64.self)
            }
        }
        nextBlock()
        var signs = UInt64(littleEndian: block.loadUnaligned(as: UInt64.self))
        var position = 8
        for i in (n &- MLDSA65Parameters.tau)..<n {
            var j: Int
            repeat {
                if position == Self.rate {
                    nextBlock()
                    position = 0
                }
                j = Int(bytes[position])
                position &+= 1
            } while j > i
            let previous = c[j]
            c[i] = previous
            c[j] = 1 &- 2 &* Int32(truncatingIfNeeded: signs & 1)
            signs &>>= 1
            // previous is −1, 0 or 1: pick j when it is 0, without a branch.
            let wasZero = Int(MLDSAField.isZeroMask(previous))  // all ones or zero
            positions[i &- (n &- MLDSA65Parameters.tau)] = (j & wasZero) | (i & ~wasZero)
        }
        job[lane] = Self.idle
    }

    /// Starts the next mask streams, below counter `limit`, in the idle states.
    mutating func startIdleStates(limit: Int) {
        for lane in 0..<2 where job[lane] == Self.idle && nextCounter < limit {
            let counter = nextCounter
            nextCounter &+= 1
            if counter % Self.l == 0 { finished[(counter / Self.l) & 1] = 0 }
            let seed = scratch + lane &* Self.seedLength
            seed.copyMemory(from: rhoDoublePrime, byteCount: 64)
            seed.storeBytes(of: UInt8(truncatingIfNeeded: counter), toByteOffset: 64, as: UInt8.self)
            seed.storeBytes(of: UInt8(truncatingIfNeeded: counter >> 8), toByteOffset: 65, as: UInt8.self)
            state.clear(state: lane)
            KeccakSpongeX2.absorbPadded(
                &state, lane: lane, UnsafeRawBufferPointer(start: seed, count: Self.seedLength), rate: Self.rate)
            job[lane] = counter
            blocks[lane] = 0
        }
    }

    /// One permutation of both states; each mask stream takes its next output block, and a stream
    /// with all five is unpacked into its polynomial.
    mutating func step() {
        state.permute()
        for lane in 0..<2 where job[lane] >= 0 {
            let output = scratch + 2 &* Self.seedLength + lane &* Self.outputBytes
            let offset = blocks[lane] &* Self.rate
            for i in 0..<(Self.rate / 8) {
                output.storeBytes(of: state.word(i, state: lane).littleEndian, toByteOffset: offset &+ 8 &* i,
                                  as: UInt64.self)
            }
            blocks[lane] &+= 1
            guard blocks[lane] == Self.blocksPerStream else { continue }
            let counter = job[lane]
            let attempt = counter / Self.l, r = counter % Self.l
            MLDSAEncoding.unpackZ(output.assumingMemoryBound(to: UInt8.self),
                                  into: masks + ((attempt & 1) &* Self.l &+ r) &* Self.n)
            finished[attempt & 1] &+= 1
            job[lane] = Self.idle
        }
    }

    /// Zeroes both states.
    mutating func clear() {
        for i in 0..<25 { state.lanes[i] = SIMD2(repeating: 0) }
    }
}

/// Two `Int`s stored in place and indexed like an `InlineArray<2, Int>`.
struct MLDSAIntPair: InlineElements {
    typealias Element = Int
    var storage: (Int, Int)

    init(_ first: Int, _ second: Int) {
        storage = (first, second)
    }
}
