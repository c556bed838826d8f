//! `pincer config get|set|unset|validate|path|schema`. These work on the file as written
//! (`${ENV}` references kept, secrets masked when printed) and do not need the file to be
//! valid first, so a broken config can be repaired with `config set` / `config unset`;
//! every write is validated as a whole before it reaches the disk.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use pincer_ai::env::EnvSource;
use pincer_config::KeyPath;
use serde_json::Value;

use crate::cli::ConfigCommand;

pub fn run(env: &dyn EnvSource, command: ConfigCommand) -> Result<ExitCode> {
    let home = pincer_config::pincer_home(env)?;
    let path = pincer_config::config_path(&home);
    match command {
        ConfigCommand::Path => println!("{}", path.display()),
        ConfigCommand::Schema => {
            println!(
                "{}",
                serde_json::to_string_pretty(&pincer_config::schema_json())?
            );
        }
        ConfigCommand::Validate => match pincer_config::load(&path, env) {
            Ok(loaded) if loaded.exists => println!("{}: valid", path.display()),
            Ok(_) => println!("{}: no file; the defaults apply", path.display()),
            Err(e) => {
                eprintln!("{e}");
                return Ok(ExitCode::from(1));
            }
        },
        ConfigCommand::Get { path: key } => {
            let raw = read(&path)?;
            let value = match key {
                None => pincer_config::redact(&raw),
                Some(key) => {
                    // Masked by the key it sits under, which a bare value no longer has.
                    match pincer_config::redacted_get(&raw, &KeyPath::parse(&key)?) {
                        Some(v) => v,
                        None => {
                            eprintln!("{key}: not set in {}", path.display());
                            return Ok(ExitCode::from(1));
                        }
                    }
                }
            };
            match value {
                Value::String(s) => println!("{s}"),
                other => println!("{}", serde_json::to_string_pretty(&other)?),
            }
        }
        ConfigCommand::Set { path: key, value } => {
            let mut raw = read(&path)?;
            let key_path = KeyPath::parse(&key)?;
            pincer_config::set(&mut raw, &key_path, pincer_config::parse_cli_value(&value))?;
            pincer_config::save(&path, &raw, env)?;
            println!("{key} set in {}", path.display());
        }
        ConfigCommand::Unset { path: key } => {
            let mut raw = read(&path)?;
            let key_path = KeyPath::parse(&key)?;
            if pincer_config::unset(&mut raw, &key_path).is_none() {
                eprintln!("{key}: not set in {}; nothing changed", path.display());
                return Ok(ExitCode::SUCCESS);
            }
            pincer_config::save(&path, &raw, env)?;
            println!("{key} removed from {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The file as written, or an empty document when there is none.
fn read(path: &Path) -> Result<Value> {
    Ok(pincer_config::read_raw(path)?.unwrap_or_else(|| Value::Object(Default::default())))
}
