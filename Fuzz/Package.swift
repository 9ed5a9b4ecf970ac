// swift-tools-version:5.4
// libFuzzer targets for receiptd (see README.md). A separate root package that depends on the
// main one by path, so the sanitizer and fuzzer flags never reach the product build.
//
// Tools version 5.4 on purpose: from 5.5 on, SwiftPM compiles a Swift executable's entry point as
// `<Module>_main` and links with `--defsym main=<Module>_main` (so tests can link executables).
// A fuzz target has no Swift entry point (libFuzzer provides `main`), so that link fails with
// "undefined symbol '<Module>_main'"; 5.4 packages are linked without the renaming.
//
// Every directory `Sources/Fuzz<Name>` except `FuzzSupport` is one fuzz target (an executable
// with `LLVMFuzzerTestOneInput`): adding a target is adding one file in a new directory.
import Foundation
import PackageDescription

let sourcesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Sources")
let fuzzTargetNames = ((try? FileManager.default.contentsOfDirectory(atPath: sourcesDirectory.path)) ?? [])
    .filter { $0.hasPrefix("Fuzz") && $0 != "FuzzSupport" }
    .sorted()

let productModules: [Target.Dependency] = [
    .product(name: "AppStore", package: "receiptd"),
    .product(name: "Pipeline", package: "receiptd"),
]

let package = Package(
    name: "receiptd-fuzz",
    dependencies: [
        .package(name: "receiptd", path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: productModules),
    ] + fuzzTargetNames.map { name in
        // No main.swift: the file only declares the libFuzzer hooks.
        .executableTarget(name: name, dependencies: ["FuzzSupport"] + productModules,
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    }
)
