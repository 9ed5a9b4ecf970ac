/// Holds back the submissions that must wait for another one's verdict
/// (``SubmissionGenerator/Submission/after``) and hands them out once it has one, so a step sent
/// by someone else (a second user, Apple) reaches the pipeline after the step before it.
struct SubmissionSchedule {
    /// Waiting submissions by the submission they wait for.
    private var waiting: [String: [SubmissionGenerator.Submission]] = [:]
    private(set) var waitingCount = 0

    /// Those of `batch` that may go now (in order); the others wait.
    /// - Parameter settled: which of the given prerequisites have a verdict.
    mutating func admit(_ batch: [SubmissionGenerator.Submission],
                        settled: (Set<String>) -> Set<String>) -> [SubmissionGenerator.Submission] {
        let done = settled(Set(batch.compactMap(\.after)))
        var ready: [SubmissionGenerator.Submission] = []
        for submission in batch {
            if let after = submission.after, !done.contains(after) {
                waiting[after, default: []].append(submission)
                waitingCount += 1
            } else {
                ready.append(submission)
            }
        }
        return ready
    }

    /// The waiting submissions whose prerequisite has a verdict now.
    mutating func release(settled: (Set<String>) -> Set<String>) -> [SubmissionGenerator.Submission] {
        guard !waiting.isEmpty else { return [] }
        var ready: [SubmissionGenerator.Submission] = []
        for prerequisite in settled(Set(waiting.keys)).sorted() {
            ready += waiting.removeValue(forKey: prerequisite) ?? []
        }
        waitingCount -= ready.count
        return ready
    }

    /// Everything still waiting (the run is ending: what never got its turn goes anyway).
    mutating func releaseAll() -> [SubmissionGenerator.Submission] {
        let all = waiting.keys.sorted().flatMap { waiting[$0]! }
        waiting = [:]
        waitingCount = 0
        return all
    }
}
