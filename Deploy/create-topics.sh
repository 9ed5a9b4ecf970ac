#!/usr/bin/env bash
# Creates receiptd's topics on a real Kafka cluster with Apache Kafka's own CLI.
# Usage: Deploy/create-topics.sh <bootstrap> [partitions] [replication-factor] [retry-tiers]
# retry-tiers (default 4) must match the length of retry.tierDelaysSeconds: each stage input gets
# <input>.retry.1 ... <input>.retry.<n>.
# (receiptd workers also create missing topics themselves when topics.create is true.)
set -euo pipefail
bootstrap="${1:?usage: create-topics.sh <bootstrap> [partitions] [replication] [retry-tiers]}"
partitions="${2:-48}"
replication="${3:-3}"
tiers="${4:-4}"
kafka_topics="${KAFKA_TOPICS:-kafka-topics.sh}"
inputs=(receipts.submitted receipts.ingested receipts.verified entitlements.owner-updates consumption.answers)
topics=("${inputs[@]}" entitlements.changed entitlements.state receipts.rejected receipts.outcomes receipts.dead-letter consumption.requests consumption.outcomes)
for input in "${inputs[@]}"; do
  for ((tier = 1; tier <= tiers; tier++)); do topics+=("$input.retry.$tier"); done
done
for topic in "${topics[@]}"; do
  "$kafka_topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
    --partitions "$partitions" --replication-factor "$replication" \
    --config min.insync.replicas=$(( replication > 1 ? 2 : 1 ))
done
# Dead letters are kept for a long time so operators can replay them.
"$kafka_topics" --bootstrap-server "$bootstrap" --alter --topic receipts.dead-letter \
  --config retention.ms=2592000000 2>/dev/null || true
# entitlements.changed is also fulfil's de-duplication ledger (each partition is re-read when a
# fulfil worker is assigned the matching receipts.verified partition): its retention is how far
# back a re-submitted transaction is still recognised (older ones are re-emitted with the same
# eventId), and its size is what a rebuild reads. Each event carries its purchase's whole state, so
# a purchase whose last event is older than the retention is forgotten: its next input is applied
# as a first sighting (ownership recorded anew). Keep it longer than your longest subscription
# period plus the time a lapsed subscriber may take to come back: 400 days by default. It must never be compacted
# (records are keyed by owner; compaction would delete the ledger's history), and it needs at least
# as many partitions as receipts.verified (every topic gets the same count here).
"$kafka_topics" --bootstrap-server "$bootstrap" --alter --topic entitlements.changed \
  --config retention.ms=34560000000 --config cleanup.policy=delete 2>/dev/null || true
# entitlements.state is the per-owner view (entitlement-state/v1, keyed bundleId/userId/entitlement):
# compacted, so the newest state of every owner is kept forever and an owners worker's rebuild reads
# one value per key. It needs at least as many partitions as entitlements.owner-updates.
"$kafka_topics" --bootstrap-server "$bootstrap" --alter --topic entitlements.state \
  --config cleanup.policy=compact --config min.compaction.lag.ms=60000 2>/dev/null || true
