import CRdKafka

/// The Swift steps of a group rebalance, called in order from librdkafka's rebalance
/// callback on the consumer's poll thread.
///
/// On assignment: `assign` (eager or incremental), then ``assigned``.
/// On revocation: ``revoking`` (the consumer drops buffered messages of those partitions and
/// runs the application's revoke hook), a resume of those it had paused, then a synchronous commit of stored offsets (unless
/// the assignment was lost), then `unassign`, then ``revoked``.
struct RDKafkaRebalanceHandlers: Sendable {
    /// The partitions were added to the assignment, with the offsets fetching starts at where
    /// known (the group's committed offsets).
    var assigned: @Sendable ([KafkaTopicPartition], [KafkaTopicPartition: Int64]) -> Void
    /// The partitions are about to be revoked (the flag: the assignment was lost); their offsets
    /// have not been committed yet. Returns those of them the consumer has paused in librdkafka
    /// (to be resumed before unassign).
    var revoking: @Sendable ([KafkaTopicPartition], _ lost: Bool) -> [KafkaTopicPartition]
    /// The partitions left the assignment.
    var revoked: @Sendable ([KafkaTopicPartition]) -> Void
    /// A step of the rebalance failed.
    var error: @Sendable (KafkaError) -> Void
}

/// librdkafka's `rebalance_cb`. A free function capturing nothing: the handlers come through
/// the configuration opaque (see ``RDKafkaCallbackContext``).
func rdKafkaRebalanceCallback(
    _ rk: OpaquePointer?,
    _ reason: rd_kafka_resp_err_t,
    _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let rk, let partitions, let handlers = RDKafkaCallbackContext.from(opaque)?.rebalance else { return }
    let topicPartitions = partitions.topicPartitions
    let isCooperative = rd_kafka_rebalance_protocol(rk).map { String(cString: $0) } == "COOPERATIVE"

    switch reason {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        // The committed offsets, asked for here rather than left to librdkafka, are where fetching
        // starts: the consumer then knows the first offset each partition must deliver and can
        // tell a skip at the very start of an assignment (``FetchPosition``). Without an answer
        // librdkafka looks them up itself, as before.
        var starts: [KafkaTopicPartition: Int64] = [:]
        if rd_kafka_committed(rk, partitions, 10_000) == RD_KAFKA_RESP_ERR_NO_ERROR {
            for position in RDKafkaTopicPartitionList.positions(of: partitions) where position.offset >= 0 {
                starts[position.topicPartition] = position.offset
            }
        } else {
            for index in 0..<Int(partitions.pointee.cnt) { partitions.pointee.elems[index].offset = Int64(RD_KAFKA_OFFSET_INVALID) }
        }
        if isCooperative {
            if let error = rd_kafka_incremental_assign(rk, partitions) {
                handlers.error(KafkaError(consuming: error, context: "incremental assign"))
            }
        } else {
            let result = rd_kafka_assign(rk, partitions)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { handlers.error(KafkaError(result, context: "assign")) }
        }
        handlers.assigned(topicPartitions, starts)

    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
        let lost = rd_kafka_assignment_lost(rk) != 0
        let paused = handlers.revoking(topicPartitions, lost)
        // librdkafka keeps a partition's pause flag across unassign and assign: one paused when a
        // rebalance takes it away would come back paused, while the consumer (which forgets pauses
        // on revoke) believes it fresh, and it would never be fetched again. So the partitions the
        // consumer paused are resumed here, while still assigned. Not after the next assign: a
        // resume seeks to the partition's last *delivered* position, which for a partition that
        // was away is stale and would replay older offsets ahead of the committed ones.
        if !paused.isEmpty {
            let list = RDKafkaTopicPartitionList(paused)
            let resumed = rd_kafka_resume_partitions(rk, list.pointer)
            if resumed != RD_KAFKA_RESP_ERR_NO_ERROR { handlers.error(KafkaError(resumed, context: "resume on revoke")) }
        }
        if !lost {
            // Synchronous: the next owner must see these offsets when it starts.
            let result = rd_kafka_commit(rk, nil, 0)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR && result != RD_KAFKA_RESP_ERR__NO_OFFSET {
                handlers.error(KafkaError(result, context: "commit on revoke"))
            }
        }
        if isCooperative {
            if let error = rd_kafka_incremental_unassign(rk, partitions) {
                handlers.error(KafkaError(consuming: error, context: "incremental unassign"))
            }
        } else {
            rd_kafka_assign(rk, nil)
        }
        handlers.revoked(topicPartitions)

    default:
        handlers.error(KafkaError(reason, context: "rebalance"))
        rd_kafka_assign(rk, nil)
        handlers.revoked(topicPartitions)
    }
}
