//! A fixture web site on 127.0.0.1 for `web_fetch` (and the CLI's tests): a news-like
//! article among boilerplate, redirect chains and loops, a redirect to a cloud metadata
//! address, bodies that are huge, endless or trickle in, pages in Latin-1 and Windows-1251
//! (declared in the header, in a `<meta>`, or not at all), malformed HTML, JSON, plain text,
//! Markdown, a gzip-encoded page, a PDF, a PNG, a 404, and `/app` (a button and a form to
//! drive in a browser). It counts the requests per path
//! so a test can tell a cache hit from a fetch.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use bytes::Bytes;
use futures_util::stream;
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Bytes `/huge` sends (50 MiB).
pub const HUGE_BYTES: usize = 50 * 1024 * 1024;

/// Seconds between the bytes `/slow` trickles.
pub const SLOW_INTERVAL: Duration = Duration::from_secs(2);

/// The article `/article` (and `/gzip`) serves: navigation, a sidebar, a cookie banner and
/// a footer around one real article.
pub const ARTICLE_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Otters Learn to Use Tools | The Daily Fixture</title>
<style>body { font-family: serif; }</style>
<script>window.tracking = "SCRIPT-SHOULD-NOT-APPEAR";</script>
</head>
<body>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. Accept all cookies?</div>
<header class="site-header">
  <nav class="main-nav">
    <a href="/">Home</a> | <a href="/world">World</a> | <a href="/sport">Sport</a> | <a href="/subscribe">Subscribe now</a>
  </nav>
</header>
<main>
<article class="post">
  <h1>Otters Learn to Use Tools</h1>
  <p class="byline">By Jane Fixture</p>
  <p>Sea otters along the northern coast have been observed using rocks to open shellfish, a behaviour researchers at the <a href="https://marine.example.org/otters">Marine Institute</a> say is passed from mother to pup over many seasons of careful practice.</p>
  <p>The team followed forty otters for three years, recording every dive, every rock and every shell. Young otters that watched their mothers crack clams learned the trick months earlier than those that did not, and they kept their favourite stones tucked under an arm while swimming.</p>
  <h2>Why it matters</h2>
  <p>Tool use was once thought to be rare among marine mammals. The findings, published in the <a href="/journal/otters-2026">Journal of Coastal Behaviour</a>, suggest that culture shapes how otters feed, and that protecting older females protects the knowledge of the whole group.</p>
  <p>Researchers now plan to tag otters in two more bays to see whether the rock-cracking tradition differs from place to place, much as dialects differ among songbirds.</p>
</article>
</main>
<aside class="sidebar">
  <h3>Most read</h3>
  <ul><li><a href="/celebrity">Celebrity buys island</a></li><li><a href="/weather">Weather this week</a></li></ul>
  <div class="advert">ADVERTISEMENT: Buy fixture shoes today!</div>
</aside>
<footer class="site-footer">
  <p>Copyright 2026 The Daily Fixture. All rights reserved. <a href="/privacy">Privacy policy</a> · <a href="/terms">Terms</a></p>
</footer>
</body>
</html>
"#;

/// `/app`: a page to drive in a browser — a button that changes the heading and a form
/// whose submit shows what was typed (no network, no scripts from elsewhere).
pub const APP_HTML: &str = r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Fixture app</title></head>
<body>
<h1 id="status">Waiting</h1>
<button onclick="document.getElementById('status').textContent = 'Clicked'">Change</button>
<form onsubmit="event.preventDefault(); document.getElementById('status').textContent = 'Hello, ' + document.getElementById('name').value">
<label for="name">Name</label> <input id="name" type="text">
<button type="submit">Greet</button>
</form>
</body></html>
"#;

/// `/broken`: unclosed and misnested tags, stray `<` and `&`, a tag left open at the end.
pub const BROKEN_HTML: &str = "<html><head><title>Broken & <b>page</title><body><div><p>First \
<b>bold <i>both</b> italic</i> paragraph & a stray < sign</div></p><table><tr><td>cell one<td>cell \
two</table><p>Last words<a href=\"/x\"";

