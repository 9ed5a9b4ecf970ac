import Synchronization

/// The fake's seeded random source (SplitMix64 behind a lock), so a fault schedule is reproducible
/// from `--seed` (for a given order of requests; with rates 0 or 1 it is exact regardless of order).
final class FakeRandom: Sendable {
    private let state: Mutex<UInt64>

    init(seed: UInt64) {
        state = Mutex(seed)
    }

    /// The next 64 random bits.
    func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A uniform value in `0..<1` with 53 random bits.
    func unit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }
}
