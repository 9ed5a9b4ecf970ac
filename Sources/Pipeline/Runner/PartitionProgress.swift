/// The offset bookkeeping of one partition: which admitted records are done, the contiguous
/// watermark, and the (serialised) storing of that watermark.
///
/// Records of a partition are admitted in offset order but may finish in any order. The
/// watermark is the highest admitted offset N such that every admitted record ≤ N is done; only
/// it is ever stored, so a crash never skips an unfinished record. Offsets need not be dense
/// (compaction and transaction markers leave gaps): only admitted offsets count.
///
/// Stores are serialised: at most one is in flight, and a newer watermark reached meanwhile is
/// stored right after it, so stored offsets never go backwards even though records finish on
/// many tasks.
struct PartitionProgress {
    /// An admitted record the watermark has not passed yet.
    private struct Admitted {
        let offset: Int64
        var done = false
    }

    /// In offset order, from `head`, the first the watermark has not passed; each with a done flag,
    /// so completing a record hashes nothing.
    private var admitted: [Admitted] = []
    private var head = 0

    /// Highest offset with everything admitted up to it done.
    private(set) var watermark: Int64?
    /// Last offset successfully stored.
    private(set) var stored: Int64?
    /// Offset currently being stored.
    private(set) var storing: Int64?

    /// Admitted records not yet passed by the watermark.
    var outstanding: Int { admitted.count - head }

    /// The last offset admitted (kept apart from `admitted`, which is trimmed).
    private(set) var lastAdmitted: Int64?

    /// Whether `offset` comes after everything admitted so far (a source re-delivering an
    /// already admitted offset within one assignment must not be admitted twice).
    func canAdmit(_ offset: Int64) -> Bool {
        lastAdmitted.map { $0 < offset } ?? true
    }

    /// Registers a record; offsets must increase (check ``canAdmit(_:)`` first).
    mutating func admit(_ offset: Int64) {
        precondition(canAdmit(offset), "offsets must be admitted in increasing order")
        admitted.append(Admitted(offset: offset))
        lastAdmitted = offset
    }

    /// Marks a record done. - Returns: whether the watermark advanced.
    mutating func complete(_ offset: Int64) -> Bool {
        guard let index = pendingIndex(of: offset) else { return false }
        admitted[index].done = true
        var advanced = false
        while head < admitted.count, admitted[head].done {
            watermark = admitted[head].offset
            head += 1
            advanced = true
        }
        if head > 1024 && head * 2 > admitted.count {
            admitted.removeFirst(head)
            head = 0
        }
        return advanced
    }

    /// Where `offset` is among the admitted records the watermark has not passed (a binary search:
    /// they are in offset order, and usually the first is the one), nil when it is none of them.
    private func pendingIndex(of offset: Int64) -> Int? {
        var low = head, high = admitted.count
        if low < high, admitted[low].offset == offset { return low }
        while low < high {
            let middle = (low + high) / 2
            if admitted[middle].offset < offset { low = middle + 1 } else { high = middle }
        }
        return low < admitted.count && admitted[low].offset == offset ? low : nil
    }

    /// Starts storing the watermark if it is ahead of what is stored and no store is in flight.
    /// - Returns: the offset the caller must now store.
    mutating func nextStore() -> Int64? {
        guard storing == nil, let watermark, watermark > (stored ?? Int64.min) else { return nil }
        storing = watermark
        return watermark
    }

    /// Records the end of the in-flight store.
    /// - Returns: the next offset to store (only after a success; a failure waits for the next
    ///   completion or flush, so a broken store is not retried in a hot loop).
    mutating func storeFinished(success: Bool) -> Int64? {
        if success, let storing { stored = storing }
        storing = nil
        return success ? nextStore() : nil
    }
}