/// `/latin1`'s text (sent as ISO-8859-1, declared in Content-Type).
pub const LATIN1_TEXT: &str = "Café crème brûlée à la française, naïve façade.";

/// `/meta-charset`'s paragraph ("Hello, world! Encoding from the meta tag."), sent as
/// Windows-1251, named only by `<meta charset>`.
pub const CYRILLIC_TEXT: &str = "Привет, мир! Кодировка из тега meta.";
const CYRILLIC_CP1251: [u8; 36] = [
    207, 240, 232, 226, 229, 242, 44, 32, 236, 232, 240, 33, 32, 202, 238, 228, 232, 240, 238, 226,
    234, 224, 32, 232, 231, 32, 242, 229, 227, 224, 32, 109, 101, 116, 97, 46,
];

/// `/data.json` as sent (compact).
pub const DATA_JSON: &str =
    r#"{"name":"pincer","tags":["web","fetch"],"nested":{"depth":2,"ok":true}}"#;

/// `/notes.txt`.
pub const NOTES_TXT: &str = "Shopping list:\n- rocks\n- clams\n<b>not html</b>\n";

/// `/readme.md`.
pub const README_MD: &str = "# Readme\n\nSome *Markdown* with a [link](https://example.org/).\n";

/// `/doc.pdf`'s bytes: enough of a PDF to be sniffed as one.
pub const PDF_BYTES: &[u8] = b"%PDF-1.4\n% fixture\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n";

/// `/image.png`'s bytes: a PNG signature and an IHDR start.
pub const PNG_BYTES: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01";

/// Why the site could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeSiteError {
    #[error("cannot bind 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
}

type Hits = Arc<Mutex<HashMap<String, usize>>>;

/// The running site; dropping it (or [`FakeSite::shutdown`]) stops the server.
#[derive(Debug)]
pub struct FakeSite {
    addr: SocketAddr,
    hits: Hits,
    stop: CancellationToken,
}

impl FakeSite {
    /// Serves the site on a free port of 127.0.0.1.
    pub async fn start() -> Result<FakeSite, FakeSiteError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(FakeSiteError::Bind)?;
        let addr = listener.local_addr().map_err(FakeSiteError::Bind)?;
        let hits = Hits::default();
        let stop = CancellationToken::new();
        let app = router(hits.clone());
        let token = stop.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(token.cancelled_owned());
            let _ = serve.await;
        });
        Ok(FakeSite { addr, hits, stop })
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests reached `path` (without the query).
    pub fn hits(&self, path: &str) -> usize {
        let hits = self.hits.lock().unwrap_or_else(|e| e.into_inner());
        hits.get(path).copied().unwrap_or(0)
    }

    /// Stops serving; streaming responses end when their connections drop.
    pub fn shutdown(&self) {
        self.stop.cancel();
    }
}

