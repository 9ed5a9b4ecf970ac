import AppStore
import Foundation
import Synchronization

extension FakeAppStore {
    /// Signs a notification as Apple would, keeps it for Get Notification History and, when a
    /// receiver is configured, POSTs it there with Apple's retries.
    /// - Parameter request: What to notify about.
    /// - Returns: The notification as recorded (attempts follow asynchronously).
    /// - Throws: ``FakeAppStoreError`` when signing failed.
    @discardableResult
    public func notify(_ request: FakeNotificationRequest) throws -> FakeNotification {
        let center = router.notifications
        let uuid = center.nextUUID()
        let now = configuration.clock()
        guard let payload = request.payload(uuid: uuid, bundleId: configuration.bundleId, appAppleId: configuration.appAppleId,
                                            signedDate: now, sign: { self.router.sign($0) }),
              let signed = router.sign(payload) else {
            throw FakeAppStoreError("could not sign the \(request.notificationType) notification")
        }
        let notification = FakeNotification(notificationUUID: uuid, notificationType: request.notificationType,
                                            subtype: request.subtype, transactionId: request.transaction?.transactionId,
                                            environment: request.environment, signedPayload: signed, createdAt: now)
        center.send(notification)
        return notification
    }

    /// The transaction as Apple signs it (`signedTransactionInfo`, what StoreKit 2 hands the app as
    /// `jwsRepresentation`), signed now.
    /// - Throws: ``FakeAppStoreError`` when signing failed.
    public func signedTransaction(_ transaction: FakeTransaction) throws -> String {
        guard let jws = router.sign(transaction.signedPayload(bundleId: configuration.bundleId, signedDate: configuration.clock())) else {
            throw FakeAppStoreError("could not sign transaction \(transaction.transactionId)")
        }
        return jws
    }

    /// Where and how notifications are pushed now; change it with ``setNotificationDelivery(_:)``.
    public var notificationDelivery: FakeNotificationDelivery { router.notifications.delivery }

    /// Points later notifications at another receiver or schedule (deliveries under way keep theirs).
    public func setNotificationDelivery(_ delivery: FakeNotificationDelivery) {
        router.notifications.delivery = delivery
    }

    /// Every delivery attempt and its end, from now on (each call is an independent subscriber).
    public func deliveryEvents() -> AsyncStream<FakeDeliveryEvent> { router.notifications.events() }

    /// Every notification sent so far, with its attempts.
    public var sentNotifications: [FakeNotification] { router.notifications.notifications }

    /// What Send Consumption Information received, in order.
    public var consumptionReports: [FakeConsumptionReport] { router.consumptionReports.withLock { $0 } }
}

/// A failure of the fake itself (not an answer it gives).
public struct FakeAppStoreError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// One Send Consumption Information request the fake accepted.
public struct FakeConsumptionReport: Sendable, Equatable {
    public var transactionId: String
    public var environment: AppStoreEnvironment
    /// The request body's members as sent (integers and booleans as their JSON text).
    public var fields: [String: String]
    public var receivedAt: Date
}
