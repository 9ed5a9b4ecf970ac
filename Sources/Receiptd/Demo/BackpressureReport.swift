import Foundation
import Observability

/// One worker's evidence that its in-flight work stayed bounded: read from the last
/// `stage worker stopped` line of its log (a graceful stop logs the runner's peak in-flight count,
/// its bound and how often the bound paused the partitions).
struct BackpressureReport {
    var worker: String
    var peakInFlight: Int
    var maxInFlight: Int
    var pauses: Int

    /// Nil when the worker never stopped gracefully (no such line) or the line is unreadable.
    init?(worker: WorkerProcess) {
        guard let text = try? String(contentsOfFile: worker.logPath, encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").last { $0.contains("\"stage worker stopped\"") }
        guard let line, let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
              let peak = object[LoggingKeys.runnerPeakInFlight] as? Int,
              let bound = object[LoggingKeys.runnerMaxInFlight] as? Int,
              let pauses = object[LoggingKeys.runnerBackpressurePauses] as? Int else { return nil }
        self.worker = worker.name
        peakInFlight = peak
        maxInFlight = bound
        self.pauses = pauses
    }
}
