import Kafka
import Observability
import Pipeline
import Testing

/// The production wiring of a stage worker (``KafkaStageWorker``), checked without a broker; the
/// broker suites (EndToEnd, Rebalance, RetryTier, ...) run their stages through it.
@Suite struct KafkaStageWorkerTests {
    private func worker(maxInFlight: Int, processing: Duration = .seconds(30), grace: Duration = .seconds(25),
                        messageTimeout: Duration = .seconds(60), maxPollInterval: Duration = .seconds(300),
                        rebalanceTimeout: Duration? = nil) throws -> KafkaStageWorker<IngestStage> {
        var consumer = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"],
                                                  consumptionStrategy: .group(id: "g", topics: ["receipts.submitted"]))
        consumer.sessionTimeout = .seconds(6)
        consumer.maxPollInterval = maxPollInterval
        consumer.rebalanceTimeout = rebalanceTimeout
        var producer = KafkaProducerConfiguration(bootstrapServers: ["127.0.0.1:1"])
        producer.messageTimeout = messageTimeout
        return try KafkaStageWorker(stage: IngestStage(), consumer: consumer, producer: producer,
                                    configuration: StageRunnerConfiguration(maxInFlight: maxInFlight, processingTimeout: processing,
                                                                            shutdownGracePeriod: grace),
                                    logger: .disabled, metrics: MetricsRegistry())
    }

    @Test func rangeAssignmentAndABufferOfTwiceTheInFlightBound() async throws {
        let worker = try worker(maxInFlight: 300)
        #expect(worker.consumerConfiguration.partitionAssignmentStrategy == .range)
        #expect(worker.consumerConfiguration.maxBufferedMessages == 600)
        #expect(try self.worker(maxInFlight: 4).consumerConfiguration.maxBufferedMessages == 64)
        await worker.source.close()
        await worker.sink.close()
    }

    /// A revoked partition waits for its records' processing and their outputs' delivery.
    @Test func revocationWaitsForProcessingAndDelivery() async throws {
        let worker = try worker(maxInFlight: 8, processing: .seconds(30), messageTimeout: .seconds(60))
        #expect(worker.configuration.revocationTimeout == .seconds(95))
        let short = try self.worker(maxInFlight: 8, processing: .seconds(1), grace: .seconds(40), messageTimeout: .seconds(2))
        #expect(short.configuration.revocationTimeout == .seconds(40))
        // Never past the group's patience (the rebalance timeout less a heartbeat interval and 2 s):
        // later, the partitions are another member's while these records could still write.
        let impatient = try self.worker(maxInFlight: 8, maxPollInterval: .seconds(10))
        #expect(impatient.configuration.revocationTimeout == .seconds(5))
        // Brokers that wait less than max.poll.interval.ms (librdkafka's mock: a session less a
        // second) say so.
        let mock = try self.worker(maxInFlight: 8, maxPollInterval: .seconds(300), rebalanceTimeout: .seconds(9))
        #expect(mock.configuration.revocationTimeout == .seconds(4))
        for worker in [worker, short, impatient, mock] {
            await worker.source.close()
            await worker.sink.close()
        }
    }
}
