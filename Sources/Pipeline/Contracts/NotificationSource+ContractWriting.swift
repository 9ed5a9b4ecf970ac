/// A transaction's notification written directly (see ``ContractWritable``); members in sorted key order.
extension NotificationSource: ContractWritable {
    func write(to writer: inout ContractJSONWriter) {
        writer.beginObject()
        writer.member("effect", effect)
        writer.member("notificationType", notificationType)
        writer.member("notificationUUID", notificationUUID)
        writer.member("renewal", renewal)
        writer.member("signedDate", timestamp: signedDate)
        writer.member("subtype", subtype)
        writer.endObject()
    }
}
