//! Minimal SVG charts for benchmark output (`--plot FILE`).

use std::fmt::Write;

use hourglass_arith::atomic::Existing;

use crate::error::{Error, Result};

/// One named series of y values (x is the index, or the given labels).
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// The values.
    pub values: &'a [f64],
}

const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// A chart panel: title, axis labels, and series drawn as points joined by lines.
pub struct Panel<'a> {
    /// Title above the panel.
    pub title: &'a str,
    /// Label of the x axis.
    pub x_label: &'a str,
    /// Label of the y axis.
    pub y_label: &'a str,
    /// Tick labels for x positions (empty: indices).
    pub x_ticks: Vec<String>,
    /// The data.
    pub series: Vec<Series<'a>>,
    /// Logarithmic y axis.
    pub log_y: bool,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A tick label with as many decimals as its size needs.
fn tick_label(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 0.1 => format!("{v:.2}"),
        _ => format!("{v:.4}"),
    }
}

/// Renders panels stacked vertically as one SVG document.
pub fn render(panels: &[Panel<'_>]) -> String {
    let (w, h) = (900.0, 360.0);
    let mut svg = String::new();
    let total_h = h * panels.len() as f64;
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{total_h}" viewBox="0 0 {w} {total_h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (pi, panel) in panels.iter().enumerate() {
        let oy = h * pi as f64;
        let (left, right, top, bottom) = (90.0, 20.0, 30.0, 50.0);
        let (pw, ph) = (w - left - right, h - top - bottom);
        let all: Vec<f64> = panel
            .series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .filter(|v| v.is_finite() && (!panel.log_y || *v > 0.0))
            .collect();
        let tf = |v: f64| if panel.log_y { v.max(1e-9).log10() } else { v };
        let (mut lo, mut hi) = all
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(tf(v)), b.max(tf(v)))
            });
        if !lo.is_finite() {
            lo = 0.0;
            hi = 1.0;
        }
        if !panel.log_y {
            lo = lo.min(0.0);
        }
        if hi - lo < 1e-12 {
            hi = lo + 1.0;
        }
        let npts = panel
            .series
            .iter()
            .map(|s| s.values.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let x_of = |i: usize| {
            left + if npts == 1 {
                pw / 2.0
            } else {
                pw * i as f64 / (npts - 1) as f64
            }
        };
        let y_of = |v: f64| oy + top + ph - (tf(v) - lo) / (hi - lo) * ph;
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
            left,
            oy + 20.0,
            escape(panel.title)
        );
        let _ = writeln!(
            svg,
            r##"<rect x="{left}" y="{}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##,
            oy + top
        );
        for k in 0..=4 {
            let t = lo + (hi - lo) * k as f64 / 4.0;
            let y = oy + top + ph - ph * k as f64 / 4.0;
            let label = tick_label(if panel.log_y { 10f64.powf(t) } else { t });
            let _ = writeln!(
                svg,
                r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{label}</text>"##,
                left + pw,
                left - 5.0,
                y + 4.0
            );
        }
        let ticks = if panel.x_ticks.is_empty() {
            (0..npts).map(|i| (i + 1).to_string()).collect()
        } else {
            panel.x_ticks.clone()
        };
        let step = (ticks.len() / 10).max(1);
        for (i, t) in ticks.iter().enumerate().step_by(step) {
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                x_of(i),
                oy + top + ph + 16.0,
                escape(t)
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            left + pw / 2.0,
            oy + h - 12.0,
            escape(panel.x_label)
        );
        let _ = writeln!(
            svg,
            r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            oy + top + ph / 2.0,
            escape(panel.y_label)
        );
        for (si, s) in panel.series.iter().enumerate() {
            let color = COLORS[si % COLORS.len()];
            let pts: Vec<String> = s
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .map(|(i, &v)| format!("{:.1},{:.1}", x_of(i), y_of(v)))
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline fill="none" stroke="{color}" stroke-width="1.2" points="{}"/>"#,
                pts.join(" ")
            );
            if s.values.len() <= 200 {
                for p in &pts {
                    let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                    let _ = writeln!(svg, r#"<circle cx="{x}" cy="{y}" r="2.2" fill="{color}"/>"#);
                }
            }
            let ly = oy + top + 14.0 + 16.0 * si as f64;
            let _ = writeln!(
                svg,
                r#"<rect x="{}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
                left + pw - 200.0,
                ly - 9.0,
                left + pw - 185.0,
                ly,
                escape(s.name)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// Refuses, before any measurement, a plot path that is an existing regular file when it may
/// not be replaced.
pub(crate) fn check_plot(path: Option<&std::path::Path>, existing: Existing) -> Result<()> {
    match path {
        Some(p) if existing == Existing::Refuse && p.is_file() => Err(Error::OutputExists {
            path: p.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Writes a plot (SVG): `-` is standard output; a device or a pipe (`--plot /dev/null`, a
/// FIFO) is written in place, since renaming a temporary file over it would replace it with a
/// regular file; anything else whole or not at all, an existing file refused unless
/// `existing` says to replace it.
pub(crate) fn write_plot(path: &std::path::Path, svg: &str, existing: Existing) -> Result<()> {
    use std::io::Write;
    let failed = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            Error::OutputExists {
                path: path.to_path_buf(),
            }
        } else {
            Error::Write {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(svg.as_bytes())
            .and_then(|()| out.flush())
            .map_err(Error::Stdout);
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(svg.as_bytes()).and_then(|()| f.flush()))
            .map_err(failed);
    }
    hourglass_arith::atomic::write_atomic(path, svg.as_bytes(), 0o644, existing).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_well_formed_svg_with_every_series() {
        let a = [1.0, 2.0, 3.0];
        let b = [3.0, 1.0, 0.5];
        let svg = render(&[Panel {
            title: "t <1>",
            x_label: "x",
            y_label: "y",
            x_ticks: vec![],
            series: vec![
                Series {
                    name: "a",
                    values: &a,
                },
                Series {
                    name: "b",
                    values: &b,
                },
            ],
            log_y: true,
        }]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("t &lt;1&gt;"));
    }

    #[test]
    fn plots_refuse_replace_and_never_turn_a_device_into_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.svg");
        std::fs::write(&path, "old").unwrap();
        let err = write_plot(&path, "<svg/>", Existing::Refuse).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert!(err.hint().is_some_and(|h| h.contains("--force")));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        write_plot(&path, "<svg/>", Existing::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
        // --force --plot /dev/null (as root, a rename would replace the device node).
        write_plot(
            std::path::Path::new("/dev/null"),
            "<svg/>",
            Existing::Replace,
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let kind = std::fs::metadata("/dev/null").unwrap().file_type();
            assert!(kind.is_char_device(), "/dev/null is no longer a device");
        }
    }
}
