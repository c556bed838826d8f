//! A received picture made fit for a model: decoded to check it (a corrupt or truncated file
//! is not sent; the provider would refuse the whole request), and when its longest side is
//! over [`MAX_SIDE`] pixels or it is over the size limit, resized to fit and re-encoded
//! (JPEG, or PNG when it has transparency), as OpenClaw shrinks images before a model sees
//! them. A picture that already fits is sent byte for byte as it came.
//!
//! Decoding is bounded: at most [`MAX_PIXELS_SIDE`] pixels a side and [`MAX_DECODE_BYTES`]
//! of memory, so a small file claiming a huge canvas (a decompression bomb) is refused
//! instead of filling the memory. Without the `images` feature pictures are only
//! size-checked.

/// The longest side, in pixels, of a picture sent to a model.
pub const MAX_SIDE: u32 = 2048;
/// The largest canvas decoded, a side.
pub const MAX_PIXELS_SIDE: u32 = 16_384;
/// The most memory one decode may take.
pub const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;

/// A picture ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub bytes: Vec<u8>,
    pub mime: String,
    /// The size before and after, when it was resized: `(width, height)` each.
    pub resized: Option<((u32, u32), (u32, u32))>,
}

/// `bytes` (of type `mime`, one of the four types models take) as the model is sent it, or
/// why it is not.
#[cfg(feature = "images")]
pub fn prepare(bytes: Vec<u8>, mime: &str, max_bytes: u64) -> Result<Prepared, String> {
    use image::{GenericImageView as _, ImageFormat, ImageReader, Limits};
    let format = match mime {
        "image/png" => ImageFormat::Png,
        "image/jpeg" => ImageFormat::Jpeg,
        "image/gif" => ImageFormat::Gif,
        "image/webp" => ImageFormat::WebP,
        other => return Err(format!("{other} is not a type models take")),
    };
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_PIXELS_SIDE);
    limits.max_image_height = Some(MAX_PIXELS_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    let mut reader = ImageReader::with_format(std::io::Cursor::new(&bytes), format);
    reader.limits(limits);
    let picture = reader
        .decode()
        .map_err(|e| format!("the picture could not be read ({e})"))?;
    let (width, height) = picture.dimensions();
    if width.max(height) <= MAX_SIDE && bytes.len() as u64 <= max_bytes {
        return Ok(Prepared {
            bytes,
            mime: mime.to_owned(),
            resized: None,
        });
    }
    // Smaller steps until it fits: the side first, then the JPEG quality.
    let transparent = picture.color().has_alpha();
    for side in [MAX_SIDE, 1536, 1024, 768] {
        let smaller = if width.max(height) > side {
            picture.resize(side, side, image::imageops::FilterType::Triangle)
        } else {
            picture.clone()
        };
        for quality in [85u8, 70, 55] {
            let (encoded, mime) = encode(&smaller, transparent, quality)?;
            if encoded.len() as u64 <= max_bytes {
                return Ok(Prepared {
                    bytes: encoded,
                    mime: mime.to_owned(),
                    resized: Some(((width, height), smaller.dimensions())),
                });
            }
            if transparent {
                break; // PNG has no quality to lower.
            }
        }
    }
    Err(format!(
        "it is too large even when shrunk to 768 pixels ({} bytes allowed)",
        max_bytes
    ))
}

#[cfg(feature = "images")]
fn encode(
    picture: &image::DynamicImage,
    transparent: bool,
    quality: u8,
) -> Result<(Vec<u8>, &'static str), String> {
    let mut out = std::io::Cursor::new(Vec::new());
    let failed = |e: image::ImageError| format!("the picture could not be re-encoded ({e})");
    if transparent {
        picture
            .write_to(&mut out, image::ImageFormat::Png)
            .map_err(failed)?;
        Ok((out.into_inner(), "image/png"))
    } else {
        let rgb = picture.to_rgb8();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
            .encode_image(&rgb)
            .map_err(failed)?;
        Ok((out.into_inner(), "image/jpeg"))
    }
}

/// Without the `images` feature: the picture as it came, if it is within `max_bytes`.
#[cfg(not(feature = "images"))]
pub fn prepare(bytes: Vec<u8>, mime: &str, max_bytes: u64) -> Result<Prepared, String> {
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "it is {}, over the limit of {} for images",
            crate::media_input::size_text(bytes.len() as u64),
            crate::media_input::size_text(max_bytes)
        ));
    }
    Ok(Prepared {
        bytes,
        mime: mime.to_owned(),
        resized: None,
    })
}

#[cfg(all(test, feature = "images"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn png(width: u32, height: u32, alpha: bool) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let picture = if alpha {
            image::DynamicImage::ImageRgba8(image::RgbaImage::from_fn(width, height, |x, y| {
                image::Rgba([(x % 256) as u8, (y % 256) as u8, 7, 128])
            }))
        } else {
            image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
                image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8])
            }))
        };
        picture.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_picture_that_fits_goes_as_it_came() {
        let bytes = png(64, 32, false);
        let prepared = prepare(bytes.clone(), "image/png", 6 << 20).unwrap();
        assert_eq!(
            prepared,
            Prepared {
                bytes,
                mime: "image/png".into(),
                resized: None
            }
        );
    }

    #[test]
    fn a_big_picture_is_shrunk_to_the_longest_side_and_re_encoded() {
        let prepared = prepare(png(3000, 1500, false), "image/png", 6 << 20).unwrap();
        assert_eq!(prepared.mime, "image/jpeg");
        assert_eq!(prepared.resized, Some(((3000, 1500), (2048, 1024))));
        let back = image::load_from_memory(&prepared.bytes).unwrap();
        assert_eq!((back.width(), back.height()), (2048, 1024));
        // Transparency is kept: PNG.
        let prepared = prepare(png(2100, 100, true), "image/png", 6 << 20).unwrap();
        assert_eq!(prepared.mime, "image/png");
        assert_eq!(prepared.resized, Some(((2100, 100), (2048, 98))));
    }

    #[test]
    fn a_picture_over_the_size_limit_is_made_smaller() {
        let bytes = png(1000, 1000, false);
        let limit = bytes.len() as u64 / 4;
        let prepared = prepare(bytes, "image/png", limit).unwrap();
        assert!(prepared.bytes.len() as u64 <= limit);
        assert_eq!(prepared.mime, "image/jpeg");
    }

    #[test]
    fn corrupt_truncated_and_bomb_pictures_are_refused() {
        let whole = png(40, 40, false);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01".to_vec(),
                "image/png",
            ),
            (whole[..whole.len() / 2].to_vec(), "image/png"),
            (b"\xff\xd8\xff\xe0 not really".to_vec(), "image/jpeg"),
            (whole.clone(), "image/bmp"),
        ];
        for (bytes, mime) in cases {
            let err = prepare(bytes, mime, 6 << 20).unwrap_err();
            assert!(
                err.starts_with("the picture could not be read") || err.contains("not a type"),
                "{mime}: {err}"
            );
        }
        // A canvas wider than any decode may be (a small file, a huge picture).
        let err = prepare(png(MAX_PIXELS_SIDE + 1, 1, false), "image/png", 6 << 20).unwrap_err();
        assert!(err.starts_with("the picture could not be read"), "{err}");
    }
}
