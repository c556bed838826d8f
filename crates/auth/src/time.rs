//! Wall-clock helpers. Everything time-dependent in this crate takes `now_ms` (milliseconds
//! since the Unix epoch) as a parameter so tests need no clock; [`now_ms`] is what real
//! callers pass (pincer-base's clock). [`format_duration_ms`] renders waits and expiries
//! for people.

const SECOND: u64 = 1_000;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

/// Milliseconds since the Unix epoch (0 if the system clock is before 1970): pincer-base's
/// clock, unsigned as this crate counts.
pub fn now_ms() -> u64 {
    u64::try_from(pincer_base::now_ms()).unwrap_or(0)
}

/// A duration as its two largest units: `45s`, `4m 30s`, `1h 5m`, `2d 3h`; `0s` below one
/// second. Rounds down: a status line never promises more time than is left.
pub fn format_duration_ms(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(DAY, "d"), (HOUR, "h"), (MINUTE, "m"), (SECOND, "s")];
    let Some(first) = UNITS.iter().position(|(size, _)| ms >= *size) else {
        return "0s".to_owned();
    };
    let (size, suffix) = UNITS[first];
    let mut text = format!("{}{suffix}", ms / size);
    if let Some((next_size, next_suffix)) = UNITS.get(first + 1) {
        let next = (ms % size) / next_size;
        if next > 0 {
            text.push_str(&format!(" {next}{next_suffix}"));
        }
    }
    text
}
