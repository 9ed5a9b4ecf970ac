import Foundation

/// One starting input of a fuzz target's corpus, with a readable name.
public struct FuzzSeed {
    /// File name in `corpus/<target>/` (sanitised when written).
    public var name: String
    /// The input bytes, in the target's input format.
    public var bytes: [UInt8]

    /// Creates a seed.
    /// - Parameters:
    ///   - name: A short descriptive file name.
    ///   - bytes: The input bytes.
    public init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }

    /// Creates a seed from text (its UTF-8 bytes).
    public init(_ name: String, text: String) {
        self.init(name, Array(text.utf8))
    }
}

/// A libFuzzer target: the code run on each input, and the seeds that start its corpus.
///
/// A target file declares one `FuzzTarget` and forwards the two libFuzzer hooks to it:
/// ```swift
/// let target = FuzzTarget(name: "FuzzExample", seeds: { [...] }) { input in ... }
/// @_cdecl("LLVMFuzzerInitialize")
/// public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
///     target.initialize()
/// }
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { target.run(data, size) }
/// ```
/// Keeping the seeds next to the code means the input format is defined in one place:
/// `make-corpus.sh` runs each target with ``seedsEnvironmentVariable`` set.
public struct FuzzTarget {
    /// When set to a directory, ``initialize()`` writes the seeds there and exits the process.
    public static let seedsEnvironmentVariable = "RECEIPTD_FUZZ_WRITE_SEEDS"

    /// The target's name (its SwiftPM target and corpus directory).
    public let name: String
    private let seeds: () -> [FuzzSeed]
    private let body: (UnsafeBufferPointer<UInt8>) -> Void

    /// Creates a target.
    /// - Parameters:
    ///   - name: The SwiftPM target name, e.g. `FuzzIngest`.
    ///   - seeds: Builds the seed inputs (called only by `make-corpus.sh`).
    ///   - body: Runs one input; reports a failed invariant through ``fuzzCheck(_:_:file:line:)``.
    public init(name: String, seeds: @escaping () -> [FuzzSeed], body: @escaping (UnsafeBufferPointer<UInt8>) -> Void) {
        self.name = name
        self.seeds = seeds
        self.body = body
    }

    /// The `LLVMFuzzerInitialize` hook: writes seeds and exits when asked, else warms up by running
    /// the empty input once (so lazily built verifiers and fixtures do not count as the first
    /// input's cost).
    /// - Returns: 0, as libFuzzer expects.
    public func initialize() -> CInt {
        if let directory = ProcessInfo.processInfo.environment[Self.seedsEnvironmentVariable] {
            let count = writeSeeds(to: URL(fileURLWithPath: directory))
            print("\(name): wrote \(count) seeds to \(directory)")
            exit(0)
        }
        run(nil, 0)
        return 0
    }

    /// The `LLVMFuzzerTestOneInput` hook.
    /// - Parameters:
    ///   - data: The input (may be `nil` when `size` is 0).
    ///   - size: Its length.
    /// - Returns: 0, as libFuzzer expects.
    @discardableResult
    public func run(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        body(UnsafeBufferPointer(start: size == 0 ? nil : data, count: size))
        return 0
    }

    /// Writes each distinct seed as one file; returns how many were written.
    private func writeSeeds(to directory: URL) -> Int {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var seen = Set<[UInt8]>()
        var names = Set<String>()
        for seed in seeds() where seen.insert(seed.bytes).inserted {
            var fileName = String(seed.name.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
            while !names.insert(fileName).inserted { fileName += "_" }
            let url = directory.appendingPathComponent(fileName)
            fuzzCheck(FileManager.default.createFile(atPath: url.path, contents: Data(seed.bytes)),
                      "cannot write \(url.path)")
        }
        return names.count
    }
}

/// Stops the process with a message when an invariant does not hold. libFuzzer treats the abort
/// as a crash and saves the input under `fuzz-artifacts/`.
/// - Parameters:
///   - condition: The invariant.
///   - message: What went wrong (printed to standard error).
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("receiptd fuzz invariant failed (\(file):\(line)): \(message())\n".utf8))
    abort()
}
