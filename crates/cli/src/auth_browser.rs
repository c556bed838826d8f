//! The browser part every PKCE sign-in of `pincer auth login` shares (openai-codex,
//! anthropic, google-gemini-cli): print the URL, then take whichever comes first — the
//! browser's redirect to the loopback listener or a paste at the prompt.

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;
use pincer_auth::oauth::gemini_cli::GeminiCliLogin;
use pincer_auth::oauth::{AnthropicLogin, CodexLogin, LoginStart, OAuthError};
use pincer_auth::{OAuthCredential, Secret, now_ms};

use crate::app::App;
use crate::auth_cmd::{CALLBACK_WAIT, next_paste, paste_reader};

/// The loopback port a sign-in listens on when it is not its provider's own:
/// `PINCER_OAUTH_CALLBACK_PORT`, else none at all (0) for a paste-only login.
pub(crate) fn callback_port_override(app: &App, paste_only: bool) -> Option<u16> {
    app.env
        .var("PINCER_OAUTH_CALLBACK_PORT")
        .and_then(|p| p.parse().ok())
        .or(paste_only.then_some(0))
}

/// A login in progress, as the three providers' login types all offer it.
pub(crate) trait BrowserLogin {
    fn start(&self) -> &LoginStart;
    async fn wait_for_callback(&mut self, timeout: Duration) -> Result<Option<Secret>, OAuthError>;
    async fn exchange(self, code: &Secret, now_ms: u64) -> Result<OAuthCredential, OAuthError>;
    async fn finish_with_pasted(
        self,
        input: &str,
        now_ms: u64,
    ) -> Result<OAuthCredential, OAuthError>;
}

macro_rules! browser_login {
    ($($login:ty),*) => {$(
        impl BrowserLogin for $login {
            fn start(&self) -> &LoginStart {
                <$login>::start(self)
            }
            async fn wait_for_callback(
                &mut self,
                timeout: Duration,
            ) -> Result<Option<Secret>, OAuthError> {
                <$login>::wait_for_callback(self, timeout).await
            }
            async fn exchange(self, code: &Secret, now_ms: u64) -> Result<OAuthCredential, OAuthError> {
                <$login>::exchange(self, code, now_ms).await
            }
            async fn finish_with_pasted(
                self,
                input: &str,
                now_ms: u64,
            ) -> Result<OAuthCredential, OAuthError> {
                <$login>::finish_with_pasted(self, input, now_ms).await
            }
        }
    )*};
}

browser_login!(CodexLogin, AnthropicLogin, GeminiCliLogin);

/// What one sign-in says to the user.
pub(crate) struct LoginTexts {
    /// `pincer auth login <provider>`.
    pub(crate) provider: &'static str,
    /// "sign in to …".
    pub(crate) service: &'static str,
    /// "paste … here and press Enter".
    pub(crate) paste: &'static str,
    /// "No answer from the browser; paste …:".
    pub(crate) paste_late: &'static str,
}

/// Shows the URL and finishes the login from the browser's redirect or a paste
/// (`paste_only`: a paste, without waiting for the browser).
pub(crate) async fn finish_browser_login<L: BrowserLogin>(
    mut login: L,
    paste_only: bool,
    texts: &LoginTexts,
) -> Result<OAuthCredential> {
    println!(
        "Open this URL in your browser to sign in to {}:\n\n{}\n",
        texts.service,
        login.start().url
    );
    if let Some(why) = &login.start().listener_error {
        println!("(No callback listener: {why}.)");
    }
    println!(
        "Waiting for the browser… or paste {} here and press Enter.",
        texts.paste
    );
    let _ = std::io::stdout().flush();
    let pasted = paste_reader();
    let required = || async {
        next_paste(&pasted).await?.ok_or_else(|| {
            anyhow::anyhow!(
                "nothing was pasted; run `pincer auth login {}` again",
                texts.provider
            )
        })
    };
    let credential = if paste_only || login.start().listening_on.is_none() {
        login
            .finish_with_pasted(&required().await?, now_ms())
            .await?
    } else {
        tokio::select! {
            code = login.wait_for_callback(CALLBACK_WAIT) => match code? {
                Some(code) => login.exchange(&code, now_ms()).await?,
                None => {
                    println!("No answer from the browser; paste {}:", texts.paste_late);
                    login.finish_with_pasted(&required().await?, now_ms()).await?
                }
            },
            input = async {
                // An empty or closed standard input leaves the browser to finish the login.
                match next_paste(&pasted).await {
                    Ok(Some(line)) => Ok(line),
                    Ok(None) => std::future::pending().await,
                    Err(e) => Err(e),
                }
            } => login.finish_with_pasted(&input?, now_ms()).await?,
        }
    };
    Ok(credential)
}
