//! Interim: replaced by the HTML report.
use crate::figures::Run;
pub fn render(run: &Run) -> String {
    format!("<html><body>{}</body></html>", run.scenarios.len())
}
pub fn ns(x: f64) -> String {
    if x < 1e3 {
        format!("{x:.0} ns")
    } else if x < 1e6 {
        format!("{:.1} µs", x / 1e3)
    } else {
        format!("{:.1} ms", x / 1e6)
    }
}
pub fn us(x: f64) -> String {
    ns(x * 1e3)
}
pub fn bytes(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / 1048576.0)
}
pub fn count(n: u64) -> String {
    n.to_string()
}
pub fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}
