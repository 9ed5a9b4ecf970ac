/// Every topic name receiptd uses, defined once, with defaults and validation.
///
/// Flow: `submitted` → ingest → `ingested` → verify → `verified` → fulfil → `entitlementsChanged`
/// (and `ownerUpdates` → owners → `entitlementState`, the per-owner view; and
/// `consumptionRequests` → the backend → `consumptionAnswers` → consumption → `consumptionOutcomes`);
/// any stage may write `rejected`, `outcomes`, `deadLetter`, or a retry tier of its own input
/// (`<input>.retry.<n>`, e.g. `receipts.ingested.retry.1`). Decodes from JSON with every key
/// optional, so a config file names only what it changes.
public struct Topics: Sendable, Codable, Equatable {
    /// Input of ingest (`receipt-submitted/v1`).
    public var submitted: String
    /// Ingest → verify (`receipt-ingested/v1`, keyed by owner).
    public var ingested: String
    /// Verify → fulfil (`receipt-verified/v1`, keyed by `originalTransactionId`).
    public var verified: String
    /// Fulfil's output (`entitlement-changed/v2`, keyed by owner, co-partitioned with `verified`).
    public var entitlementsChanged: String
    /// Fulfil → owners (`owner-purchase/v1`, keyed `bundleId/userId/entitlement`).
    public var ownerUpdates: String
    /// The per-owner view (`entitlement-state/v1`, compacted, co-partitioned with `ownerUpdates`).
    public var entitlementState: String
    /// Permanent refusals of any stage (`receipt-rejected/v1`).
    public var rejected: String
    /// Deliberate ends without output (`receipt-outcome/v1`).
    public var outcomes: String
    /// Records a stage gave up on, byte for byte, with provenance headers (``RecordHeaders``).
    public var deadLetter: String
    /// Inserted between an input topic and the tier number to name a retry tier.
    public var retryInfix: String
    /// Fulfil → the backend: Apple's refund consumption requests (`consumption-request/v1`).
    public var consumptionRequests: String
    /// The backend → `receiptd consumption`: its answers (`consumption-answer/v1`).
    public var consumptionAnswers: String
    /// How each answer ended (`consumption-outcome/v1`).
    public var consumptionOutcomes: String

    /// Creates the topic set; every parameter defaults to the documented name.
    public init(submitted: String = "receipts.submitted", ingested: String = "receipts.ingested",
                verified: String = "receipts.verified", entitlementsChanged: String = "entitlements.changed",
                ownerUpdates: String = "entitlements.owner-updates", entitlementState: String = "entitlements.state",
                rejected: String = "receipts.rejected", outcomes: String = "receipts.outcomes",
                deadLetter: String = "receipts.dead-letter", retryInfix: String = ".retry.",
                consumptionRequests: String = "consumption.requests", consumptionAnswers: String = "consumption.answers",
                consumptionOutcomes: String = "consumption.outcomes") {
        self.submitted = submitted
        self.ingested = ingested
        self.verified = verified
        self.entitlementsChanged = entitlementsChanged
        self.ownerUpdates = ownerUpdates
        self.entitlementState = entitlementState
        self.rejected = rejected
        self.outcomes = outcomes
        self.deadLetter = deadLetter
        self.retryInfix = retryInfix
        self.consumptionRequests = consumptionRequests
        self.consumptionAnswers = consumptionAnswers
        self.consumptionOutcomes = consumptionOutcomes
    }

    /// The topic a stage consumes.
    public func input(of stage: StageName) -> String {
        switch stage {
        case .ingest: submitted
        case .verify: ingested
        case .fulfil: verified
        case .owners: ownerUpdates
        case .consumption: consumptionAnswers
        }
    }

    /// The topic an output role resolves to.
    public func output(_ topic: OutputTopic) -> String {
        switch topic {
        case .ingested: ingested
        case .verified: verified
        case .entitlementsChanged: entitlementsChanged
        case .ownerUpdates: ownerUpdates
        case .entitlementState: entitlementState
        case .consumptionRequests: consumptionRequests
        case .consumptionOutcomes: consumptionOutcomes
        }
    }

    /// The retry tier `tier` (1-based) of a stage's input, e.g. `receipts.ingested.retry.1`.
    public func retry(of stage: StageName, tier: Int) -> String {
        retryPrefix(of: stage) + String(tier)
    }

    /// What every retry tier of a stage's input starts with, e.g. `receipts.ingested.retry.`.
    public func retryPrefix(of stage: StageName) -> String {
        input(of: stage) + retryInfix
    }

    /// The tier number (1-based) if `topic` is a retry tier of `stage`'s input, else nil.
    public func retryTier(of topic: String, stage: StageName) -> Int? {
        let prefix = retryPrefix(of: stage)
        guard topic.hasPrefix(prefix), let tier = Int(topic.dropFirst(prefix.count)), tier >= 1,
              topic == retry(of: stage, tier: tier) else { return nil }
        return tier
    }

