import Foundation

/// Where a reconciliation run is, saved after every page (written to a temporary file, then
/// renamed, so a crash leaves the previous checkpoint or the new one, never half of one). A run
/// given the same checkpoint file and the same parameters resumes after the last saved page.
struct ReconcileCheckpoint: Codable, Equatable {
    /// What the run was asked to do; a checkpoint of other parameters is refused.
    var parameters: [String: String]
    /// Index into the run's work list (environments or purchases) of the item under way.
    var position = 0
    /// The App Store's pagination token within that item (notifications), nil at its start.
    var paginationToken: String?
    var pages = 0
    var seen = 0
    var published = 0
    var skipped = 0
    var failed = 0
    var finished = false
    /// The end of the notification history span, fixed at the first run (default: its start time)
    /// so a resumed run asks for the same span its pagination token belongs to.
    var endDate: Date?
    /// The start of that span, fixed likewise (a relative `--since` is resolved once).
    var startDate: Date?

    /// Loads `path` if it exists and belongs to a run with `parameters`.
    /// - Throws: `ValidationError` when the file is unreadable or belongs to another run.
    static func load(_ path: String?, parameters: [String: String]) throws -> ReconcileCheckpoint {
        guard let path, let data = FileManager.default.contents(atPath: path) else {
            return ReconcileCheckpoint(parameters: parameters)
        }
        let checkpoint: ReconcileCheckpoint
        do { checkpoint = try JSONDecoder().decode(ReconcileCheckpoint.self, from: data) } catch {
            throw ValidationError("checkpoint \(path) is not a reconcile checkpoint: \(error)")
        }
        guard checkpoint.parameters == parameters else {
            throw ValidationError("checkpoint \(path) belongs to another run (\(checkpoint.parameters.sorted { $0.key < $1.key })); "
                                  + "remove it or pass another --checkpoint")
        }
        return checkpoint
    }

    /// Saves atomically (no-op without a path).
    func save(_ path: String?) throws {
        guard let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
