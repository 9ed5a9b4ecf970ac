import Foundation

/// A fresh directory `<prefix>-<UUID>` under the system's temporary directory, for one test's
/// files (configuration overlays, logs, credentials); the caller removes it.
func scratchDirectory(_ prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