    /// What a stage worker subscribes to: its input followed by the first `retryTiers` retry
    /// tiers of it (one consumer group, one subscription).
    public func inputs(of stage: StageName, retryTiers: Int) -> [String] {
        [input(of: stage)] + (0..<max(0, retryTiers)).map { retry(of: stage, tier: $0 + 1) }
    }

    /// Every topic the pipeline uses with `retryTiers` tiers per stage: the main topics, then the
    /// tiers of each stage's input (what `receiptd broker` and workers create).
    public func allNames(retryTiers: Int) -> [String] {
        [submitted, ingested, verified, entitlementsChanged, ownerUpdates, entitlementState, rejected, outcomes, deadLetter,
         consumptionRequests, consumptionAnswers, consumptionOutcomes]
            + StageName.allCases.flatMap { inputs(of: $0, retryTiers: retryTiers).dropFirst() }
    }

    /// Topic settings receiptd needs when it creates a topic itself: the per-owner view is
    /// compacted (the newest state per key is all it must keep). `Deploy/create-topics.sh` says
    /// the same for real clusters, with retention for the others.
    public var creationConfigs: [String: [String: String]] {
        [entitlementState: ["cleanup.policy": "compact"]]
    }

    /// Checks every name is a legal Kafka topic name (1…249 of `[A-Za-z0-9._-]`, not `.`/`..`)
    /// and that the main topics are distinct.
    /// - Throws: ``PipelineConfigurationError`` naming the offending key.
    public func validate() throws {
        let named: [(String, String)] = [
            ("submitted", submitted), ("ingested", ingested), ("verified", verified),
            ("entitlementsChanged", entitlementsChanged), ("ownerUpdates", ownerUpdates),
            ("entitlementState", entitlementState), ("rejected", rejected), ("outcomes", outcomes),
            ("deadLetter", deadLetter), ("consumptionRequests", consumptionRequests),
            ("consumptionAnswers", consumptionAnswers), ("consumptionOutcomes", consumptionOutcomes),
        ]
        for (key, name) in named where !Self.isLegalTopicName(name) {
            throw PipelineConfigurationError("topics.\(key): \"\(name)\" is not a legal Kafka topic name "
                + "(1-249 characters of A-Z a-z 0-9 . _ -, not \".\" or \"..\")")
        }
        guard Self.isLegalTopicName("x" + retryInfix + "1") else {
            throw PipelineConfigurationError("topics.retryInfix: \"\(retryInfix)\" may only contain A-Z a-z 0-9 . _ -")
        }
        var seen: [String: String] = [:]
        for (key, name) in named {
            if let other = seen[name] {
                throw PipelineConfigurationError("topics.\(key) and topics.\(other) are both \"\(name)\"; each must be distinct")
            }
            seen[name] = key
        }
    }

    static func isLegalTopicName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 249, name != ".", name != ".." else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    private enum CodingKeys: String, CodingKey {
        case submitted, ingested, verified, entitlementsChanged, ownerUpdates, entitlementState, rejected, outcomes
        case deadLetter, retryInfix, consumptionRequests, consumptionAnswers, consumptionOutcomes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Topics()
        submitted = try c.decodeIfPresent(String.self, forKey: .submitted) ?? d.submitted
        ingested = try c.decodeIfPresent(String.self, forKey: .ingested) ?? d.ingested
        verified = try c.decodeIfPresent(String.self, forKey: .verified) ?? d.verified
        entitlementsChanged = try c.decodeIfPresent(String.self, forKey: .entitlementsChanged) ?? d.entitlementsChanged
        ownerUpdates = try c.decodeIfPresent(String.self, forKey: .ownerUpdates) ?? d.ownerUpdates
        entitlementState = try c.decodeIfPresent(String.self, forKey: .entitlementState) ?? d.entitlementState
        rejected = try c.decodeIfPresent(String.self, forKey: .rejected) ?? d.rejected
        outcomes = try c.decodeIfPresent(String.self, forKey: .outcomes) ?? d.outcomes
        deadLetter = try c.decodeIfPresent(String.self, forKey: .deadLetter) ?? d.deadLetter
        retryInfix = try c.decodeIfPresent(String.self, forKey: .retryInfix) ?? d.retryInfix
        consumptionRequests = try c.decodeIfPresent(String.self, forKey: .consumptionRequests) ?? d.consumptionRequests
        consumptionAnswers = try c.decodeIfPresent(String.self, forKey: .consumptionAnswers) ?? d.consumptionAnswers
        consumptionOutcomes = try c.decodeIfPresent(String.self, forKey: .consumptionOutcomes) ?? d.consumptionOutcomes
    }
}
