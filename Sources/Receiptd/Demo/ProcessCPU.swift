import Foundation

/// User plus system CPU seconds used so far by every thread of this process (benchmarks report
/// CPU per record, which a busy machine disturbs far less than wall-clock rates).
func processCPUSeconds() -> Double {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
