/// Where one assigned partition's fetching must continue: the offset after the last message
/// polled from librdkafka. A polled message past it means fetching skipped offsets, which
/// librdkafka 2.0.2 can do after a partition is paused and resumed across a rebalance (a resume
/// continues from the position the partition had in an *earlier* assignment) and which nothing
/// downstream could notice: the skipped records would be committed over, unprocessed. So the
/// partition is sent back to that offset and what arrives before the seek took effect is dropped.
///
/// A gap can also be real (transaction markers, aborted transactions, compaction): when the first
/// message after the seek is again past the offset sought, the gap is accepted, and so are later
/// gaps of the partition in this assignment (a topic written in transactions has one per
/// transaction; checking each would cost a seek and a warning every time).
struct FetchPosition {
    enum Verdict: Equatable {
        /// Hand the message on.
        case accept
        /// Drop it: already polled in this assignment, or polled before a pending seek took effect.
        case drop
        /// Drop it and seek the partition back to this offset.
        case seek(Int64)
    }

    /// The offset the next message must have; nil until known (no committed offset, or a reader
    /// that starts at a logical offset such as the beginning).
    private(set) var next: Int64?
    /// A seek back to `next` was asked for and not performed yet.
    private var seekPending = false
    /// A seek back to `next` was performed: a message past it now is a real gap.
    private var sought = false
    /// A real gap was seen: the partition's gaps are not checked any more.
    private var toleratesGaps = false

    /// Whether a seek back to ``next`` is still to be performed.
    var awaitsSeek: Bool { seekPending }

    init(next: Int64? = nil) {
        self.next = next
    }

    /// Judges a polled message.
    mutating func accept(_ offset: Int64) -> Verdict {
        guard let expected = next, offset != expected else { return advance(past: offset) }
        if offset < expected { return .drop }
        if seekPending { return .drop }
        if sought || toleratesGaps {
            toleratesGaps = true
            return advance(past: offset)
        }
        seekPending = true
        return .seek(expected)
    }

    /// The seek was performed: the next message comes from the offset sought (or after a real gap).
    mutating func seekPerformed() {
        guard seekPending else { return }
        seekPending = false
        sought = true
    }

    /// The seek failed: the next message past `next` asks for it again.
    mutating func seekFailed() {
        seekPending = false
    }

    private mutating func advance(past offset: Int64) -> Verdict {
        if seekPending { return .drop }
        next = offset + 1
        sought = false
        return .accept
    }
}
