//! Where the config lives: `$PINCER_HOME/pincer.json5`, the home defaulting to
//! `$HOME/.pincer`. The environment is injected so tests never look at the real `~`.

use std::path::{Path, PathBuf};

use pincer_ai::env::EnvSource;

use crate::error::ConfigError;

/// The config file's name inside the Pincer home.
pub const CONFIG_FILE_NAME: &str = "pincer.json5";

/// `PINCER_HOME` if set, else `$HOME/.pincer`.
pub fn pincer_home(env: &dyn EnvSource) -> Result<PathBuf, ConfigError> {
    if let Some(home) = env.var("PINCER_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    env.var("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| Path::new(&home).join(".pincer"))
        .ok_or(ConfigError::NoHome)
}

/// `<home>/pincer.json5`.
pub fn config_path(home: &Path) -> PathBuf {
    home.join(CONFIG_FILE_NAME)
}
