// swift-tools-version:6.0
// receiptd: Apple in-app-purchase receipts -> entitlements, over Kafka.
// Dependency graph (only wrapper modules import the C targets):
//   Observability <- Lifecycle <- Pipeline <- Receiptd
//   CRdKafka <- Kafka <- Pipeline
//   CCurl + CMicroHTTPD + CLinux <- HTTP <- AppStore(+COpenSSL) <- Pipeline
//   HTTP + AppStore <- FakeAppStore <- Receiptd (the `fake-appstore` command)
//   CJemalloc <- Receiptd (the allocator of every receiptd process)
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    // Release builds make generic bodies available across modules, so the runner and the contract
    // coders Receiptd instantiates with concrete stages are specialised instead of running on
    // run-time metadata (the runner alone: about 30% less CPU per record, docs/benchmarks.md).
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "receiptd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "receiptd", targets: ["Receiptd"]),
        // Library products only so that the fuzz package (Fuzz/, a separate root package) can
        // depend on the modules it fuzzes; nothing else consumes them.
        .library(name: "AppStore", targets: ["AppStore"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
    ],
    targets: [
        .systemLibrary(name: "CRdKafka", path: "Sources/CRdKafka", pkgConfig: "rdkafka",
                       providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        // Header-only: epoll and eventfd, which the Glibc module does not expose (HTTP's curl multi thread).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        // The process's allocator (the executable links it in place of glibc's malloc).
        .systemLibrary(name: "CJemalloc", path: "Sources/CJemalloc", pkgConfig: "jemalloc",
                       providers: [.apt(["libjemalloc-dev"])]),

        .target(name: "Observability", swiftSettings: strict),
        .target(name: "Lifecycle", dependencies: ["Observability"], swiftSettings: strict),
        .target(name: "Kafka", dependencies: ["CRdKafka"], swiftSettings: strict),
        .target(name: "HTTP", dependencies: ["CCurl", "CMicroHTTPD", "CLinux"], swiftSettings: strict),
        .target(name: "AppStore", dependencies: ["COpenSSL", "HTTP", "Observability"], swiftSettings: strict),
        .target(name: "FakeAppStore", dependencies: ["HTTP", "AppStore", "Observability"], swiftSettings: strict),
        .target(name: "Pipeline",
                dependencies: ["Observability", "Lifecycle", "Kafka", "AppStore"],
                swiftSettings: strict),
        .executableTarget(name: "Receiptd",
                          dependencies: ["Observability", "Lifecycle", "Kafka", "HTTP", "AppStore", "Pipeline", "FakeAppStore", "CJemalloc"],
                          swiftSettings: strict),

        // Seeded byte mutations shared by the property tests of AppStoreTests and PipelineTests.
        .target(name: "MutationTesting", path: "Tests/MutationTesting"),

        .testTarget(name: "ObservabilityTests", dependencies: ["Observability"]),
        .testTarget(name: "LifecycleTests", dependencies: ["Lifecycle", "Observability"]),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP"]),
        .testTarget(name: "AppStoreTests", dependencies: ["AppStore", "HTTP", "MutationTesting"], resources: [.copy("Resources")]),
        .testTarget(name: "FakeAppStoreTests", dependencies: ["FakeAppStore", "AppStore", "HTTP"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "AppStore", "Observability", "MutationTesting"]),
        .testTarget(name: "ReceiptdTests", dependencies: ["Receiptd", "AppStore", "HTTP"]),
        .testTarget(name: "IntegrationTests", dependencies: ["Pipeline", "Kafka", "AppStore", "Observability", "Lifecycle", "FakeAppStore", "HTTP"]),
    ]
)
