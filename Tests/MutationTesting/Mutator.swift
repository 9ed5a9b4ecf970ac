/// A small, deterministic random number generator (SplitMix64), so that property tests replay
/// the same cases on every run and a failure names the seed and case that produced it.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    /// - Parameter seed: Any value.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One byte-level mutation, as libFuzzer's mutators do them.
public enum Mutation: String, CaseIterable, Sendable {
    /// Flip one bit.
    case bitFlip
    /// Keep only a prefix.
    case truncate
    /// Insert 1–8 bytes (random, or from the mutator's alphabet).
    case insert
    /// Repeat a slice of 1–16 bytes in place.
    case duplicate
    /// Remove a slice of 1–16 bytes.
    case delete
    /// Swap two of the separator-delimited segments (JWS segments, JSON members).
    case swapSegments
    /// Overwrite one byte with an alphabet byte.
    case replace
}

/// Applies seeded random ``Mutation``s to valid inputs.
public struct Mutator: Sendable {
    /// The byte that delimits segments for ``Mutation/swapSegments`` (`.` for JWS, `,` for JSON).
    public var separator: UInt8
    /// Bytes that are likely to matter to the parser under test (used half of the time).
    public var alphabet: [UInt8]

    /// Creates a mutator.
    /// - Parameters:
    ///   - separator: The segment delimiter.
    ///   - alphabet: Interesting bytes; default JSON punctuation, base64url characters and a few
    ///     control and non-ASCII bytes.
    public init(separator: UInt8, alphabet: [UInt8] = Array(#"{}[]":,.=\-_+/ 0aAzZ9"#.utf8) + [0x00, 0x0A, 0x7F, 0xC3, 0xFF]) {
        self.separator = separator
        self.alphabet = alphabet
    }

    /// Applies `count` random mutations.
    /// - Parameters:
    ///   - input: The input to mutate.
    ///   - count: How many mutations to apply in a row.
    ///   - generator: The source of randomness.
    /// - Returns: The mutated bytes and the mutations applied, in order.
    public func mutate(_ input: [UInt8], count: Int,
                       using generator: inout SeededGenerator) -> (bytes: [UInt8], mutations: [Mutation]) {
        var bytes = input
        var applied: [Mutation] = []
        for _ in 0..<count {
            let mutation = Mutation.allCases.randomElement(using: &generator)!
            bytes = apply(mutation, to: bytes, using: &generator)
            applied.append(mutation)
        }
        return (bytes, applied)
    }

    /// Applies one mutation (inputs too short for it come back unchanged or grown).
    public func apply(_ mutation: Mutation, to input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        func byte() -> UInt8 {
            Bool.random(using: &generator) ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
        }
        func slice() -> Range<Int>? {
            guard !bytes.isEmpty else { return nil }
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            return start..<min(bytes.count, start + Int.random(in: 1...16, using: &generator))
        }
        switch mutation {
        case .bitFlip:
            guard !bytes.isEmpty else { return [byte()] }
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
        case .truncate:
            bytes.removeLast(bytes.isEmpty ? 0 : Int.random(in: 1...bytes.count, using: &generator))
        case .insert:
            let at = Int.random(in: 0...bytes.count, using: &generator)
            bytes.insert(contentsOf: (0..<Int.random(in: 1...8, using: &generator)).map { _ in byte() }, at: at)
        case .duplicate:
            guard let range = slice() else { return [byte()] }
            bytes.insert(contentsOf: bytes[range], at: range.upperBound)
        case .delete:
            guard let range = slice() else { return bytes }
            bytes.removeSubrange(range)
        case .swapSegments:
            var segments = bytes.split(separator: separator, omittingEmptySubsequences: false).map(Array.init)
            guard segments.count >= 2 else { return bytes }
            let first = Int.random(in: 0..<segments.count, using: &generator)
            var second = Int.random(in: 0..<(segments.count - 1), using: &generator)
            if second >= first { second += 1 }
            segments.swapAt(first, second)
            bytes = Array(segments.joined(separator: [separator]))
        case .replace:
            guard !bytes.isEmpty else { return [byte()] }
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet.randomElement(using: &generator)!
        }
        return bytes
    }
}
