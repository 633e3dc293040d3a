//! Parsing of the benchmarks' arguments.

/// Parses a comma-separated list of bit sizes.
pub fn parse_bits_list(s: &str) -> std::result::Result<Vec<u32>, String> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{t}' is not a bit size"))
        })
        .collect()
}