impl Drop for FakeSite {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn router(hits: Hits) -> Router {
    Router::new()
        .route("/article", get(|| async { html(ARTICLE_HTML) }))
        .route("/app", get(|| async { html(APP_HTML) }))
        .route("/redirect/{n}", get(redirect_chain))
        .route("/loop", get(|| async { Redirect::to("/loop") }))
        .route(
            "/to-private",
            get(|| async { Redirect::to("http://169.254.169.254/latest/meta-data/") }),
        )
        .route("/to", get(redirect_to))
        .route("/huge", get(huge))
        .route("/endless", get(endless))
        .route("/slow", get(slow))
        .route("/latin1", get(latin1))
        .route("/unlabelled", get(unlabelled))
        .route("/unknown-charset", get(unknown_charset))
        .route("/wrong-charset", get(wrong_charset))
        .route("/meta-charset", get(meta_charset))
        .route("/broken", get(|| async { html(BROKEN_HTML) }))
        .route(
            "/data.json",
            get(|| async { typed("application/json", DATA_JSON) }),
        )
        .route(
            "/notes.txt",
            get(|| async { typed("text/plain; charset=utf-8", NOTES_TXT) }),
        )
        .route(
            "/readme.md",
            get(|| async { typed("text/markdown", README_MD) }),
        )
        .route("/gzip", get(gzip))
        .route(
            "/doc.pdf",
            get(|| async { typed("application/pdf", PDF_BYTES) }),
        )
        .route(
            "/image.png",
            get(|| async { typed("image/png", PNG_BYTES) }),
        )
        .route("/missing", get(missing))
        .layer(middleware::from_fn_with_state(hits, count))
}

async fn count(State(hits): State<Hits>, request: Request, next: Next) -> Response {
    {
        let mut hits = hits.lock().unwrap_or_else(|e| e.into_inner());
        *hits.entry(request.uri().path().to_owned()).or_default() += 1;
    }
    next.run(request).await
}

fn typed(content_type: &'static str, body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

fn html(body: &'static str) -> Response {
    typed("text/html; charset=utf-8", body)
}

/// `/redirect/<n>`: `n` hops, the last one to `/article`.
async fn redirect_chain(Path(n): Path<u32>) -> Redirect {
    if n <= 1 {
        Redirect::to("/article")
    } else {
        Redirect::to(&format!("/redirect/{}", n - 1))
    }
}

#[derive(Deserialize)]
struct To {
    url: String,
}

async fn redirect_to(Query(to): Query<To>) -> Response {
    // A 302 with any Location, even one `Redirect` would not build.
    match HeaderValue::from_str(&to.url) {
        Ok(location) => (StatusCode::FOUND, [(header::LOCATION, location)]).into_response(),
        Err(_) => StatusCode::BAD_REQUEST.into_response(),
    }
}

async fn huge() -> Response {
    const CHUNK: usize = 1024 * 1024;
    let chunks = stream::iter(
        (0..HUGE_BYTES / CHUNK).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; CHUNK]))),
    );
    let mut response = typed("text/plain", Body::from_stream(chunks));
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(HUGE_BYTES));
    response
}

async fn endless() -> Response {
    let chunk = Bytes::from_static(b"<p>and again</p>\n");
    let chunks = stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
    typed("text/html", Body::from_stream(chunks))
}

async fn slow() -> Response {
    let first = stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"slow")) });
    let rest = stream::unfold((), |()| async {
        tokio::time::sleep(SLOW_INTERVAL).await;
        Some((Ok::<_, std::io::Error>(Bytes::from_static(b".")), ()))
    });
    typed(
        "text/plain",
        Body::from_stream(futures_util::StreamExt::chain(first, rest)),
    )
}

/// `text` in ISO-8859-1 (every char of it is below U+0100).
fn latin1_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

fn latin1_page() -> Vec<u8> {
    latin1_bytes(&format!(
        "<html><head><title>Caf\u{e9}</title></head><body><p>{LATIN1_TEXT}</p></body></html>"
    ))
}

async fn latin1() -> Response {
    typed("text/html; charset=ISO-8859-1", latin1_page())
}

async fn unlabelled() -> Response {
    typed("text/html", latin1_page())
}

async fn unknown_charset() -> Response {
    typed(
        "text/plain; charset=x-no-such-charset",
        "d\u{e9}j\u{e0} vu in UTF-8",
    )
}

async fn wrong_charset() -> Response {
    // Latin-1 bytes under a UTF-8 label: the bad bytes become U+FFFD.
    typed("text/plain; charset=utf-8", latin1_bytes("caf\u{e9} ok"))
}

async fn meta_charset() -> Response {
    let mut page =
        b"<html><head><meta charset=\"windows-1251\"><title>meta</title></head><body><p>".to_vec();
    page.extend_from_slice(&CYRILLIC_CP1251);
    page.extend_from_slice(b"</p></body></html>");
    typed("text/html", page)
}

async fn gzip() -> Response {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let compressed = encoder
        .write_all(ARTICLE_HTML.as_bytes())
        .and_then(|()| encoder.finish());
    match compressed {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_ENCODING, "gzip"),
            ],
            bytes,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn missing() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/html")],
        "<html><body><h1>Not Found</h1><p>No page here.</p></body></html>",
    )
        .into_response()
}
