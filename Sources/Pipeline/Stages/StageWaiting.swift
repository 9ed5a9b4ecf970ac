/// What a stage's `process` may wait on. The runner runs the records of a stage that waits on
/// nothing but computation or earlier records' deliveries in batches (several records per task,
/// their outputs in one send); a stage that may wait on the outside gets a task per record under
/// the processing timeout, so one slow call holds up no other record.
public enum StageWaiting: Sendable {
    /// Nothing: `process` only computes (ingest).
    case nothing
    /// Only the delivery of earlier records, through a state store that calls
    /// ``DeliveryScope/beforeWaiting()`` first (fulfil's ledger, the owner view). Such a wait ends
    /// when those outputs are acknowledged (or fail, which stops the runner), so no timeout applies.
    case deliveries
    /// Anything, a network call included (verify): a task per record under the processing timeout.
    case outside
}
