//! What machine a benchmark ran on, for its tables: the CPU model and the cores.

/// The CPU's model name (`/proc/cpuinfo`) with its family and model numbers (a virtual
/// machine's name is often only "Intel(R) Xeon(R) Processor"), or `unknown CPU`.
pub fn cpu_model() -> String {
    let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") else {
        return "unknown CPU".into();
    };
    // The first processor's fields: `key<tabs>: value`.
    let field = |key: &str| {
        text.lines()
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
    };
    let name = field("model name").unwrap_or_else(|| "unknown CPU".into());
    match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        _ => name,
    }
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `<model>, N cores`: the line every table names its machine with.
pub fn describe() -> String {
    format!("{}, {} cores", cpu_model(), cores())
}

/// Prints `machine: <model>, N cores`, the line every text table of `hourglass bench` starts
/// with, so that no figure is read without the CPU it was measured on.
pub fn print_line() {
    println!("machine: {}", describe());
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_machine_line_names_the_cpu_and_its_model() {
        let cpu = super::cpu_model();
        if std::path::Path::new("/proc/cpuinfo").exists() && cfg!(target_arch = "x86_64") {
            assert!(
                cpu.contains("(family ") && cpu.contains(", model "),
                "{cpu}"
            );
            assert!(!cpu.starts_with("unknown"), "{cpu}");
        }
        assert!(super::describe().ends_with(" cores"));
    }
}
