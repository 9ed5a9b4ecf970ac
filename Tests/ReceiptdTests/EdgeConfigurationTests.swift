import AppStore
import Foundation
import Testing
@testable import Receiptd

/// `notifications.*` and `verify.serverApi.budgets` are checked at start-up, with the key named.
@Suite struct EdgeConfigurationTests {
    func message(_ body: () throws -> Void) -> String? {
        do { try body() } catch let error as ValidationError { return error.message } catch { return "\(error)" }
        return nil
    }

    @Test func notificationSettingsAreValidated() throws {
        #expect(message { try WorkerConfiguration().validateNotifications() } == nil)
        var c = WorkerConfiguration()
        c.notifications.path = "appstore"
        #expect(message { try c.validateNotifications() }?.contains("notifications.path must start with /") == true)
        c = WorkerConfiguration()
        c.notifications.metricsPath = c.notifications.path
        #expect(message { try c.validateNotifications() }?.contains("distinct") == true)
        c = WorkerConfiguration()
        c.notifications.maxBodyBytes = c.ingest.maxRecordBytes
        #expect(message { try c.validateNotifications() }?.contains("notifications.maxBodyBytes") == true)
        c = WorkerConfiguration()
        c.notifications.publishTimeoutSeconds = 0
        #expect(message { try c.validateNotifications() }?.contains("publishTimeoutSeconds") == true)
    }

    @Test func budgetsAreValidated() throws {
        #expect(try WorkerConfiguration().requestBudget() == nil)
        var c = WorkerConfiguration()
        c.verify.serverApi.budgets = ["transactionInfo": AppStoreBudget(requests: 3600, windowSeconds: 3600)]
        let budget = try #require(try c.requestBudget())
        #expect(budget.allowance(.transactionInfo) == 3600)
        #expect(budget.allowance(.transactionHistory) == nil)
        c.verify.serverApi.budgets = ["getTransactionInfo": AppStoreBudget(requests: 1, windowSeconds: 1)]
        #expect(message { _ = try c.requestBudget() }?.contains("verify.serverApi.budgets.getTransactionInfo: unknown endpoint") == true)
        c.verify.serverApi.budgets = ["transactionInfo": AppStoreBudget(requests: 0, windowSeconds: 1)]
        #expect(message { _ = try c.requestBudget() }?.contains("requests must be >= 1") == true)
        c.verify.serverApi.budgets = ["transactionInfo": AppStoreBudget(requests: 1, windowSeconds: 1)]
        c.verify.serverApi.budgetMaxWaitSeconds = c.runner.recordTimeoutSeconds
        #expect(message { _ = try c.requestBudget() }?.contains("budgetMaxWaitSeconds") == true)
    }

    @Test func budgetsLoadFromAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("budgets-\(UUID().uuidString).json").path
        try #"{"verify": {"serverApi": {"budgets": {"subscriptionStatuses": {"requests": 50, "windowSeconds": 60}}}}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let c = try ConfigLoader(files: [path]).load()
        #expect(c.verify.serverApi.budgets["subscriptionStatuses"] == AppStoreBudget(requests: 50, windowSeconds: 60))
        let fromEnvironment = try ConfigLoader(files: [], environment: [
            "RECEIPTD_VERIFY_SERVER_API_BUDGETS": #"{"transactionInfo": {"requests": 9, "windowSeconds": 3600}}"#,
        ]).load()
        #expect(fromEnvironment.verify.serverApi.budgets == ["transactionInfo": AppStoreBudget(requests: 9, windowSeconds: 3600)])
    }
}
