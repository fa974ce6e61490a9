//! PNG charts for papers and slides: each SVG chart drawn as a bitmap by resvg, in pure Rust.
//!
//! Contract: [`render_png`] gives the PNG of a chart's SVG at [`SCALE`] times its size (an 880 x 500
//! chart becomes 1760 x 1000 pixels, about 500 dpi across a paper's column), on white, anti-aliased.
//! Same SVG, same bytes: no timestamp or other varying chunk is written, and the text is drawn with
//! one font that the binary carries, DejaVu Sans (from the `dejavu` crate; the page's CSS and most
//! Linux browsers use it for sans-serif too), so no system font is looked up and a fresh machine
//! without any font gives the same picture. Glyphs DejaVu Sans lacks (CJK, say) are not drawn.
//!
//! Why resvg: it renders the very SVG the page shows (one layout, two formats), it is pure Rust with
//! no system library, and with only its `text` feature it does not read system fonts. plotters'
//! bitmap backend would need its `ab_glyph` font feature (which also changes the SVG's layout) and
//! draws lines without anti-aliasing.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia;
use resvg::usvg;

use super::ReportError;

/// Pixels of the PNG per pixel of the SVG.
pub const SCALE: u32 = 2;

/// The font family of every chart's text in the PNG.
pub const FONT_FAMILY: &str = "DejaVu Sans";

/// The fonts the charts are drawn with: DejaVu Sans only, also as the generic families.
pub fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_font_source(usvg::fontdb::Source::Binary(Arc::new(dejavu::sans::regular())));
            db.set_sans_serif_family(FONT_FAMILY);
            db.set_serif_family(FONT_FAMILY);
            db.set_monospace_family(FONT_FAMILY);
            Arc::new(db)
        })
        .clone()
}

/// Options for parsing a chart's SVG: the embedded font, nothing read from disk.
pub fn options() -> usvg::Options<'static> {
    usvg::Options { font_family: FONT_FAMILY.into(), fontdb: fonts(), ..usvg::Options::default() }
}

/// The PNG of `svg`, the chart of figure `id` as [`super::chart::render_svg`] draws it.
pub fn render_png(id: &str, svg: &str) -> Result<Vec<u8>, ReportError> {
    let failed = |message: String| ReportError::Chart { figure: id.to_string(), format: "PNG", message };
    let tree = usvg::Tree::from_str(svg, &options()).map_err(|e| failed(format!("cannot read the SVG: {e}")))?;
    let size = tree.size().to_int_size();
    let (w, h) = (size.width() * SCALE, size.height() * SCALE);
    let mut pixmap = tiny_skia::Pixmap::new(w, h).ok_or_else(|| failed(format!("cannot make a {w} x {h} picture")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    let scale = SCALE as f32;
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| failed(format!("cannot encode the PNG: {e}")))
}
