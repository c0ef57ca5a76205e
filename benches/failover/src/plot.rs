//! Cumulative distribution plots on a PNG: curves with `plotters` (bitmap backend), every piece
//! of text drawn from the 8x8 bitmap font of `font8x8`, so no system font is ever needed.

use std::path::Path;

use font8x8::legacy::BASIC_LEGACY;
use plotters::prelude::*;

/// One curve: a legend entry index (colour) and its samples in microseconds.
pub struct Curve {
    /// Index into the legend (selects the colour).
    pub series: usize,
    /// Samples in microseconds (any order).
    pub samples_us: Vec<u64>,
}

/// One panel of the grid.
pub struct Panel {
    /// Title drawn above the panel.
    pub title: String,
    /// The curves.
    pub curves: Vec<Curve>,
}

/// Curve colours, by legend index.
pub const COLORS: [RGBColor; 4] =
    [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xff, 0x7f, 0x0e), RGBColor(0x2c, 0xa0, 0x2c), RGBColor(0xd6, 0x27, 0x28)];

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
type Res = Result<(), Box<dyn std::error::Error>>;

/// Draws `text` with its top-left corner at `(x, y)`, each font pixel `scale` pixels wide.
pub fn text(area: &Area<'_>, x: i32, y: i32, s: &str, scale: i32, color: &RGBColor) -> Res {
    for (k, ch) in s.chars().enumerate() {
        let glyph = BASIC_LEGACY.get(ch as usize).copied().unwrap_or(BASIC_LEGACY[b'?' as usize]);
        let gx = x + k as i32 * 8 * scale;
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    let (px, py) = (gx + col * scale, y + row as i32 * scale);
                    for dy in 0..scale {
                        for dx in 0..scale {
                            area.draw_pixel((px + dx, py + dy), color)?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Width in pixels of `s` at `scale`.
pub fn text_width(s: &str, scale: i32) -> i32 {
    s.chars().count() as i32 * 8 * scale
}

/// A "nice" axis maximum (1, 2 or 5 times a power of ten) at or above `v`.
pub fn nice_max(v: f64) -> f64 {
    let v = v.max(1e-9);
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * p).find(|c| *c >= v).unwrap_or(10.0 * p)
}

fn label(v: f64) -> String {
    if v == v.round() {
        format!("{v:.0}")
    } else if (v * 10.0) == (v * 10.0).round() {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws a `rows` × `cols` grid of CDF panels (x: milliseconds, y: fraction of trials) with a
/// title and a legend, and writes the PNG.
pub fn cdf_grid(path: &Path, title: &str, legend: &[String], rows: usize, cols: usize, panels: &[Panel]) -> Res {
    let (w, h) = (cols as u32 * 500, 90 + rows as u32 * 300);
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE)?;
    text(&root, 20, 14, title, 2, &BLACK)?;
    let mut lx = 20;
    for (i, l) in legend.iter().enumerate() {
        let c = &COLORS[i % COLORS.len()];
        root.draw(&Rectangle::new([(lx, 52), (lx + 30, 56)], c.filled()))?;
        text(&root, lx + 38, 47, l, 2, &BLACK)?;
        lx += 38 + text_width(l, 2) + 40;
    }
    let grid = root.margin(80, 0, 0, 0).split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(grid.iter()) {
        let max_us = panel.curves.iter().flat_map(|c| c.samples_us.iter()).copied().max().unwrap_or(1);
        let xmax = nice_max(max_us as f64 / 1000.0);
        let mut chart = ChartBuilder::on(area)
            .margin_top(34)
            .margin_left(58)
            .margin_right(24)
            .margin_bottom(40)
            .build_cartesian_2d(0f64..xmax, 0f64..1f64)?;
        let (x0, y0) = chart.backend_coord(&(0.0, 0.0));
        let (x1, y1) = chart.backend_coord(&(xmax, 1.0));
        let grey = RGBColor(0xdd, 0xdd, 0xdd);
        for k in 0..=4 {
            let f = k as f64 / 4.0;
            let (gx, _) = chart.backend_coord(&(xmax * f, 0.0));
            let (_, gy) = chart.backend_coord(&(0.0, f));
            root.draw(&PathElement::new(vec![(gx, y0), (gx, y1)], grey))?;
            root.draw(&PathElement::new(vec![(x0, gy), (x1, gy)], grey))?;
            let xl = label(xmax * f);
            text(&root, gx - text_width(&xl, 1) / 2, y0 + 6, &xl, 1, &BLACK)?;
            let yl = format!("{:.0}%", f * 100.0);
            text(&root, x0 - 6 - text_width(&yl, 1), gy - 4, &yl, 1, &BLACK)?;
        }
        root.draw(&PathElement::new(vec![(x0, y1), (x0, y0), (x1, y0)], BLACK))?;
        text(&root, x1 - text_width("ms", 1), y0 + 20, "ms", 1, &BLACK)?;
        text(&root, x0, y1 - 26, &panel.title, 2, &BLACK)?;
        for c in &panel.curves {
            let mut s = c.samples_us.clone();
            s.sort_unstable();
            if s.is_empty() {
                continue;
            }
            let n = s.len() as f64;
            // A step CDF, thinned to at most ~600 points.
            let stride = (s.len() / 600).max(1);
            let mut pts = vec![(0.0, 0.0), (s[0] as f64 / 1000.0, 0.0)];
            for (i, v) in s.iter().enumerate().step_by(stride) {
                pts.push((*v as f64 / 1000.0, (i + 1) as f64 / n));
            }
            pts.push((*s.last().expect("non-empty") as f64 / 1000.0, 1.0));
            pts.push((xmax, 1.0));
            let color = COLORS[c.series % COLORS.len()];
            chart.draw_series(LineSeries::new(pts, color.stroke_width(2)))?;
        }
    }
    root.present()?;
    Ok(())
}
