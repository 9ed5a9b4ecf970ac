/// The checks ``SignedDataVerifierConfiguration`` and ``AppReceiptVerifierConfiguration`` share:
/// both verify against trust anchors, for a set of bundle ids, under an environment policy with
/// optional test environments. One place, so the two verifiers can never disagree on what a
/// usable policy is.
enum VerifierPolicyChecks {
    /// At least one trust anchor; no empty bundle id.
    static func checkTrust(anchors: [X509Certificate], bundleIds: Set<String>) throws(AppStoreConfigurationError) {
        guard !anchors.isEmpty else {
            throw AppStoreConfigurationError(key: "trustAnchors", message: "at least one trust anchor is required")
        }
        if let empty = bundleIds.first(where: { $0.isEmpty }) {
            throw AppStoreConfigurationError(key: "bundleIds", message: "bundle ids must be non-empty strings, got \"\(empty)\"")
        }
    }

    /// Test environments hold only Xcode or LocalTesting (Production and Sandbox belong to the policy).
    static func checkTestEnvironments(_ allowed: Set<AppStoreEnvironment>) throws(AppStoreConfigurationError) {
        for test in allowed where test == .production || test == .sandbox {
            throw AppStoreConfigurationError(
                key: "allowedTestEnvironments",
                message: "may only hold Xcode or LocalTesting, got \(test.rawValue); use environment for \(test.rawValue)")
        }
    }

    /// `value` within `range`, else an error naming `key`.
    static func check(_ value: Int, in range: ClosedRange<Int>, key: String) throws(AppStoreConfigurationError) {
        guard range.contains(value) else {
            throw AppStoreConfigurationError(key: key, message: "must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
    }
}
