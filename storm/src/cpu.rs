//! The calling thread's own processor time and its involuntary context switches: what tells
//! a stretch of work that ran long from one whose thread was taken off the processor.

use std::time::Duration;

/// One reading of the calling thread's clocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadClock {
    /// Processor time the thread has used (`None` where the platform has no per-thread
    /// clock).
    pub cpu: Option<Duration>,
    /// Times the thread was preempted: taken off the processor without having asked to wait
    /// (`None` where the platform does not count them per thread).
    pub switches: Option<u64>,
}

impl ThreadClock {
    /// The calling thread's clocks now.
    pub fn now() -> Self {
        ThreadClock { cpu: cpu_time(), switches: involuntary_switches() }
    }
}

#[cfg(unix)]
fn cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration, and
    // CLOCK_THREAD_CPUTIME_ID names the calling thread's clock, which always exists.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

#[cfg(not(unix))]
fn cpu_time() -> Option<Duration> {
    None
}

#[cfg(target_os = "linux")]
fn involuntary_switches() -> Option<u64> {
    // SAFETY: `rusage` is plain old data (integers and timevals): all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call's duration; RUSAGE_THREAD asks
    // about the calling thread.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    (rc == 0).then_some(usage.ru_nivcsw as u64)
}

#[cfg(not(target_os = "linux"))]
fn involuntary_switches() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_time_advances_with_work_and_not_with_sleep() {
        let Some(before) = ThreadClock::now().cpu else { return }; // no per-thread clock here
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        let worked = loop {
            x = std::hint::black_box(x.wrapping_add(1));
            let used = ThreadClock::now().cpu.unwrap() - before;
            if used >= Duration::from_millis(10) || spin.elapsed() > Duration::from_secs(10) {
                break used;
            }
        };
        assert!(worked >= Duration::from_millis(10), "10 s of spinning used {worked:?} of processor time");
        std::thread::sleep(Duration::from_millis(50));
        let slept = ThreadClock::now().cpu.unwrap() - before - worked;
        assert!(slept < Duration::from_millis(25), "a 50 ms sleep used {slept:?} of processor time");
    }
}
