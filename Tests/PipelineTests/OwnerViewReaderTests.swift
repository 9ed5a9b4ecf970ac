import Testing
@testable import Pipeline

/// `receiptd entitlements` reads only the partitions an owner's keys live in: the partition
/// librdkafka's default `consistent_random` partitioner picks, CRC-32 of the key modulo the count.
@Suite struct OwnerViewReaderTests {
    @Test func crc32IsTheIEEEChecksumLibrdkafkaUses() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)  // the standard check value
        #expect(CRC32.checksum([]) == 0)
    }
}
