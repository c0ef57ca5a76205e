//! Percentiles over microsecond samples.

/// Summary of one distribution (all in microseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Samples.
    pub n: usize,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest sample.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

/// Nearest-rank percentile of sorted samples (`p` in 0..=100).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarises samples (sorts them in place).
pub fn summarize(samples: &mut [u64]) -> Summary {
    samples.sort_unstable();
    let mean = if samples.is_empty() { 0.0 } else { samples.iter().sum::<u64>() as f64 / samples.len() as f64 };
    Summary {
        n: samples.len(),
        p50: percentile(samples, 50.0),
        p99: percentile(samples, 99.0),
        max: samples.last().copied().unwrap_or(0),
        mean,
    }
}

/// Microseconds as milliseconds with one decimal.
pub fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1000.0)
}
