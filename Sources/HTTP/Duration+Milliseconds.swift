extension Duration {
    /// The duration in whole milliseconds, rounded up and clamped to `0...Int.max`, because C APIs
    /// (libcurl timeouts, poll) take millisecond integers and a sub-millisecond timeout must not become 0
    /// (which libcurl reads as "no timeout").
    var clampedMilliseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= Int64(Int.max / 1000) - 1 { return Int.max }
        let fromAtto = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(seconds) * 1000 + Int(fromAtto)
    }
}
