/// A first-in-first-out buffer with amortised O(1) `append` and `popFirst`, for the
/// consumer's message buffer and the stage runner's admission queue (the standard library has no
/// deque and we take no packages).
public struct FIFOBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0

    public init() {}

    /// The number of buffered elements.
    public var count: Int { storage.count - head }

    /// Whether nothing is buffered.
    public var isEmpty: Bool { head == storage.count }

    /// Appends at the back.
    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the front element.
    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes every element matching `predicate` and returns them in their original order.
    @discardableResult
    public mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        var kept: [Element?] = []
        var removed: [Element] = []
        kept.reserveCapacity(count)
        for index in head..<storage.count {
            guard let element = storage[index] else { continue }
            if predicate(element) { removed.append(element) } else { kept.append(element) }
        }
        storage = kept
        head = 0
        return removed
    }

    /// Drops everything.
    public mutating func removeAll() {
        storage.removeAll()
        head = 0
    }
}

extension FIFOBuffer: Sendable where Element: Sendable {}
