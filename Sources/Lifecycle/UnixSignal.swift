import Dispatch
import Foundation

/// POSIX signals as an `AsyncStream`, through `DispatchSource` (no handler runs in signal context).
public enum UnixSignal: Int32, Sendable, CustomStringConvertible {
    case sigint = 2
    case sigterm = 15

    public var description: String { self == .sigint ? "SIGINT" : "SIGTERM" }

    /// A stream yielding each delivery of the given signals. The default disposition of those
    /// signals is replaced (ignored) for the life of the process, so they no longer kill it.
    public static func stream(_ signals: [UnixSignal]) -> AsyncStream<UnixSignal> {
        AsyncStream { continuation in
            let queue = DispatchQueue(label: "receiptd.signals")
            var sources: [any DispatchSourceSignal] = []
            for sig in signals {
                signal(sig.rawValue, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig.rawValue, queue: queue)
                source.setEventHandler { continuation.yield(sig) }
                source.resume()
                sources.append(source)
            }
            let box = SourceBox(sources)
            continuation.onTermination = { _ in box.cancel() }
        }
    }

    private final class SourceBox: @unchecked Sendable {
        // Only touched at creation and in `cancel`, which AsyncStream calls once.
        let sources: [any DispatchSourceSignal]
        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
        func cancel() { sources.forEach { $0.cancel() } }
    }
}
