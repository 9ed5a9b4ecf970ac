import Kafka

/// Publishes submissions to `receipts.submitted` for the demo and chaos runs: in the order given,
/// except those that wait for another submission's verdict (``SubmissionSchedule``), and tells
/// the tally where each landed so it can attribute verdicts that carry only a position.
struct SubmissionPublisher {
    private let producer: KafkaProducer
    private let topic: String
    private let tally: OutcomeTally
    private var schedule = SubmissionSchedule()
    /// Submissions sent so far.
    private(set) var published = 0

    init(producer: KafkaProducer, topic: String, tally: OutcomeTally) {
        self.producer = producer
        self.topic = topic
        self.tally = tally
    }

    /// Submissions held back, waiting for a verdict.
    var waiting: Int { schedule.waitingCount }

    /// Sends `submissions`, holding back those that must wait.
    mutating func submit(_ submissions: [SubmissionGenerator.Submission]) async throws {
        let tally = tally
        try await send(schedule.admit(submissions) { tally.settled($0) })
    }

    /// Sends the held-back submissions whose prerequisite has a verdict now.
    /// - Returns: how many were sent.
    @discardableResult
    mutating func releaseSettled() async throws -> Int {
        let tally = tally
        let ready = schedule.release { tally.settled($0) }
        try await send(ready)
        return ready.count
    }

    /// Sends everything still held back.
    mutating func releaseAll() async throws {
        try await send(schedule.releaseAll())
    }

    private mutating func send(_ batch: [SubmissionGenerator.Submission]) async throws {
        for chunk in stride(from: 0, to: batch.count, by: 1000) {
            let slice = batch[chunk..<min(chunk + 1000, batch.count)]
            let reports = try await producer.sendAll(slice.map { submission in
                KafkaProducerMessage(topic: topic, key: Array(submission.key.utf8), value: submission.value)
            })
            tally.register(origins: zip(reports, slice).map { report, submission in
                ("\(report.topic)/\(report.partition)/\(report.offset)", submission.submissionId)
            })
            published += slice.count
        }
    }
}
