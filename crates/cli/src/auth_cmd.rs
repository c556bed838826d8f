//! `pincer auth login|status|use|logout`. An API key is read from standard input when it is
//! not a terminal, else from a prompt that does not echo; the openai-codex login is the
//! PKCE flow: open the printed URL, and the browser's redirect reaches a listener on
//! localhost:1455 — or paste the redirect URL (or the code) at the prompt instead. The
//! github-copilot and anthropic (Claude Pro/Max) sign-ins are in `auth_logins`.
//! Secrets are never printed: keys show as `abc***xyz`.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use pincer_auth::{
    AuthStore, CodexOAuth, CodexOAuthConfig, ProfileId, ProfileStatus, format_duration_ms,
    mask_secret, now_ms, oauth::CODEX_PROVIDER,
};

use crate::app::App;
use crate::auth_browser::{LoginTexts, finish_browser_login};
use crate::cli::AuthCommand;

/// How long the login waits for the browser before it only waits for a paste.
pub(crate) const CALLBACK_WAIT: Duration = Duration::from_secs(60);

pub async fn run(app: &App, command: AuthCommand) -> Result<ExitCode> {
    app.ensure_home()?;
    let store = AuthStore::new(app.auth_path());
    match command {
        AuthCommand::Login {
            provider,
            name,
            paste,
            oauth,
            enterprise,
        } => {
            if provider == CODEX_PROVIDER {
                return codex_login(app, &store, paste).await;
            }
            if provider == pincer_auth::oauth::gemini_cli::GEMINI_CLI_PROVIDER {
                return crate::auth_gemini::gemini_cli_login(app, &store, name.as_deref(), paste)
                    .await;
            }
            if provider == pincer_auth::oauth::COPILOT_PROVIDER {
                return crate::auth_logins::copilot_login(
                    app,
                    &store,
                    name.as_deref(),
                    enterprise.as_deref(),
                )
                .await;
            }
            // A person at a terminal signs in (Claude Pro/Max); a piped key is stored.
            if provider == pincer_auth::oauth::ANTHROPIC_PROVIDER
                && (oauth || std::io::stdin().is_terminal())
            {
                return crate::auth_logins::anthropic_login(app, &store, name.as_deref(), paste)
                    .await;
            }
            let registry = app.registry()?;
            if !registry.providers().contains(&provider.as_str()) {
                bail!(
                    "unknown provider {provider:?}; known providers: {}, {CODEX_PROVIDER}",
                    registry.providers().join(", ")
                );
            }
            let key = read_key(&provider)?;
            let id = store.add_api_key(&provider, name.as_deref(), &key)?;
            println!("Auth profile created: {id} (key {})", mask_secret(&key));
            println!("It is used for {provider} from now on; `pincer auth status` lists profiles.");
        }
        AuthCommand::Status => {
            let list = store.status(now_ms())?;
            if list.is_empty() {
                println!(
                    "No auth profiles. Keys in the environment (e.g. ANTHROPIC_API_KEY) are used as they are."
                );
                println!("Add one with: pincer auth login <provider>");
            }
            for status in &list {
                println!("{}", status_line(status, now_ms()));
            }
            println!("Profile file: {}", store.path().display());
            let active: Vec<String> = list
                .iter()
                .filter(|s| s.active)
                .map(|s| s.id.to_string())
                .collect();
            println!(
                "Active profile: {}",
                if active.is_empty() {
                    "none".to_owned()
                } else {
                    active.join(", ")
                }
            );
        }
        AuthCommand::Use { profile } => {
            store.set_active(&ProfileId::from(profile.as_str()))?;
            println!("Active profile set: {profile}");
        }
        AuthCommand::Logout { profile, all } => match (profile, all) {
            (_, true) => {
                let n = store.remove_all()?;
                println!("All auth profiles removed ({n}).");
            }
            (Some(profile), false) => {
                store.remove(&ProfileId::from(profile.as_str()))?;
                println!("Profile removed: {profile}");
            }
            (None, false) => {
                bail!("name the profile to remove (`pincer auth status` lists them), or pass --all")
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// `* <id> provider=… type=… key=abc***xyz expires=…m cooldown=…`, as lainclaw prints it.
fn status_line(s: &ProfileStatus, now: u64) -> String {
    let mut line = format!(
        "{} {} provider={} type={} secret={}",
        if s.active { "*" } else { "-" },
        s.id,
        s.provider,
        s.kind.as_str(),
        s.masked_secret
    );
    if let Some(ms) = s.expires_in_ms {
        if ms <= 0 {
            line.push_str(" expires=expired");
        } else {
            line.push_str(&format!(" expires={}m", ms / 60_000));
        }
    }
    if let Some(account) = &s.account_id {
        line.push_str(&format!(" account={account}"));
    }
    if let Some(until) = s.cooldown_until.filter(|u| *u > now) {
        line.push_str(&format!(" cooldown={}", format_duration_ms(until - now)));
    }
    if let Some(until) = s.disabled_until.filter(|u| *u > now) {
        let reason = s.disabled_reason.as_deref().unwrap_or("failures");
        line.push_str(&format!(
            " disabled={} ({reason})",
            format_duration_ms(until - now)
        ));
    }
    line
}

/// The key from standard input (piped) or a prompt without echo (terminal).
fn read_key(provider: &str) -> Result<String> {
    let stdin = std::io::stdin();
    let key = if stdin.is_terminal() {
        eprint!("Paste the API key for {provider} (input hidden): ");
        let _ = std::io::stderr().flush();
        let line = read_line_hidden()?;
        eprintln!();
        line
    } else {
        let mut text = String::new();
        stdin
            .lock()
            .read_to_string(&mut text)
            .context("cannot read the key from standard input")?;
        text
    };
    let key = key.trim().to_owned();
    if key.is_empty() {
        bail!(
            "no key given; pipe it in (`echo $KEY | pincer auth login {provider}`) or paste it at the prompt"
        );
    }
    Ok(key)
}

/// Reads a line with the terminal's echo off, restoring it afterwards.
fn read_line_hidden() -> Result<String> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).context("cannot read the terminal settings")?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).context("cannot turn off the echo")?;
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    read.context("cannot read the key")?;
    Ok(line)
}

/// Where the openai-codex sign-in happens: OpenAI's service, unless
/// `PINCER_OPENAI_AUTH_ISSUER` points elsewhere (a proxy, or a test's fake server).
pub fn codex_config(app: &App) -> CodexOAuthConfig {
    match app.env.var("PINCER_OPENAI_AUTH_ISSUER") {
        Some(issuer) => CodexOAuthConfig::with_issuer(&issuer),
        None => CodexOAuthConfig::default(),
    }
}

/// The openai-codex OAuth (PKCE) login.
async fn codex_login(app: &App, store: &AuthStore, paste_only: bool) -> Result<ExitCode> {
    let mut config = codex_config(app);
    if let Some(port) = crate::auth_browser::callback_port_override(app, paste_only) {
        config = config.callback_port(port);
    }
    let oauth = CodexOAuth::new(config)?;
    let login = oauth.begin().await?;
    let texts = LoginTexts {
        provider: CODEX_PROVIDER,
        service: "ChatGPT",
        paste: "the redirect URL (or the code)",
        paste_late: "the redirect URL or the code",
    };
    let credential = finish_browser_login(login, paste_only, &texts).await?;
    let expires = credential.expires;
    let id = store.add_oauth(CODEX_PROVIDER, credential)?;
    println!("Auth profile created: {id}");
    println!(
        "Credential expires: {}",
        pincer_base::time::iso_from_ms(expires as i64)
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) type Pasted =
    std::sync::Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<std::io::Result<String>>>>;

/// Reads one line of standard input on a thread of its own (a detached thread, so a login
/// finished by the browser never waits for it).
pub(crate) fn paste_reader() -> Pasted {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    std::thread::spawn(move || {
        let mut line = String::new();
        let result = std::io::stdin().lock().read_line(&mut line).map(|_| line);
        let _ = tx.blocking_send(result);
    });
    std::sync::Arc::new(tokio::sync::Mutex::new(rx))
}

/// The next non-empty pasted line; `None` when standard input ends first.
pub(crate) async fn next_paste(pasted: &Pasted) -> Result<Option<String>> {
    match pasted.lock().await.recv().await {
        Some(Ok(line)) if !line.trim().is_empty() => Ok(Some(line.trim().to_owned())),
        Some(Ok(_)) | None => Ok(None),
        Some(Err(e)) => Err(e).context("cannot read standard input"),
    }
}
