/// How handling a record ended.
enum RecordCompletion: Sendable {
    /// Everything it produced is acknowledged: the record is done.
    case processed
    /// Cancelled before it could finish (shutdown): not done, will be redelivered.
    case abandoned
    /// Its outputs could not be delivered: not done, and the runner must stop.
    case deliveryFailed(any Error)
}
