//! `pincer mcp login|logout <server>`: OAuth for an HTTP MCP server. Login prints the
//! authorization URL, waits for the browser's redirect on a loopback listener
//! (127.0.0.1, a random port, one request answered at a time, 5 minutes at most) and has
//! `pincer_mcp` exchange the code and save the tokens in
//! `$PINCER_HOME/mcp-auth/<server>.json`; logout deletes that file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::app::App;

/// How long login waits for the browser to come back.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long one connection to the listener may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head read from the browser.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// The redirect's path on the listener.
const CALLBACK_PATH: &str = "/callback";

/// `$PINCER_HOME/mcp-auth`: the OAuth credentials of HTTP MCP servers.
pub fn auth_dir(home: &Path) -> PathBuf {
    home.join("mcp-auth")
}

fn credentials_file(app: &App, server: &str) -> Result<PathBuf> {
    if !app.config.mcp.servers.contains_key(server) {
        bail!("no MCP server \"{server}\" in mcp.servers");
    }
    Ok(pincer_mcp::client::auth::credentials_path(
        &auth_dir(&app.home),
        server,
    ))
}

pub async fn login(app: &App, server: &str) -> Result<ExitCode> {
    let path = credentials_file(app, server)?;
    let config = &app.config.mcp.servers[server];
    let Some(url) = &config.url else {
        bail!("MCP server {server} has no `url`: OAuth is for HTTP servers");
    };
    app.ensure_home()?;
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("cannot listen on 127.0.0.1 for the redirect")?;
    let port = listener.local_addr()?.port();
    let redirect = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let login = pincer_mcp::client::auth::Login::begin(url, config, &redirect, path.clone())
        .await
        .with_context(|| format!("MCP server {server}"))?;
    println!("Open this URL in a browser to authorize Pincer with {server}:");
    println!("{}", login.authorization_url());
    println!(
        "Waiting for the redirect to {redirect} ({} minutes)…",
        LOGIN_TIMEOUT.as_secs() / 60
    );
    let callback = tokio::time::timeout(LOGIN_TIMEOUT, wait_for_redirect(&listener, port))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "no redirect within {} minutes; run pincer mcp login {server} again",
                LOGIN_TIMEOUT.as_secs() / 60
            )
        })??;
    login
        .finish(&callback)
        .await
        .with_context(|| format!("MCP server {server}"))?;
    println!("Logged in to {server}; tokens saved in {}", path.display());
    Ok(ExitCode::SUCCESS)
}

pub async fn logout(app: &App, server: &str) -> Result<ExitCode> {
    let path = credentials_file(app, server)?;
    match tokio::fs::remove_file(&path).await {
        Ok(()) => println!("Logged out of {server} (deleted {})", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("Not logged in to {server}")
        }
        Err(e) => return Err(e).with_context(|| format!("deleting {}", path.display())),
    }
    Ok(ExitCode::SUCCESS)
}

/// Answers requests until one comes to [`CALLBACK_PATH`]; returns its full URL. An
/// `error` the authorization server sent back ends the login.
async fn wait_for_redirect(listener: &TcpListener, port: u16) -> Result<String> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let head = match tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await {
            Ok(Ok(head)) => head,
            // A client that sends nothing useful is not the browser coming back.
            _ => continue,
        };
        let target = request_target(&head);
        let Some(target) = target.filter(|t| t.split('?').next() == Some(CALLBACK_PATH)) else {
            let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
            continue;
        };
        let url = format!("http://127.0.0.1:{port}{target}");
        let parsed = reqwest::Url::parse(&url).context("the redirect's URL is malformed")?;
        let error = parsed
            .query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned());
        if let Some(error) = error {
            let _ = respond(&mut stream, "400 Bad Request", "Authorization failed.").await;
            bail!("the authorization server refused: {error}");
        }
        let _ = respond(
            &mut stream,
            "200 OK",
            "Pincer is authorized. You can close this window.",
        )
        .await;
        return Ok(url);
    }
}

/// The request head (up to the blank line), at most [`MAX_REQUEST_HEAD`] bytes.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Result<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
        if head.len() > MAX_REQUEST_HEAD {
            bail!("request head too large");
        }
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The target of a `GET <target> HTTP/1.x` request line.
fn request_target(head: &str) -> Option<&str> {
    let mut parts = head.lines().next()?.split(' ');
    (parts.next()? == "GET").then_some(())?;
    let target = parts.next()?;
    target.starts_with('/').then_some(target)
}

async fn respond(stream: &mut tokio::net::TcpStream, status: &str, body: &str) -> Result<()> {
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::request_target;

    #[test]
    fn request_targets() {
        assert_eq!(
            request_target("GET /callback?code=a&state=b HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some("/callback?code=a&state=b")
        );
        assert_eq!(request_target("POST /callback HTTP/1.1\r\n"), None);
        assert_eq!(request_target("GET http://evil/ HTTP/1.1\r\n"), None);
        assert_eq!(request_target(""), None);
        assert_eq!(request_target("GET"), None);
    }
}
