/// A verified transaction's notification, read without `Decoder` containers (mirrors `init(from:)`).
extension NotificationSource: ContractReadable {
    init(reading r: ContractReader) throws {
        notificationType = try r.string("notificationType")
        subtype = try r.stringIfPresent("subtype")
        notificationUUID = try r.string("notificationUUID")
        effect = try r.string("effect")
        signedDate = try r.timestampIfPresent("signedDate")
        renewal = try r.nestedIfPresent(RenewalSnapshot.self, "renewal")
    }
}
