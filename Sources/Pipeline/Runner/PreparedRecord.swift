import Observability

/// A record decoded, processed and routed: what it sends, and how it is accounted for once sent.
/// A class for the reason ``WorkItem`` is one: batches pass it along whole. Not nested in the
/// generic ``StageRunner`` (nothing here depends on the stage): a nested type is generic too, and
/// then its deinitializer, which no specialization reaches, looks up type metadata at run time.
final class PreparedRecord: Sendable {
    let item: WorkItem
    let scope: DeliveryScope
    let outbound: [OutboundRecord]
    let verdict: RecordVerdict
    let started: ContinuousClock.Instant
    let logger: Logger

    init(item: WorkItem, scope: DeliveryScope, outbound: [OutboundRecord], verdict: RecordVerdict,
         started: ContinuousClock.Instant, logger: Logger) {
        self.item = item
        self.scope = scope
        self.outbound = outbound
        self.verdict = verdict
        self.started = started
        self.logger = logger
    }
}
